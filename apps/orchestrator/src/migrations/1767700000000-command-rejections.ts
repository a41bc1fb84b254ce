import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A command about a saga that does not exist creates nothing: its rejection is
 * published with version 0 and kept on the command's own row, so a redelivery of the same command
 * re-publishes it with the same ce_id (`rejection` = { eventId, event }).
 */
export class CommandRejections1767700000000 implements MigrationInterface {
  readonly name = 'CommandRejections1767700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE commands ADD COLUMN rejection jsonb NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE commands DROP COLUMN rejection`);
  }
}
