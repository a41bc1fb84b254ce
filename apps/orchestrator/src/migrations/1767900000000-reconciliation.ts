import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reconciliation runs: a run per window (scheduled runs unique per window start), and
 * one check per saga of the window — its expectation (what we reported), the status request sent
 * for it (`request_id`, stable across resends), where it stands, and what it found.
 */
export class Reconciliation1767900000000 implements MigrationInterface {
  readonly name = 'Reconciliation1767900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reconciliation_runs (
        id uuid PRIMARY KEY,
        trigger text NOT NULL,
        requested_by text NOT NULL,
        window_from timestamptz NOT NULL,
        window_to timestamptz NOT NULL,
        endpoint_id text,
        status text NOT NULL,
        started_at timestamptz NOT NULL,
        completed_at timestamptz
      )`);
    await q.query(
      `CREATE UNIQUE INDEX reconciliation_runs_scheduled_uq ON reconciliation_runs (window_from)
        WHERE trigger = 'scheduled'::text`,
    );
    await q.query(`
      CREATE TABLE reconciliation_checks (
        run_id uuid NOT NULL,
        saga_id uuid NOT NULL,
        request_id uuid NOT NULL,
        flow text NOT NULL,
        endpoint_id text NOT NULL,
        expectation jsonb NOT NULL,
        state text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        next_at timestamptz NOT NULL,
        verdict text,
        gateway jsonb,
        PRIMARY KEY (run_id, saga_id)
      )`);
    await q.query(
      `CREATE UNIQUE INDEX reconciliation_checks_request_uq ON reconciliation_checks (request_id)`,
    );
    await q.query(
      `CREATE INDEX reconciliation_checks_due_idx ON reconciliation_checks (next_at)
        WHERE state <> 'done'::text`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE reconciliation_checks`);
    await q.query(`DROP TABLE reconciliation_runs`);
  }
}
