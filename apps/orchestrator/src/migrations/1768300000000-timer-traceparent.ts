import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tracing through timers: a timer keeps the W3C traceparent of the input that set it,
 * so that its firing continues that trace instead of starting a new one. Nullable: timers set
 * before this migration, and by inputs without a trace, fire as new traces.
 */
export class TimerTraceparent1768300000000 implements MigrationInterface {
  readonly name = 'TimerTraceparent1768300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE timers ADD COLUMN traceparent text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE timers DROP COLUMN traceparent`);
  }
}
