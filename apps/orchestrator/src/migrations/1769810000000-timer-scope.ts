import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Timers per operation (issue 32 item 2): a timer is keyed by (flow, saga id, kind, scope), the
 * scope being the request id of the operation it belongs to ('' for a saga's own timers, e.g. a
 * hold's expiry). Two operations of one saga in flight at once (a capture held back and a card
 * reference held back) each keep their timers; before, the second `set` of a kind replaced the
 * first's and left it with none. Existing rows take the request id their payload names.
 */
export class TimerScope1769810000000 implements MigrationInterface {
  readonly name = 'TimerScope1769810000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE timers ADD COLUMN scope text NOT NULL DEFAULT ''`);
    await q.query(
      `UPDATE timers SET scope = payload->>'requestId' WHERE jsonb_typeof(payload->'requestId') = 'string'`,
    );
    await q.query(`ALTER TABLE timers DROP CONSTRAINT timers_pkey`);
    await q.query(
      `ALTER TABLE timers ADD CONSTRAINT timers_pkey PRIMARY KEY (flow, saga_id, kind, scope)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    // One timer per kind again: the earliest due of each kind is kept.
    await q.query(`
      DELETE FROM timers t USING timers e
       WHERE t.flow = e.flow AND t.saga_id = e.saga_id AND t.kind = e.kind
         AND (t.due_at, t.scope) > (e.due_at, e.scope)`);
    await q.query(`ALTER TABLE timers DROP CONSTRAINT timers_pkey`);
    await q.query(`ALTER TABLE timers DROP COLUMN scope`);
    await q.query(
      `ALTER TABLE timers ADD CONSTRAINT timers_pkey PRIMARY KEY (flow, saga_id, kind)`,
    );
  }
}
