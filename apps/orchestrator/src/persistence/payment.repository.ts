import { Injectable } from '@nestjs/common';
import type { GatewayRequest, PaymentEvent } from '@payments/contracts';
import { initialState, type PaymentState } from '../domain';
import type { OutboxRow } from '../application/outbox-messages';
import type { Sql } from './database';

/** The channel the outbox relay LISTENs on; NOTIFY is delivered when the writer commits. */
export const OUTBOX_CHANNEL = 'orchestrator_outbox';

export interface PaymentRow {
  readonly id: string;
  readonly state: PaymentState;
  readonly version: number;
  readonly lastHintAt: Date | null;
}

export interface HistoryRow {
  readonly eventId: string;
  readonly event: PaymentEvent;
}

/** Timer kinds of the decider plus the app's own deferred resend of a not-sent request. */
export type StoredTimerKind = 'status-poll' | 'unknown-alert' | 'hold-expiry' | 'gateway-resend';

export interface TimerRow {
  readonly paymentId: string;
  readonly kind: StoredTimerKind;
  readonly dueAt: Date;
  readonly payload: unknown;
  readonly attempts: number;
}

export class ConcurrentUpdateError extends Error {
  constructor(paymentId: string, version: number) {
    super(`payment ${paymentId} is no longer at version ${version}`);
    this.name = 'ConcurrentUpdateError';
  }
}

/**
 * SQL of the saga tables. Every method takes the transaction's Sql; none opens its own, so a whole
 * decision (history, state, outbox, timers, inbox, command record) commits or rolls back together.
 */
@Injectable()
export class PaymentRepository {
  /** Records a processed message; false when it was processed before (inbox). */
  async recordInbox(sql: Sql, consumer: string, messageId: string): Promise<boolean> {
    const rows = await sql.rows(
      `INSERT INTO inbox (consumer, message_id) VALUES ($1, $2)
         ON CONFLICT DO NOTHING RETURNING message_id`,
      [consumer, messageId],
    );
    return rows.length === 1;
  }

  /** Creates the row of a payment a command names, if missing (so it can be locked). */
  async ensurePayment(sql: Sql, id: string, endpointId: string, now: Date): Promise<void> {
    await sql.rows(
      `INSERT INTO payments (id, endpoint_id, kind, status, state, version, client_order_id,
                             created_at, updated_at)
       VALUES ($1, $2, NULL, 'initial', $3::jsonb, 0, $5, $4, $4)
       ON CONFLICT (id) DO NOTHING`,
      // client_order_id = payment id (what the decider sends to the gateway).
      [id, endpointId, JSON.stringify(initialState), now, id],
    );
  }

  async lockPayment(sql: Sql, id: string): Promise<PaymentRow | undefined> {
    const [row] = await sql.rows<{
      id: string;
      state: PaymentState;
      version: number;
      last_hint_at: Date | null;
    }>(`SELECT id, state, version, last_hint_at FROM payments WHERE id = $1 FOR UPDATE`, [id]);
    if (!row) return undefined;
    return {
      id: row.id,
      // The snapshot's version is the row's (a placeholder row starts at 0).
      state: { ...row.state, version: row.version },
      version: row.version,
      lastHintAt: row.last_hint_at,
    };
  }

  /** Saves the new state; throws ConcurrentUpdateError if someone else moved the version on. */
  async savePayment(
    sql: Sql,
    id: string,
    state: PaymentState,
    expectedVersion: number,
    now: Date,
  ): Promise<void> {
    const changed = await sql.affected(
      `UPDATE payments
          SET state = $2::jsonb, version = $3, status = $4, kind = $5,
              endpoint_id = COALESCE($6, endpoint_id), updated_at = $7
        WHERE id = $1 AND version = $8`,
      [
        id,
        JSON.stringify(state),
        state.version,
        state.status,
        state.kind ?? null,
        state.merchant?.endpointId ?? null,
        now,
        expectedVersion,
      ],
    );
    if (changed !== 1) throw new ConcurrentUpdateError(id, expectedVersion);
  }

  async markHint(sql: Sql, id: string, now: Date): Promise<void> {
    await sql.affected(`UPDATE payments SET last_hint_at = $2 WHERE id = $1`, [id, now]);
  }

  async appendHistory(sql: Sql, rows: readonly HistoryRow[]): Promise<void> {
    for (const { eventId, event } of rows) {
      await sql.rows(
        `INSERT INTO payment_history
           (payment_id, version, event_id, event_type, event, command_id, occurred_at)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)`,
        [
          event.paymentId,
          event.version,
          eventId,
          event.type,
          JSON.stringify(event),
          event.commandId,
          event.occurredAt,
        ],
      );
    }
  }

  /**
   * The events a command caused, in version order, for re-emitting its outcome — without the
   * DUPLICATE_COMMAND_CONFLICT rejections a later, different command with the same id caused.
   */
  async eventsOfCommand(sql: Sql, commandId: string): Promise<HistoryRow[]> {
    const rows = await sql.rows<{ event_id: string; event: PaymentEvent }>(
      `SELECT event_id, event FROM payment_history
        WHERE command_id = $1
          AND NOT (event_type = 'command-rejected'
                   AND event->>'reason' = 'DUPLICATE_COMMAND_CONFLICT')
        ORDER BY payment_id, version`,
      [commandId],
    );
    return rows.map((r) => ({ eventId: r.event_id, event: r.event }));
  }

