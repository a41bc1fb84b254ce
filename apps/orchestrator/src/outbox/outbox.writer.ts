import { SEALED_CARD_FIELDS } from '@payments/contracts';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { OutboxEntity } from '../persistence/entities';
import type { OutboxRow } from './outbox-rows';

/** The channel the outbox relay LISTENs on; NOTIFY is delivered when the writer commits. */
export const OUTBOX_CHANNEL = 'orchestrator_outbox';

/**
 * The one writer of the `outbox` table (the relay only reads and stamps it): rows in the caller's
 * transaction, a NOTIFY to wake the relay at commit, and the purge of sealed cards from rows
 * already published.
 */
@Injectable()
export class OutboxWriter {
  async enqueue(tx: EntityManager, rows: readonly OutboxRow[]): Promise<void> {
    if (rows.length === 0) return;
    // One multi-row INSERT (one round trip however many rows): PostgreSQL produces the VALUES rows
    // in list order and draws each row's `sequence` (bigserial) as it inserts it, so the sequence
    // follows the order of the rows given — the order of the history.
    await tx
      .createQueryBuilder()
      .insert()
      .into(OutboxEntity)
      .values(
        rows.map((row) => ({
          id: row.id,
          topic: row.topic,
          messageKey: row.key,
          headers: row.headers,
          payload: row.payload,
          aggregateId: row.aggregateId,
        })),
      )
      .updateEntity(false)
      .execute();
    // Raw SQL: NOTIFY is a PostgreSQL function call, not a table operation.
    await tx.query(`SELECT pg_notify($1, '')`, [OUTBOX_CHANNEL]);
  }

  /**
   * Drops the sealed cards (SEALED_CARD_FIELDS) from the aggregate's rows already published
   * (unpublished rows still need them: the adapter opens them).
   */
  async purgeSealedCards(tx: EntityManager, aggregateId: string): Promise<void> {
    // Raw SQL: jsonb `-` (remove keys) and `?|` (has any key) have no TypeORM equivalent.
    await tx.query(
      `UPDATE outbox SET payload = payload - $2::text[]
        WHERE aggregate_id = $1 AND published_at IS NOT NULL AND payload ?| $2::text[]`,
      [aggregateId, SEALED_CARD_FIELDS],
    );
  }
}
