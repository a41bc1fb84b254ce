import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@payments/testing';
import { createDataSource, runMigrations } from '@payments/database';
import { orchestratorMigrations } from '../../migrations';
import { orchestratorEntities } from '.';

/**
 * The entities describe exactly the schema the migrations build: TypeORM's `schema:log` (the
 * queries `synchronize` would run) is empty on a freshly migrated database. A column whose name,
 * type, nullability or default drifts from its migration, or a missing index, key or constraint,
 * shows up here as an up query.
 */
describe('orchestrator entities and migrations (real PostgreSQL)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase('orch_entities');
    dataSource = createDataSource({
      url: db.url,
      poolSize: 2,
      migrations: orchestratorMigrations,
      entities: orchestratorEntities,
      applicationName: 'orchestrator-entities-test',
    });
    await runMigrations(dataSource, { info: () => undefined });
  });

  afterAll(async () => {
    try {
      if (dataSource?.isInitialized) await dataSource.destroy();
    } finally {
      await db?.drop();
    }
  });

  it('registers an entity for every orchestrator table', () => {
    expect(dataSource.entityMetadatas.map((m) => m.tableName).sort()).toEqual([
      'admin_audit',
      'commands',
      'dead_letter_replays',
      'gateway_requests',
      'inbox',
      'outbox',
      'reconciliation_checks',
      'reconciliation_runs',
      'saga_history',
      'sagas',
      'timers',
    ]);
  });

  it('needs no schema change after the migrations (schema:log is empty)', async () => {
    const sql = await dataSource.driver.createSchemaBuilder().log();
    expect(sql.upQueries.map((q) => q.query)).toEqual([]);
    expect(sql.downQueries.map((q) => q.query)).toEqual([]);
  });

  it('declares the partial indexes with their predicates (schema:log does not compare them)', async () => {
    const declared = dataSource.entityMetadatas.flatMap((m) =>
      m.indices.filter((i) => i.where).map((i) => ({ name: i.name, where: i.where })),
    );
    expect(declared.length).toBeGreaterThan(0);
    for (const { name, where } of declared) {
      const [row] = await dataSource.query<Array<{ indexdef: string }>>(
        `SELECT indexdef FROM pg_indexes WHERE indexname = $1`,
        [name],
      );
      expect(row?.indexdef).toContain(`WHERE (${where})`);
    }
  });
});
