import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The requests the adapter acknowledged on Kafka and has not answered yet. A request is handed
 * off to its endpoint's lane (the Kafka message is committed at once, so a slow endpoint never
 * holds a partition); this row is what makes that safe: a replica that dies with requests
 * waiting or in flight leaves their rows, and once the owner's lease has run out any replica
 * answers them `unknown` (the orchestrator then asks the gateway by status). Only what the answer
 * needs: ids, operation, endpoint and the trace headers to continue; no card data, no secrets.
 */
export class RequestHandoffs1769700000000 implements MigrationInterface {
  readonly name = 'RequestHandoffs1769700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE adapter_request_handoffs (
        request_id uuid NOT NULL,
        attempt integer NOT NULL,
        payment_id uuid NOT NULL,
        operation text NOT NULL,
        subject_request_id uuid,
        endpoint_id text NOT NULL,
        headers jsonb NOT NULL DEFAULT '{}'::jsonb,
        owner text NOT NULL,
        lease_until timestamptz NOT NULL,
        accepted_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (request_id, attempt)
      )`);
    await queryRunner.query(
      `CREATE INDEX adapter_request_handoffs_lease ON adapter_request_handoffs (lease_until)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE adapter_request_handoffs`);
  }
}
