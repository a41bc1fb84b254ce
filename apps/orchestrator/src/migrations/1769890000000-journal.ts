import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The journal (issue #35): double-entry lines of the outcome events that move, reserve, release
 * or hold money for an unknown outcome, written in the transaction of the event they post
 * (domain/journal/ has the rules and the chart of accounts). One entry per event (`event_id`, the
 * event's history id); a line is signed, debit positive, in integer minor units (bigint, never
 * a float). A deferred constraint trigger refuses, at commit, an entry whose lines do not sum to
 * zero per currency; an update or delete is refused (the journal is append-only).
 */
export class Journal1769890000000 implements MigrationInterface {
  readonly name = 'Journal1769890000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE journal_lines (
        event_id uuid NOT NULL,
        line_no smallint NOT NULL,
        saga_id text NOT NULL,
        flow text NOT NULL,
        event_type text NOT NULL,
        event_version integer NOT NULL,
        command_id text,
        request_id text,
        operation text,
        endpoint_id text NOT NULL,
        occurred_at timestamptz NOT NULL,
        posted_at timestamptz NOT NULL,
        account text NOT NULL,
        currency char(3) NOT NULL,
        amount bigint NOT NULL CHECK (amount <> 0),
        PRIMARY KEY (event_id, line_no)
      )`);
    await q.query(
      `CREATE INDEX journal_lines_endpoint_time ON journal_lines (endpoint_id, occurred_at)`,
    );
    await q.query(`CREATE INDEX journal_lines_saga ON journal_lines (saga_id, event_version)`);
    await q.query(`
      CREATE FUNCTION journal_entry_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM journal_lines WHERE event_id = NEW.event_id
                    GROUP BY currency HAVING sum(amount) <> 0) THEN
          RAISE EXCEPTION 'journal entry % does not balance', NEW.event_id
            USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE CONSTRAINT TRIGGER journal_entry_balanced AFTER INSERT ON journal_lines
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION journal_entry_balanced()`);
    await q.query(`
      CREATE FUNCTION journal_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'the journal is append-only' USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(`
      CREATE TRIGGER journal_append_only BEFORE UPDATE OR DELETE ON journal_lines
        FOR EACH ROW EXECUTE FUNCTION journal_append_only()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE journal_lines`);
    await q.query(`DROP FUNCTION journal_entry_balanced()`);
    await q.query(`DROP FUNCTION journal_append_only()`);
  }
}
