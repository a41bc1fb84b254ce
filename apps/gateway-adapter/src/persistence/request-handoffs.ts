import { Inject, Injectable } from '@nestjs/common';
import type { GatewayOperation } from '@payments/contracts';
import { type PreparedStatement, preparedStatement, retryOnFailover } from '@payments/database';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { GATEWAY_ADAPTER_CONFIG, type GatewayAdapterConfig } from '../config';
import {
  type ClaimOptions,
  claimInsert,
  claimValues,
  type SentRequestRecord,
} from './sent-requests.ledger';

/** What an answer to a handed-off request needs (GatewayResult's addressing fields). */
export interface HandoffAddress {
  readonly requestId: string;
  readonly attempt: number;
  readonly paymentId: string;
  readonly operation: GatewayOperation;
  readonly subjectRequestId?: string;
}

export interface HandoffRecord extends HandoffAddress {
  readonly endpointId: string;
  /** Trace and correlation headers the answer continues; nothing else of the message. */
  readonly headers: Readonly<Record<string, string>>;
}

interface HandoffRow {
  request_id: string;
  attempt: number;
  payment_id: string;
  operation: GatewayOperation;
  subject_request_id: string | null;
  endpoint_id: string;
  headers: Record<string, string>;
}

/** A statement of the hot path, prepared by name (libs/database `preparedStatement`). */
const hot = (label: string, text: string): PreparedStatement =>
  preparedStatement('adapter', label, text);

const HAND_OFF_TEXT = `INSERT INTO adapter_request_handoffs
         (request_id, attempt, payment_id, operation, subject_request_id, endpoint_id, headers,
          owner, lease_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, now() + make_interval(secs => $9::float8 / 1000))
       ON CONFLICT DO NOTHING
       RETURNING request_id`;

const HAND_OFF = hot('hand_off', HAND_OFF_TEXT);

/** The hand-off, and the ledger's claim (parameters 10–16) only where the hand-off was written. */
const HAND_OFF_AND_CLAIM = hot(
  'hand_off_claim',
  `WITH handed_off AS (${HAND_OFF_TEXT}),
       claimed AS (${claimInsert(10, 'EXISTS (SELECT 1 FROM handed_off)')})
     SELECT EXISTS (SELECT 1 FROM handed_off) AS handed_off,
            EXISTS (SELECT 1 FROM claimed) AS claimed`,
);

/**
 * The fence of a handed-off attempt, right before its gateway call: the row is still there, still
 * this owner's, its lease not run out (then extended from now). An UPDATE, not a read: it waits for
 * a sweep holding the row's lock and sees what it left, so an owner that stalled past its lease
 * never sends an attempt the sweep answered `unknown` (after which the orchestrator may already
 * have sent its deliberate resend).
 */
const FENCE = hot(
  'fence',
  `UPDATE adapter_request_handoffs
      SET lease_until = now() + make_interval(secs => $4::float8 / 1000)
    WHERE request_id = $1 AND attempt = $2 AND owner = $3 AND lease_until > now()
    RETURNING request_id`,
);

const REMOVE_ANSWERED = hot(
  'remove_answered',
  `DELETE FROM adapter_request_handoffs h
    USING unnest($1::uuid[], $2::int[]) AS f(request_id, attempt)
    WHERE h.request_id = f.request_id AND h.attempt = f.attempt`,
);

/**
 * `adapter_request_handoffs`: the requests acknowledged on Kafka and not answered yet, each owned
 * by the process that runs it under a lease it keeps renewing. `accept` is the once-per-attempt
 * hand-off (a redelivered message of an attempt already handed off is not run twice); `finish`
 * removes the row after the answer was published; `sweep` answers the rows whose owner stopped
 * renewing (it died) and removes them, one replica at a time (row locks, SKIP LOCKED).
 *
 * Removals are coalesced, not delayed: a `finish` with none in flight deletes its row at once;
 * the ones that come while a DELETE runs wait for it and then go together in one statement (up to
 * `GATEWAY_HANDOFF_FINISH_BATCH` rows). Each `finish` still resolves only once its own row is gone
 * (and rejects if its statement failed), so a crash leaves exactly the rows it left before: the
 * answers not yet removed, which the sweep answers unknown as ever. Under load this saves a
 * statement and a commit per answer; at a trickle it is the same one DELETE per answer.
 */
