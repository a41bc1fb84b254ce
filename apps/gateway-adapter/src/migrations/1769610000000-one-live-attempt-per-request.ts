import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * At most one ordinary attempt of a request in the sent-requests ledger at a time, enforced by the
 * database: two adapter replicas claiming different attempts of one request at the same moment
 * (a redelivered attempt next to its not-sent resend, across a consumer-group rebalance) both
 * passed the "no other attempt" check before either committed, and both would have sent. The
 * orchestrator's one repeat after no trace (attempt 1000 and above) is outside: it is claimed past
 * the earlier attempt on purpose, and its own row still refuses a second copy of it.
 */
export class OneLiveAttemptPerRequest1769610000000 implements MigrationInterface {
  readonly name = 'OneLiveAttemptPerRequest1769610000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE UNIQUE INDEX adapter_sent_requests_one_attempt
         ON adapter_sent_requests (request_id) WHERE attempt < 1000`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX adapter_sent_requests_one_attempt`);
  }
}
