import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The generic transactional outbox and inbox (DESIGN.md guarantee 3) that every saga uses:
 * - `outbox`: messages written in the same transaction as the state change they announce;
 *   a relay publishes unpublished rows in `sequence` order and stamps `published_at`. `id` is the
 *   CloudEvents `ce_id`, stable across redelivery; `sequence` orders rows per aggregate
 *   (and globally); `attempts` counts failed publications (poison messages).
 *   Trap for the relay: a sequence is taken at INSERT, not at COMMIT, so a row with a lower
 *   sequence can become visible after a higher one. Select `WHERE published_at IS NULL`, never
 *   "sequence > last published".
 * - `inbox`: one row per (consumer, message id) processed, so redelivery is harmless.
 */
export class OutboxInbox1767225600000 implements MigrationInterface {
  readonly name = 'OutboxInbox1767225600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE outbox (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        topic text NOT NULL,
        message_key text NOT NULL,
        headers jsonb NOT NULL DEFAULT '{}'::jsonb,
        payload jsonb NOT NULL,
        aggregate_id text NOT NULL,
        sequence bigserial NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        published_at timestamptz NULL
      )`);
    await queryRunner.query(
      `CREATE INDEX outbox_unpublished_idx ON outbox (sequence) WHERE published_at IS NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX outbox_unpublished_aggregate_idx ON outbox (aggregate_id, sequence)
         WHERE published_at IS NULL`,
    );
    await queryRunner.query(`
      CREATE TABLE inbox (
        consumer text NOT NULL,
        message_id text NOT NULL,
        processed_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (consumer, message_id)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS inbox`);
    await queryRunner.query(`DROP TABLE IF EXISTS outbox`);
  }
}