@Injectable()
export class RequestHandoffs {
  private readonly finishBatch: number;
  private readonly prepared: boolean;
  private waiting: Array<{
    readonly requestId: string;
    readonly attempt: number;
    readonly done: (error?: Error) => void;
  }> = [];
  private removing = false;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(GATEWAY_ADAPTER_CONFIG) config: Pick<GatewayAdapterConfig, 'handoff'>,
  ) {
    this.finishBatch = config.handoff.finishBatch;
    this.prepared = config.handoff.preparedStatements;
  }

  /**
   * Records the hand-off of an attempt: `handedOff` false when it was handed off already (a
   * redelivery while its owner runs it). With `claim`, the same statement also claims the attempt
   * in the sent-requests ledger (the ledger's own INSERT, only when the hand-off was recorded), so
   * hand-off and claim commit together: `claimed` is what `SentRequestsLedger.claim` would have
   * answered at the call, and the caller must release the row if the request is then not sent.
   */
  async accept(
    record: HandoffRecord,
    owner: string,
    leaseMs: number,
    claim?: { readonly record: SentRequestRecord; readonly options: ClaimOptions },
  ): Promise<{ readonly handedOff: boolean; readonly claimed: boolean }> {
    const values = [
      record.requestId,
      record.attempt,
      record.paymentId,
      record.operation,
      record.subjectRequestId ?? null,
      record.endpointId,
      JSON.stringify(record.headers),
      owner,
      leaseMs,
    ];
    // Re-run across a failover only when provably not applied (SentRequestsLedger.claim says
    // why an unknown outcome is not re-run in place: the redelivery re-runs it instead).
    if (claim === undefined) {
      const rows = await retryOnFailover(() => this.run(HAND_OFF, values), ['not-applied']);
      return { handedOff: rows.length === 1, claimed: false };
    }
    const [row] = await retryOnFailover(
      () =>
        this.run<{ handed_off: boolean; claimed: boolean }>(HAND_OFF_AND_CLAIM, [
          ...values,
          ...claimValues(claim.record, claim.options),
        ]),
      ['not-applied'],
    );
    return { handedOff: row?.handed_off === true, claimed: row?.claimed === true };
  }

  /**
   * True when `owner` still holds the attempt (its row, its lease not run out; the lease extended
   * from now): the gateway call may go out. False: the sweep answered it, or is answering it, or
   * will (the lease ran out), so it must not be sent.
   */
  async fence(
    requestId: string,
    attempt: number,
    owner: string,
    leaseMs: number,
  ): Promise<boolean> {
    const rows = await this.run(FENCE, [requestId, attempt, owner, leaseMs]);
    return rows.length === 1;
  }

  /**
   * True when the attempt is handed off (an owner runs it, or the sweep will answer it) or in the
   * sent-requests ledger (it may have been sent): a redelivered message of it must not be answered
   * by the adapter (queue full, unknown endpoint), since that answer could reach the orchestrator
   * before the real one and read as "not sent".
   */
  async taken(requestId: string, attempt: number): Promise<boolean> {
    const [row] = await this.dataSource.query<Array<{ taken: boolean }>>(
      `SELECT EXISTS (SELECT 1 FROM adapter_request_handoffs WHERE request_id = $1 AND attempt = $2)
           OR EXISTS (SELECT 1 FROM adapter_sent_requests WHERE request_id = $1 AND attempt = $2)
           AS taken`,
      [requestId, attempt],
    );
    return row?.taken === true;
  }

  /** Removes an answered attempt's row; resolves once the statement that removed it committed. */
  finish(requestId: string, attempt: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({
        requestId,
        attempt,
        done: (error) => (error === undefined ? resolve() : reject(error)),
      });
      if (!this.removing) void this.removeWaiting();
    });
  }

  private async removeWaiting(): Promise<void> {
    this.removing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, this.finishBatch);
        try {
          await this.run(REMOVE_ANSWERED, [
            batch.map((f) => f.requestId),
            batch.map((f) => f.attempt),
          ]);
          for (const f of batch) f.done();
        } catch (error) {
          const failure = error instanceof Error ? error : new Error(String(error));
          for (const f of batch) f.done(failure);
        }
      }
    } finally {
      this.removing = false;
    }
  }

  /**
   * Runs a statement of the hot path (a hand-off, a removal): prepared on the pool's connection
   * (GATEWAY_PREPARED_STATEMENTS, the default), else through TypeORM as any other statement.
   */
  private async run<Row = unknown>(stmt: PreparedStatement, values: unknown[]): Promise<Row[]> {
    if (!this.prepared) return this.dataSource.query<Row[]>(stmt.text, values);
    const pool = (this.dataSource.driver as PostgresDriver).master as Pool;
    const result = await pool.query({ name: stmt.name, text: stmt.text, values });
    return result.rows as Row[];
  }

  /** Extends the lease of the given rows of `owner` (the ones it still runs). */
  async renew(
    owner: string,
    live: readonly { readonly requestId: string; readonly attempt: number }[],
    leaseMs: number,
  ): Promise<void> {
    if (live.length === 0) return;
    await this.dataSource.query(
      `UPDATE adapter_request_handoffs h
          SET lease_until = now() + make_interval(secs => $4::float8 / 1000)
         FROM unnest($2::uuid[], $3::int[]) AS l(request_id, attempt)
        WHERE h.owner = $1 AND h.request_id = l.request_id AND h.attempt = l.attempt`,
      [owner, live.map((l) => l.requestId), live.map((l) => l.attempt), leaseMs],
    );
  }

  /**
   * Answers up to `limit` rows whose lease ran out with `answer` (publish), then removes them, in
   * one transaction holding their row locks: another replica's sweep skips them meanwhile, and a
   * failed answer leaves them for the next round. Returns how many were answered.
   */
  async sweep(limit: number, answer: (record: HandoffRecord) => Promise<void>): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const rows: HandoffRow[] = await manager.query(
        `SELECT request_id, attempt, payment_id, operation, subject_request_id, endpoint_id, headers
           FROM adapter_request_handoffs
          WHERE lease_until < now()
          ORDER BY lease_until
          LIMIT $1
          FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      for (const row of rows) {
        await answer({
          requestId: row.request_id,
          attempt: row.attempt,
          paymentId: row.payment_id,
          operation: row.operation,
          ...(row.subject_request_id === null ? {} : { subjectRequestId: row.subject_request_id }),
          endpointId: row.endpoint_id,
          headers: row.headers,
        });
        await manager.query(
          `DELETE FROM adapter_request_handoffs WHERE request_id = $1 AND attempt = $2`,
          [row.request_id, row.attempt],
        );
      }
      return rows.length;
    });
  }
}
