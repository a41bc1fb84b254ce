import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One saga runtime hosting a decider per flow: the card-payment tables become the
 * generic saga tables, and card payments their first flow.
 * - `payments` → `sagas` with a `flow` column; `client_order_id` is nullable (a saga that talks to
 *   no gateway, e.g. a schedule, has none) and stays unique per endpoint.
 * - `payment_history` → `saga_history`; `payment_id` → `saga_id` there and in `commands`,
 *   `gateway_requests` and `timers`.
 * - `timers` are keyed by (flow, saga id, kind).
 * Renames keep every row; existing rows are card payments.
 */
export class Sagas1767600000000 implements MigrationInterface {
  readonly name = 'Sagas1767600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE payments RENAME TO sagas`);
    await q.query(`ALTER TABLE sagas RENAME CONSTRAINT payments_pkey TO sagas_pkey`);
    await q.query(
      `ALTER TABLE sagas RENAME CONSTRAINT payments_endpoint_client_order_uq TO sagas_endpoint_client_order_uq`,
    );
    await q.query(`ALTER TABLE sagas ADD COLUMN flow text NOT NULL DEFAULT 'card-payment'`);
    await q.query(`ALTER TABLE sagas ALTER COLUMN flow DROP DEFAULT`);
    await q.query(`ALTER TABLE sagas ALTER COLUMN client_order_id DROP NOT NULL`);
    await q.query(`CREATE INDEX sagas_flow_status_idx ON sagas (flow, status)`);

    await q.query(`ALTER TABLE payment_history RENAME TO saga_history`);
    await q.query(`ALTER TABLE saga_history RENAME COLUMN payment_id TO saga_id`);
    await q.query(
      `ALTER TABLE saga_history RENAME CONSTRAINT payment_history_pkey TO saga_history_pkey`,
    );
    await q.query(
      `ALTER TABLE saga_history RENAME CONSTRAINT payment_history_event_id_key TO saga_history_event_id_key`,
    );
    await q.query(
      `ALTER TABLE saga_history RENAME CONSTRAINT payment_history_payment_id_fkey TO saga_history_saga_id_fkey`,
    );
    await q.query(`ALTER INDEX payment_history_command_idx RENAME TO saga_history_command_idx`);

    await q.query(`ALTER TABLE commands RENAME COLUMN payment_id TO saga_id`);

    await q.query(`ALTER TABLE gateway_requests RENAME COLUMN payment_id TO saga_id`);
    await q.query(
      `ALTER TABLE gateway_requests RENAME CONSTRAINT gateway_requests_payment_id_fkey TO gateway_requests_saga_id_fkey`,
    );
    await q.query(`ALTER INDEX gateway_requests_payment_idx RENAME TO gateway_requests_saga_idx`);

    await q.query(`ALTER TABLE timers RENAME COLUMN payment_id TO saga_id`);
    await q.query(
      `ALTER TABLE timers RENAME CONSTRAINT timers_payment_id_fkey TO timers_saga_id_fkey`,
    );
    await q.query(`ALTER TABLE timers ADD COLUMN flow text NOT NULL DEFAULT 'card-payment'`);
    await q.query(`ALTER TABLE timers ALTER COLUMN flow DROP DEFAULT`);
    await q.query(`ALTER TABLE timers DROP CONSTRAINT timers_pkey`);
    await q.query(
      `ALTER TABLE timers ADD CONSTRAINT timers_pkey PRIMARY KEY (flow, saga_id, kind)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE timers DROP CONSTRAINT timers_pkey`);
    await q.query(`ALTER TABLE timers DROP COLUMN flow`);
    await q.query(`ALTER TABLE timers ADD CONSTRAINT timers_pkey PRIMARY KEY (saga_id, kind)`);
    await q.query(
      `ALTER TABLE timers RENAME CONSTRAINT timers_saga_id_fkey TO timers_payment_id_fkey`,
    );
    await q.query(`ALTER TABLE timers RENAME COLUMN saga_id TO payment_id`);
    await q.query(`ALTER INDEX gateway_requests_saga_idx RENAME TO gateway_requests_payment_idx`);
    await q.query(
      `ALTER TABLE gateway_requests RENAME CONSTRAINT gateway_requests_saga_id_fkey TO gateway_requests_payment_id_fkey`,
    );
    await q.query(`ALTER TABLE gateway_requests RENAME COLUMN saga_id TO payment_id`);
    await q.query(`ALTER TABLE commands RENAME COLUMN saga_id TO payment_id`);
    await q.query(`ALTER INDEX saga_history_command_idx RENAME TO payment_history_command_idx`);
    await q.query(
      `ALTER TABLE saga_history RENAME CONSTRAINT saga_history_saga_id_fkey TO payment_history_payment_id_fkey`,
    );
    await q.query(
      `ALTER TABLE saga_history RENAME CONSTRAINT saga_history_event_id_key TO payment_history_event_id_key`,
    );
    await q.query(
      `ALTER TABLE saga_history RENAME CONSTRAINT saga_history_pkey TO payment_history_pkey`,
    );
    await q.query(`ALTER TABLE saga_history RENAME COLUMN saga_id TO payment_id`);
    await q.query(`ALTER TABLE saga_history RENAME TO payment_history`);
    await q.query(`DROP INDEX sagas_flow_status_idx`);
    await q.query(`ALTER TABLE sagas ALTER COLUMN client_order_id SET NOT NULL`);
    await q.query(`ALTER TABLE sagas DROP COLUMN flow`);
    await q.query(
      `ALTER TABLE sagas RENAME CONSTRAINT sagas_endpoint_client_order_uq TO payments_endpoint_client_order_uq`,
    );
    await q.query(`ALTER TABLE sagas RENAME CONSTRAINT sagas_pkey TO payments_pkey`);
    await q.query(`ALTER TABLE sagas RENAME TO payments`);
  }
}
