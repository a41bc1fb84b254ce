import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The admin API's audit: one row per operator action — who (token name and role),
 * when, what, on which saga, why, and the command it sent. Append-only; read by saga and by time.
 */
export class AdminAudit1767800000000 implements MigrationInterface {
  readonly name = 'AdminAudit1767800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE admin_audit (
        id uuid PRIMARY KEY,
        at timestamptz NOT NULL,
        actor text NOT NULL,
        role text NOT NULL,
        action text NOT NULL,
        saga_id uuid NOT NULL,
        flow text NOT NULL,
        reason text NOT NULL,
        command_id uuid NOT NULL,
        command_type text NOT NULL
      )`);
    await q.query(`CREATE INDEX admin_audit_saga_idx ON admin_audit (saga_id, at)`);
    await q.query(`CREATE INDEX admin_audit_at_idx ON admin_audit (at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE admin_audit`);
  }
}
