import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Cases (issue 33): one row per saga operation a person must decide (no trace, amount mismatch,
 * a reconciliation mismatch, an alert that lasted too long). `record` is the case as
 * domain/cases/case.ts keeps it: its evidence (references and copies of gateway answers, never
 * card data), the pending proposal, the decision and the audit of who did what with which
 * evidence before them. One case per (saga, request).
 */
export class Cases1769880000000 implements MigrationInterface {
  readonly name = 'Cases1769880000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE cases (
        id uuid PRIMARY KEY,
        flow text NOT NULL,
        saga_id uuid NOT NULL,
        endpoint_id text NOT NULL,
        request_id uuid NOT NULL,
        concern text NOT NULL,
        status text NOT NULL CHECK (status IN ('open', 'proposed', 'closed', 'reopened')),
        record jsonb NOT NULL,
        opened_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CONSTRAINT cases_saga_request_uq UNIQUE (saga_id, request_id)
      )`);
    await q.query(`CREATE INDEX cases_status_idx ON cases (status, endpoint_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE cases`);
  }
}
