import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Admin tokens created through the admin API (`payments tokens create`), beside the configured
 * ones of ADMIN_TOKENS: the SHA-256 of the token only (the token itself is printed once and never
 * stored), who it names, its role and scope, and when and by whom it was created and revoked. The
 * guard reads the row on every request, so a revocation holds from its commit.
 */
export class AdminTokens1769860000000 implements MigrationInterface {
  readonly name = 'AdminTokens1769860000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE admin_tokens (
        id uuid PRIMARY KEY,
        sha256 char(64) NOT NULL UNIQUE,
        name text NOT NULL,
        role text NOT NULL CHECK (role IN ('viewer', 'operator', 'approver')),
        scope jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        created_by text NOT NULL,
        revoked_at timestamptz,
        revoked_by text
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE admin_tokens`);
  }
}
