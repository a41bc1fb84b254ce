import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Close reports (issue #35 item 3): each merchant day's tie-out against the gateway, one row per
 * version. A version starts `reconciling` with the reconciliation run (`run_id`) of the merchant's
 * day; once the run completed it is written once — `closed` or `open-with-exceptions`, its totals
 * per currency and type (ours, the gateway's, the differences), its lines (one per operation) and
 * its exceptions — and never changed again: a later settlement (a case closed, an unknown settled)
 * makes the next version, the older ones are kept.
 */
export class DayCloseReports1769910000000 implements MigrationInterface {
  readonly name = 'DayCloseReports1769910000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE day_close_reports (
        endpoint_id text NOT NULL,
        day date NOT NULL,
        version integer NOT NULL CHECK (version >= 1),
        run_id uuid NOT NULL UNIQUE,
        time_zone text NOT NULL,
        from_at timestamptz NOT NULL,
        to_at timestamptz NOT NULL,
        state text NOT NULL CHECK (state IN ('reconciling', 'closed', 'open-with-exceptions')),
        trigger text NOT NULL,
        requested_by text NOT NULL,
        started_at timestamptz NOT NULL,
        completed_at timestamptz,
        totals jsonb,
        lines jsonb,
        exceptions jsonb,
        PRIMARY KEY (endpoint_id, day, version),
        FOREIGN KEY (endpoint_id, day) REFERENCES day_closes (endpoint_id, day)
      )`);
    await q.query(
      `CREATE INDEX day_close_reports_reconciling ON day_close_reports (state) WHERE state = 'reconciling'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE day_close_reports`);
  }
}
