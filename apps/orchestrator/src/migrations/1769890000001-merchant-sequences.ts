import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Control totals (issue #35 item 2): `merchant_sequences`, one counter row per merchant endpoint,
 * the last `merchantSeq` given to its money events (taken and bumped at the end of the unit of
 * work that writes them, so a rollback gives its numbers back: no gaps); `merchant_money_events`,
 * each money event with its number, type, currency and amount, the source of a day's control
 * totals; `day_closes`, each merchant's closed days as their `day-closed` event stated them.
 */
export class MerchantSequences1769890000001 implements MigrationInterface {
  readonly name = 'MerchantSequences1769890000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE merchant_sequences (
        endpoint_id text PRIMARY KEY,
        last_seq bigint NOT NULL CHECK (last_seq >= 0)
      )`);
    await q.query(`
      CREATE TABLE merchant_money_events (
        endpoint_id text NOT NULL,
        merchant_seq bigint NOT NULL CHECK (merchant_seq >= 1),
        event_id uuid NOT NULL UNIQUE,
        saga_id text NOT NULL,
        flow text NOT NULL,
        event_type text NOT NULL,
        currency char(3) NOT NULL,
        minor bigint NOT NULL CHECK (minor >= 0),
        occurred_at timestamptz NOT NULL,
        PRIMARY KEY (endpoint_id, merchant_seq)
      )`);
    await q.query(
      `CREATE INDEX merchant_money_events_day ON merchant_money_events (endpoint_id, occurred_at)`,
    );
    await q.query(`
      CREATE TABLE day_closes (
        endpoint_id text NOT NULL,
        day date NOT NULL,
        close_id uuid NOT NULL UNIQUE,
        time_zone text NOT NULL,
        from_at timestamptz NOT NULL,
        to_at timestamptz NOT NULL,
        totals jsonb NOT NULL,
        count integer NOT NULL,
        last_seq bigint NOT NULL,
        closed_at timestamptz NOT NULL,
        closed_by text NOT NULL,
        PRIMARY KEY (endpoint_id, day)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE day_closes`);
    await q.query(`DROP TABLE merchant_money_events`);
    await q.query(`DROP TABLE merchant_sequences`);
  }
}
