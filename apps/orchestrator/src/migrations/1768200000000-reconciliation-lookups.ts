import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Paid twice: a saga of a run may have two checks — `order`, the status of our own
 * order, and `client-order-id`, the status query by our client order id alone that shows another
 * order under it (domain/reconciliation/reconciliation.ts `CheckSubject`). Existing checks are `order` checks.
 */
export class ReconciliationLookups1768200000000 implements MigrationInterface {
  readonly name = 'ReconciliationLookups1768200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE reconciliation_checks ADD COLUMN subject text NOT NULL DEFAULT 'order'`,
    );
    await q.query(`ALTER TABLE reconciliation_checks DROP CONSTRAINT reconciliation_checks_pkey`);
    await q.query(
      `ALTER TABLE reconciliation_checks
         ADD CONSTRAINT reconciliation_checks_pkey PRIMARY KEY (run_id, saga_id, subject)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM reconciliation_checks WHERE subject <> 'order'`);
    await q.query(`ALTER TABLE reconciliation_checks DROP CONSTRAINT reconciliation_checks_pkey`);
    await q.query(
      `ALTER TABLE reconciliation_checks
         ADD CONSTRAINT reconciliation_checks_pkey PRIMARY KEY (run_id, saga_id)`,
    );
    await q.query(`ALTER TABLE reconciliation_checks DROP COLUMN subject`);
  }
}
