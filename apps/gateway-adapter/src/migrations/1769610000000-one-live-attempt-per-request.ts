import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * At most one ordinary attempt of a request in the sent-requests ledger at a time, enforced by the
 * database: two adapter replicas claiming different attempts of one request at the same moment
 * (a redelivered attempt next to its not-sent resend, across a consumer-group rebalance) both
 * passed the "no other attempt" check before either committed, and both would have sent. Attempts
 * the orchestrator sends past an earlier one on purpose (`afterNoTrace`: the one repeat after no
 * trace, a card reference asked again) are marked `deliberate` and outside the index; the primary
 * key still refuses a second copy of each.
 */
export class OneLiveAttemptPerRequest1769610000000 implements MigrationInterface {
  readonly name = 'OneLiveAttemptPerRequest1769610000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Attempts the orchestrator sends past an earlier one on purpose (afterNoTrace) are marked.
    await queryRunner.query(
      `ALTER TABLE adapter_sent_requests ADD COLUMN deliberate boolean NOT NULL DEFAULT false`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX adapter_sent_requests_one_attempt
         ON adapter_sent_requests (request_id) WHERE NOT deliberate`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX adapter_sent_requests_one_attempt`);
    await queryRunner.query(`ALTER TABLE adapter_sent_requests DROP COLUMN deliberate`);
  }
}
