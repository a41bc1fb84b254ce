import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `sagas (client_order_id)`: the admin API's search by merchant order id (the console's "find a
 * payment") names no endpoint, so the unique (endpoint_id, client_order_id) index cannot serve it.
 * Built CONCURRENTLY outside a transaction, as SagaTimeIndexes1769700000000 explains.
 */
const NAME = 'sagas_client_order_id_idx';

export class SagaOrderIndex1769720000000 implements MigrationInterface {
  readonly name = 'SagaOrderIndex1769720000000';
  readonly transaction = false;

  async up(q: QueryRunner): Promise<void> {
    const invalid = (await q.query(
      `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relname = $1 AND NOT i.indisvalid`,
      [NAME],
    )) as unknown[];
    if (invalid.length > 0) await q.query(`DROP INDEX CONCURRENTLY ${NAME}`);
    await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${NAME} ON sagas (client_order_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
  }
}
