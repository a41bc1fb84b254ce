import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A reconciliation check counts the attempts our own adapter held back (not-sent with retryAt:
 * the status budget's bounded background share, which a run outpaces by design). They reached
 * nothing, so they do not spend RECONCILIATION_MAX_ATTEMPTS; before, a run of a few dozen checks
 * burnt its attempts on holds and reported checks unresolved that a wait would have answered.
 */
export class ReconciliationHolds1769870000000 implements MigrationInterface {
  readonly name = 'ReconciliationHolds1769870000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reconciliation_checks ADD COLUMN holds integer NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reconciliation_checks DROP COLUMN holds`);
  }
}
