import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The admin API's audit of dead-letter replays: one row per replayed record — who (token name and
 * role), when, why, which dead letter (`<topic>/<partition>/<offset>`), where it went and its key.
 * A replay concerns a Kafka record, not a saga, so it has its own table beside `admin_audit`.
 * Append-only; read by time.
 */
export class DeadLetterReplays1769800000000 implements MigrationInterface {
  readonly name = 'DeadLetterReplays1769800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE dead_letter_replays (
        id uuid PRIMARY KEY,
        at timestamptz NOT NULL,
        actor text NOT NULL,
        role text NOT NULL,
        reason text NOT NULL,
        dead_letter text NOT NULL,
        replayed_to text NOT NULL,
        record_key text
      )`);
    await q.query(`CREATE INDEX dead_letter_replays_at_idx ON dead_letter_replays (at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE dead_letter_replays`);
  }
}
