import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The payment sagas (DESIGN.md "Sagas"):
 * - `payments`: one row per payment, the decider's state (jsonb) and its version; updated with an
 *   optimistic version check under `SELECT … FOR UPDATE`. `client_order_id` (= payment id) is
 *   unique per endpoint (guarantee 1). `last_hint_at` rate-limits status-check hints.
 * - `payment_history`: append-only, one row per event, in version order. `event_id` is the
 *   CloudEvents `ce_id` the event was first published with, so a re-published event keeps it.
 * - `commands`: command id → fingerprint of its body, for idempotency (same id + same body →
 *   re-emit; same id + other body → command-rejected).
 * - `gateway_requests`: every gateway request as first sent (a resend after not-sent must be
 *   byte-for-byte the same). `body.sealedCard` is ciphertext only the gateway-adapter can open; it
 *   is removed once the payment is settled (`sealed_card_purged_at`).
 * - `timers`: one row per (payment, kind), claimed with `FOR UPDATE SKIP LOCKED`; `attempts`
 *   counts failed firings.
 */
export class Payments1767312000000 implements MigrationInterface {
  readonly name = 'Payments1767312000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE payments (
        id uuid PRIMARY KEY,
        endpoint_id text NOT NULL,
        kind text NULL,
        status text NOT NULL,
        state jsonb NOT NULL,
        version integer NOT NULL,
        client_order_id text NOT NULL,
        last_hint_at timestamptz NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT payments_endpoint_client_order_uq UNIQUE (endpoint_id, client_order_id)
      )`);
    await queryRunner.query(`
      CREATE TABLE payment_history (
        payment_id uuid NOT NULL REFERENCES payments (id),
        version integer NOT NULL,
        event_id uuid NOT NULL UNIQUE,
        event_type text NOT NULL,
        event jsonb NOT NULL,
        command_id uuid NOT NULL,
        occurred_at timestamptz NOT NULL,
        PRIMARY KEY (payment_id, version)
      )`);
    await queryRunner.query(
      `CREATE INDEX payment_history_command_idx ON payment_history (command_id)`,
    );
    await queryRunner.query(`
      CREATE TABLE commands (
        command_id uuid PRIMARY KEY,
        fingerprint text NOT NULL,
        payment_id uuid NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE gateway_requests (
        request_id uuid PRIMARY KEY,
        payment_id uuid NOT NULL REFERENCES payments (id),
        operation text NOT NULL,
        body jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        sealed_card_purged_at timestamptz NULL
      )`);
    await queryRunner.query(
      `CREATE INDEX gateway_requests_payment_idx ON gateway_requests (payment_id)`,
    );
    await queryRunner.query(`
      CREATE TABLE timers (
        payment_id uuid NOT NULL REFERENCES payments (id),
        kind text NOT NULL,
        due_at timestamptz NOT NULL,
        payload jsonb NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        PRIMARY KEY (payment_id, kind)
      )`);
    await queryRunner.query(`CREATE INDEX timers_due_idx ON timers (due_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS timers`);
    await queryRunner.query(`DROP TABLE IF EXISTS gateway_requests`);
    await queryRunner.query(`DROP TABLE IF EXISTS commands`);
    await queryRunner.query(`DROP TABLE IF EXISTS payment_history`);
    await queryRunner.query(`DROP TABLE IF EXISTS payments`);
  }
}
