import { Injectable } from '@nestjs/common';
import { retryOnFailover } from '@payments/database';
import { DataSource } from 'typeorm';

export interface SentRequestRecord {
  readonly requestId: string;
  readonly attempt: number;
  readonly operation: string;
  readonly paymentId: string;
  readonly endpointId: string;
  readonly clientOrderId: string;
}

export interface ClaimOptions {
  /** The orchestrator's deliberate repeat past an earlier attempt (see `claim`). */
  readonly afterNoTrace?: boolean;
}

/**
 * The claim's INSERT, its seven parameters numbered from `first` (claimValues' order), written
 * only where `guard` holds; it returns the row when written. The one text of the claim's rule,
 * whether it runs alone (`claim`) or inside the hand-off's statement (RequestHandoffs.accept).
 */
export function claimInsert(first: number, guard = 'true'): string {
  const [requestId, attempt, operation, paymentId, endpointId, clientOrderId, deliberate] =
    Array.from({ length: 7 }, (_, i) => `$${first + i}`);
  return `INSERT INTO adapter_sent_requests
         (request_id, attempt, operation, payment_id, endpoint_id, client_order_id, deliberate)
       SELECT ${requestId}::uuid, ${attempt}::int, ${operation}::text, ${paymentId}::uuid,
              ${endpointId}::text, ${clientOrderId}::text, ${deliberate}::boolean
       WHERE (${guard})
         AND (${deliberate}::boolean
              OR NOT EXISTS (SELECT 1 FROM adapter_sent_requests WHERE request_id = ${requestId}::uuid))
       ON CONFLICT DO NOTHING
       RETURNING request_id`;
}

/** The parameters of {@link claimInsert}, in its order. */
export function claimValues(record: SentRequestRecord, options: ClaimOptions = {}): unknown[] {
  return [
    record.requestId,
    record.attempt,
    record.operation,
    record.paymentId,
    record.endpointId,
    record.clientOrderId,
    options.afterNoTrace === true,
  ];
}

/**
 * "At most one send per intended operation" (DESIGN.md guarantee 2) across crashes and
 * redelivery. `claim` inserts the attempt's row in its own (auto-committed) statement before the
 * gateway call; it refuses when this attempt — or any other attempt of the same request — is
 * already recorded, because that one may have reached the gateway. `release` deletes the row
 * after a provably not-sent outcome so that a resend is allowed.
 */
const CLAIM = claimInsert(1);

@Injectable()
export class SentRequestsLedger {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * True when the row was written (the call may proceed); false when it may already be sent.
   * Atomic across replicas: a concurrent claim of another attempt that the NOT EXISTS check cannot
   * see yet waits on the one-attempt-per-request unique index and then conflicts (no row, false).
   * `afterNoTrace`: the orchestrator's one resend of a request the gateway showed no trace of
   * (operation-resent), or its re-ask of a request a repeat of which changes nothing (a lost
   * create-card-ref or get-card-info reply) — only this very attempt must not be in the ledger
   * yet, so a redelivery of the resend is still refused.
   */
  async claim(record: SentRequestRecord, options: ClaimOptions = {}): Promise<boolean> {
    // Across a failover the claim is re-run in place only when it provably was NOT applied (no
    // primary reachable, a standby refused it). A claim whose connection broke with its commit
    // unknown is NOT re-run: re-run, it would find its own committed row and answer "may already
    // be sent" — true to the letter, but for a request nobody sent. The error goes up instead;
    // the message's redelivery runs the whole hand-off again against what the database holds
    // (a committed claim is then seen as in flight and answered by an outcome check, never sent
    // twice). docs/design.md, "Database failover".
    const rows: unknown[] = await retryOnFailover(
      () => this.dataSource.query(CLAIM, claimValues(record, options)),
      ['not-applied'],
    );
    return rows.length === 1;
  }

  async release(requestId: string, attempt: number): Promise<void> {
    // A DELETE of one known row: re-running it after an unknown outcome changes nothing.
    await retryOnFailover(
      () =>
        this.dataSource.query(
          `DELETE FROM adapter_sent_requests WHERE request_id = $1 AND attempt = $2`,
          [requestId, attempt],
        ),
      ['not-applied', 'outcome-unknown'],
    );
  }
}