  async findCommand(sql: Sql, commandId: string): Promise<string | undefined> {
    const [row] = await sql.rows<{ fingerprint: string }>(
      `SELECT fingerprint FROM commands WHERE command_id = $1`,
      [commandId],
    );
    return row?.fingerprint;
  }

  async recordCommand(
    sql: Sql,
    commandId: string,
    fingerprint: string,
    paymentId: string,
    now: Date,
  ): Promise<void> {
    await sql.rows(
      `INSERT INTO commands (command_id, fingerprint, payment_id, recorded_at)
       VALUES ($1, $2, $3, $4)`,
      [commandId, fingerprint, paymentId, now],
    );
  }

  async saveGatewayRequest(sql: Sql, request: GatewayRequest, now: Date): Promise<void> {
    await sql.rows(
      `INSERT INTO gateway_requests (request_id, payment_id, operation, body, created_at)
       VALUES ($1, $2, $3, $4::jsonb, $5)`,
      [request.requestId, request.paymentId, request.operation, JSON.stringify(request), now],
    );
  }

  async findGatewayRequest(sql: Sql, requestId: string): Promise<GatewayRequest | undefined> {
    const [row] = await sql.rows<{ body: GatewayRequest }>(
      `SELECT body FROM gateway_requests WHERE request_id = $1`,
      [requestId],
    );
    return row?.body;
  }

  /**
   * Once the sale/preauth is settled nothing will resend it: drop the sealed card from the stored
   * request and from outbox rows already published (unpublished rows still need it).
   */
  async purgeSealedCards(sql: Sql, paymentId: string, now: Date): Promise<void> {
    await sql.affected(
      `UPDATE gateway_requests SET body = body - 'sealedCard', sealed_card_purged_at = $2
        WHERE payment_id = $1 AND body ? 'sealedCard'`,
      [paymentId, now],
    );
    await sql.affected(
      `UPDATE outbox SET payload = payload - 'sealedCard'
        WHERE aggregate_id = $1 AND published_at IS NOT NULL AND payload ? 'sealedCard'`,
      [paymentId],
    );
  }

  async upsertTimer(
    sql: Sql,
    paymentId: string,
    kind: StoredTimerKind,
    dueAt: Date,
    payload: unknown,
  ): Promise<void> {
    await sql.rows(
      `INSERT INTO timers (payment_id, kind, due_at, payload, attempts)
       VALUES ($1, $2, $3, $4::jsonb, 0)
       ON CONFLICT (payment_id, kind)
       DO UPDATE SET due_at = EXCLUDED.due_at, payload = EXCLUDED.payload, attempts = 0`,
      [paymentId, kind, dueAt, JSON.stringify(payload)],
    );
  }

  async deleteTimer(sql: Sql, paymentId: string, kind: StoredTimerKind): Promise<void> {
    await sql.affected(`DELETE FROM timers WHERE payment_id = $1 AND kind = $2`, [paymentId, kind]);
  }

  /**
   * Claims one due timer: locks it (skipping timers another worker holds) and deletes it in the
   * caller's transaction, so it fires once; a decision may schedule the same kind again.
   */
  async claimDueTimer(sql: Sql, now: Date): Promise<TimerRow | undefined> {
    const [row] = await sql.rows<{
      payment_id: string;
      kind: StoredTimerKind;
      due_at: Date;
      payload: unknown;
      attempts: number;
    }>(
      `DELETE FROM timers t
        USING (SELECT payment_id, kind FROM timers
                WHERE due_at <= $1
                ORDER BY due_at
                LIMIT 1
                FOR UPDATE SKIP LOCKED) due
        WHERE t.payment_id = due.payment_id AND t.kind = due.kind
        RETURNING t.payment_id, t.kind, t.due_at, t.payload, t.attempts`,
      [now],
    );
    return row
      ? {
          paymentId: row.payment_id,
          kind: row.kind,
          dueAt: row.due_at,
          payload: row.payload,
          attempts: row.attempts,
        }
      : undefined;
  }

  /** After a failed firing: count the attempt and try again later (the claim was rolled back). */
  async postponeTimer(
    sql: Sql,
    paymentId: string,
    kind: StoredTimerKind,
    dueAt: Date,
  ): Promise<void> {
    await sql.affected(
      `UPDATE timers SET attempts = attempts + 1, due_at = $3 WHERE payment_id = $1 AND kind = $2`,
      [paymentId, kind, dueAt],
    );
  }

  async enqueue(sql: Sql, rows: readonly OutboxRow[]): Promise<void> {
    // One INSERT per row, in order: `sequence` follows the order of the history.
    for (const row of rows) {
      await sql.rows(
        `INSERT INTO outbox (id, topic, message_key, headers, payload, aggregate_id)
         VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6)`,
        [
          row.id,
          row.topic,
          row.key,
          JSON.stringify(row.headers),
          JSON.stringify(row.payload),
          row.aggregateId,
        ],
      );
    }
    if (rows.length > 0) await sql.rows(`SELECT pg_notify($1, '')`, [OUTBOX_CHANNEL]);
  }
}
