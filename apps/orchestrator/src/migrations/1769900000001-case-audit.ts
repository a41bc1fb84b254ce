import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The admin audit records every step of a case (issue 33): opened, evidence added, proposed,
 * refresh requested, approved, proposal rejected, closed, reopened — a person's or the system's.
 * Such a step names its case (`case_id`) and carries what the person decided and saw (`detail`:
 * the decision, the amount of a "done", the evidence count); only an approval that the saga takes
 * sends a command, so the command columns may be empty.
 */
export class CaseAudit1769900000001 implements MigrationInterface {
  readonly name = 'CaseAudit1769900000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE admin_audit
        ALTER COLUMN command_id DROP NOT NULL,
        ALTER COLUMN command_type DROP NOT NULL,
        ADD COLUMN case_id uuid,
        ADD COLUMN detail jsonb`);
    await q.query(
      `CREATE INDEX admin_audit_case_idx ON admin_audit (case_id, at) WHERE case_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX admin_audit_case_idx`);
    await q.query(`DELETE FROM admin_audit WHERE case_id IS NOT NULL`);
    await q.query(`
      ALTER TABLE admin_audit
        DROP COLUMN detail,
        DROP COLUMN case_id,
        ALTER COLUMN command_type SET NOT NULL,
        ALTER COLUMN command_id SET NOT NULL`);
  }
}
