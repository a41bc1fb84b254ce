import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { OutboxRow } from '../application/outbox-messages';
import { InboxEntity, OutboxEntity } from './entities';

/** The channel the outbox relay LISTENs on; NOTIFY is delivered when the writer commits. */
export const OUTBOX_CHANNEL = 'orchestrator_outbox';

/** The generic `outbox` and `inbox` tables, in the caller's transaction. */
@Injectable()
export class OutboxRepository {
  /** Records a processed message; false when it was processed before (inbox). */
  async recordInbox(tx: EntityManager, consumer: string, messageId: string): Promise<boolean> {
    const inserted = await tx
      .createQueryBuilder()
      .insert()
      .into(InboxEntity)
      .values({ consumer, messageId })
      .orIgnore()
      .returning(['messageId'])
      .updateEntity(false)
      .execute();
    // ON CONFLICT DO NOTHING returns no row for a message seen before.
    return (inserted.raw as unknown[]).length === 1;
  }

  async enqueue(tx: EntityManager, rows: readonly OutboxRow[]): Promise<void> {
    // One INSERT per row, in order: `sequence` (bigserial) follows the order of the history.
    for (const row of rows) {
      await tx
        .createQueryBuilder()
        .insert()
        .into(OutboxEntity)
        .values({
          id: row.id,
          topic: row.topic,
          messageKey: row.key,
          headers: row.headers,
          payload: row.payload,
          aggregateId: row.aggregateId,
        })
        .updateEntity(false)
        .execute();
    }
    // Raw SQL: NOTIFY is a PostgreSQL function call, not a table operation.
    if (rows.length > 0) await tx.query(`SELECT pg_notify($1, '')`, [OUTBOX_CHANNEL]);
  }
}
