import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The adapter's own table (DESIGN.md gives the adapter no database; this is why it has one now):
 * one row per mutating request attempt that may have reached the gateway, written and committed
 * BEFORE the call. A redelivered request (crash after sending, before the Kafka offset commit)
 * finds its row and is not sent again. No card data, no secrets: ids, operation, endpoint, time.
 */
export class AdapterSentRequests1767400000000 implements MigrationInterface {
  readonly name = 'AdapterSentRequests1767400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE adapter_sent_requests (
        request_id uuid NOT NULL,
        attempt integer NOT NULL,
        operation text NOT NULL,
        payment_id uuid NOT NULL,
        endpoint_id text NOT NULL,
        client_order_id text NOT NULL,
        sent_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (request_id, attempt)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE adapter_sent_requests`);
  }
}
