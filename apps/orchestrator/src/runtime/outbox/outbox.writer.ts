import { SEALED_CARD_FIELDS } from '@payments/contracts';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  assembledStatement,
  runStatement,
  type StatementPart,
  withParts,
} from '../../persistence/sql';
import type { OutboxRow } from './outbox-rows';

/** The channel the outbox relay LISTENs on; NOTIFY is delivered when the writer commits. */
export const OUTBOX_CHANNEL = 'orchestrator_outbox';

/**
 * The one writer of the `outbox` table (the relay only reads and stamps it): rows in the caller's
 * transaction, a NOTIFY to wake the relay at commit, and the purge of sealed cards from rows
 * already published. Its SQL is fixed text; the saga runtime folds it into the statement that
 * writes a decision (`rowsPart`), other callers run it alone (`enqueue`).
 */
@Injectable()
export class OutboxWriter {
  async enqueue(tx: EntityManager, rows: readonly OutboxRow[]): Promise<void> {
    if (rows.length === 0) return;
    const { ctes, values, results } = withParts(0, [this.rowsPart(rows)]);
    const text = `WITH ${ctes}\nSELECT ${results.join(', ')}`;
    await runStatement(tx, assembledStatement('outbox', text), values);
  }

  /**
   * The rows (however many: one multi-row INSERT) and the NOTIFY (once, when there are rows), as
   * part of a statement. The rows go in as one jsonb array; PostgreSQL inserts them in array order
   * (ORDER BY its ordinality) and draws each row's `sequence` (bigserial) as it inserts it, so the
   * sequence follows the order of the rows given — the order of the history.
   */
  rowsPart(rows: readonly OutboxRow[]): StatementPart {
    return {
      ctes: (n, guard) => `outbox_rows AS (
  INSERT INTO outbox (id, topic, message_key, headers, payload, aggregate_id)
  SELECT r.id, r.topic, r.message_key, r.headers, r.payload, r.aggregate_id
    FROM ROWS FROM (jsonb_to_recordset($${n}::jsonb) AS (id uuid, topic text, message_key text,
         headers jsonb, payload jsonb, aggregate_id text))
         WITH ORDINALITY AS r(id, topic, message_key, headers, payload, aggregate_id, n)
   WHERE ${guard}
   ORDER BY r.n
  RETURNING 1),
outbox_notify AS (SELECT pg_notify($${n + 1}::text, '') FROM (SELECT 1 FROM outbox_rows LIMIT 1) AS any_row)`,
      values: [
        JSON.stringify(
          rows.map((row) => ({
            id: row.id,
            topic: row.topic,
            message_key: row.key,
            headers: row.headers,
            payload: row.payload,
            aggregate_id: row.aggregateId,
          })),
        ),
        OUTBOX_CHANNEL,
      ],
      result: '(SELECT count(*) FROM outbox_notify)::int AS outbox_notified',
    };
  }

  /**
   * Drops the sealed cards (SEALED_CARD_FIELDS) from the aggregate's rows already published
   * (unpublished rows still need them: the adapter opens them).
   */
  async purgeSealedCards(tx: EntityManager, aggregateId: string): Promise<void> {
    const { ctes, values, results } = withParts(0, [this.purgePart(aggregateId)]);
    await runStatement(
      tx,
      assembledStatement('outbox_purge', `WITH ${ctes}\nSELECT ${results.join(', ')}`),
      values,
    );
  }

  /** `purgeSealedCards` as part of a statement. */
  purgePart(aggregateId: string): StatementPart {
    return {
      // jsonb `-` (remove keys) and `?|` (has any key).
      ctes: (n, guard) => `outbox_purged AS (
  UPDATE outbox SET payload = payload - $${n + 1}::text[]
   WHERE aggregate_id = $${n}::text AND published_at IS NOT NULL AND payload ?| $${n + 1}::text[]
     AND ${guard}
  RETURNING 1)`,
      values: [aggregateId, SEALED_CARD_FIELDS],
      result: '(SELECT count(*) FROM outbox_purged)::int AS outbox_purged',
    };
  }
}
