import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes for the queries that select sagas by time, which scanned the whole table:
 * - `sagas (updated_at)`: a reconciliation run picks the sagas changed since its window began;
 * - `sagas (created_at, id)`: the admin API's search pages newest first by (created_at, id).
 *
 * Built CONCURRENTLY, so a large live table keeps taking writes while they build; that cannot run
 * inside a transaction, hence `transaction = false`. A concurrent build that was interrupted leaves
 * an invalid index behind: it is dropped and built again.
 */
const INDEXES = [
  { name: 'sagas_updated_at_idx', columns: '(updated_at)' },
  { name: 'sagas_created_at_id_idx', columns: '(created_at, id)' },
] as const;

export class SagaTimeIndexes1769700000000 implements MigrationInterface {
  readonly name = 'SagaTimeIndexes1769700000000';
  readonly transaction = false;

  async up(q: QueryRunner): Promise<void> {
    for (const index of INDEXES) {
      const invalid = (await q.query(
        `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE c.relname = $1 AND NOT i.indisvalid`,
        [index.name],
      )) as unknown[];
      if (invalid.length > 0) await q.query(`DROP INDEX CONCURRENTLY ${index.name}`);
      await q.query(
        `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${index.name} ON sagas ${index.columns}`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of INDEXES) await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${index.name}`);
  }
}
