import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { assertTestDatabase, createTestDatabase, serverUrl, TestDatabase } from '@payments/testing';
import { orchestratorMigrations } from '.';
import { createDataSource, MIGRATIONS_TABLE, runMigrations } from '@payments/database';
import { DatabaseHealthCheck } from '@payments/observability';

async function query<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  assertTestDatabase(url);
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

const silent = { info: () => undefined };

describe('runMigrations (real PostgreSQL)', () => {
  let db: TestDatabase;
  const sources: DataSource[] = [];
  const open = (name: string) => {
    const ds = createDataSource({
      url: db.url,
      poolSize: 2,
      migrations: orchestratorMigrations,
      applicationName: name,
    });
    sources.push(ds);
    return ds;
  };

  beforeEach(async () => {
    db = await createTestDatabase('migrate');
  });

  afterEach(async () => {
    await Promise.all(
      sources.splice(0).map(async (ds) => {
        if (ds.isInitialized) await ds.destroy();
      }),
    );
    await db.drop();
  });

  it('applies the orchestrator migrations to an empty database', async () => {
    const before = await query<{ n: string }>(
      db.url,
      `SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public'`,
    );
    expect(Number(before[0].n)).toBe(0);

    const messages: string[] = [];
    const applied = await runMigrations(open('migrate-a'), { info: (m) => messages.push(m) });
    expect(applied).toEqual([
      'OutboxInbox1767225600000',
      'Payments1767312000000',
      'Sagas1767600000000',
      'CommandRejections1767700000000',
      'AdminAudit1767800000000',
      'Reconciliation1767900000000',
      'ReconciliationLookups1768200000000',
      'TimerTraceparent1768300000000',
      'SagaTimeIndexes1769700000000',
      'SagaOrderIndex1769720000000',
      'DeadLetterReplays1769800000000',
      'TimerScope1769810000000',
      'AdminTokens1769860000000',
      'ReconciliationHolds1769870000000',
      'Cases1769880000000',
      'Journal1769890000000',
      'MerchantSequences1769890000001',
      'CaseAudit1769900000001',
      'DayCloseReports1769910000000',
    ]);
    expect(messages).toContain('migrations: applied OutboxInbox1767225600000');
    expect(messages).toContain('migrations: applied Payments1767312000000');

    const tables = await query<{ table_name: string }>(
      db.url,
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      'admin_audit',
      'admin_tokens',
      'cases',
      'commands',
      'day_close_reports',
      'day_closes',
      'dead_letter_replays',
      'gateway_requests',
      'inbox',
      'journal_lines',
      'merchant_money_events',
      'merchant_sequences',
      MIGRATIONS_TABLE,
      'outbox',
      'reconciliation_checks',
      'reconciliation_runs',
      'saga_history',
      'sagas',
      'timers',
    ]);

    const outboxColumns = await query<{
      column_name: string;
      data_type: string;
      is_nullable: string;
    }>(
      db.url,
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns
        WHERE table_name = 'outbox' ORDER BY column_name`,
    );
    expect(
      Object.fromEntries(outboxColumns.map((c) => [c.column_name, c.data_type])),
    ).toMatchObject({
      id: 'uuid',
      topic: 'text',
      message_key: 'text',
      headers: 'jsonb',
      payload: 'jsonb',
      aggregate_id: 'text',
      sequence: 'bigint',
      created_at: 'timestamp with time zone',
      published_at: 'timestamp with time zone',
    });
    const indexes = await query<{ indexdef: string }>(
      db.url,
      `SELECT indexdef FROM pg_indexes WHERE tablename = 'outbox'`,
    );
    expect(indexes.map((i) => i.indexdef).join('\n')).toMatch(
      /\(sequence\) WHERE \(published_at IS NULL\)/,
    );

    // Sagas are found by time without scanning the table (reconciliation, the admin search); the
    // indexes were built concurrently and are valid.
    const sagaIndexes = await query<{ indexdef: string; valid: boolean }>(
      db.url,
      `SELECT pg_get_indexdef(i.indexrelid) AS indexdef, i.indisvalid AS valid
         FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid WHERE t.relname = 'sagas'`,
    );
    const defs = sagaIndexes.map((i) => i.indexdef).join('\n');
    expect(defs).toMatch(/sagas_updated_at_idx ON public\.sagas USING btree \(updated_at\)/);
    expect(defs).toMatch(/sagas_created_at_id_idx ON public\.sagas USING btree \(created_at, id\)/);
    expect(defs).toMatch(
      /sagas_client_order_id_idx ON public\.sagas USING btree \(client_order_id\)/,
    );
    expect(sagaIndexes.every((i) => i.valid)).toBe(true);

    // The tables work as the sagas will use them: ordered outbox, idempotent inbox.
    await query(
      db.url,
      `INSERT INTO outbox (topic, message_key, payload, aggregate_id) VALUES
         ('payments.events.v1', 'pay_1', '{"n":1}', 'pay_1'),
         ('payments.events.v1', 'pay_1', '{"n":2}', 'pay_1')`,
    );
    const rows = await query<{ payload: { n: number }; sequence: string; published_at: null }>(
      db.url,
      `SELECT payload, sequence, published_at FROM outbox WHERE published_at IS NULL ORDER BY sequence`,
    );
    expect(rows.map((r) => r.payload.n)).toEqual([1, 2]);
    expect(BigInt(rows[1].sequence)).toBeGreaterThan(BigInt(rows[0].sequence));
    await query(db.url, `INSERT INTO inbox (consumer, message_id) VALUES ('c', 'm1')`);
    await expect(
      query(db.url, `INSERT INTO inbox (consumer, message_id) VALUES ('c', 'm1')`),
    ).rejects.toThrow(/duplicate key/);

    // The readiness check passes on a live DataSource and fails, with a reason, on a closed one.
    const ds = sources[0];
    const check = new DatabaseHealthCheck(ds, 1000);
    await expect(check.check()).resolves.toBeUndefined();
    await ds.destroy();
    await expect(check.check()).rejects.toThrow('not connected');

    // A second run finds nothing to do.
    expect(await runMigrations(open('migrate-b'), silent)).toEqual([]);
  });

  it('lets two runners start at the same time without collision', async () => {
    const [a, b] = await Promise.all([
      runMigrations(open('migrate-concurrent-a'), silent),
      runMigrations(open('migrate-concurrent-b'), silent),
    ]);
    // Exactly one of them applied the migration; the other waited on the lock and found none.
    expect([...a, ...b]).toEqual([
      'OutboxInbox1767225600000',
      'Payments1767312000000',
      'Sagas1767600000000',
      'CommandRejections1767700000000',
      'AdminAudit1767800000000',
      'Reconciliation1767900000000',
      'ReconciliationLookups1768200000000',
      'TimerTraceparent1768300000000',
      'SagaTimeIndexes1769700000000',
      'SagaOrderIndex1769720000000',
      'DeadLetterReplays1769800000000',
      'TimerScope1769810000000',
      'AdminTokens1769860000000',
      'ReconciliationHolds1769870000000',
      'Cases1769880000000',
      'Journal1769890000000',
      'MerchantSequences1769890000001',
      'CaseAudit1769900000001',
      'DayCloseReports1769910000000',
    ]);
    const recorded = await query<{ name: string; n: string }>(
      db.url,
      `SELECT name, count(*) AS n FROM ${MIGRATIONS_TABLE} GROUP BY name`,
    );
    expect(recorded.sort((x, y) => x.name.localeCompare(y.name))).toEqual([
      { name: 'AdminAudit1767800000000', n: '1' },
      { name: 'AdminTokens1769860000000', n: '1' },
      { name: 'CaseAudit1769900000001', n: '1' },
      { name: 'Cases1769880000000', n: '1' },
      { name: 'CommandRejections1767700000000', n: '1' },
      { name: 'DayCloseReports1769910000000', n: '1' },
      { name: 'DeadLetterReplays1769800000000', n: '1' },
      { name: 'Journal1769890000000', n: '1' },
      { name: 'MerchantSequences1769890000001', n: '1' },
      { name: 'OutboxInbox1767225600000', n: '1' },
      { name: 'Payments1767312000000', n: '1' },
      { name: 'Reconciliation1767900000000', n: '1' },
      { name: 'ReconciliationHolds1769870000000', n: '1' },
      { name: 'ReconciliationLookups1768200000000', n: '1' },
      { name: 'SagaOrderIndex1769720000000', n: '1' },
      { name: 'Sagas1767600000000', n: '1' },
      { name: 'SagaTimeIndexes1769700000000', n: '1' },
      { name: 'TimerScope1769810000000', n: '1' },
      { name: 'TimerTraceparent1768300000000', n: '1' },
    ]);
    // The lock was released: nobody holds an advisory lock in this database any more (pg_locks
    // is server-wide: other databases, e.g. a running orchestrator's relay, may hold theirs).
    const locks = await query(
      db.url,
      `SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    expect(locks).toHaveLength(0);
  });
});

describe('createTestDatabase', () => {
  async function exists(name: string): Promise<boolean> {
    // Read-only look at the catalogue through the admin database (not a test database).
    const client = new Client({
      connectionString: serverUrl().replace(/\/[^/?]*(\?|$)/, '/postgres$1'),
    });
    await client.connect();
    try {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
        name,
      ]);
      return rowCount === 1;
    } finally {
      await client.end();
    }
  }

  it('creates a database whose name contains test, and drops it', async () => {
    const db = await createTestDatabase('Guard Check');
    expect(db.name).toMatch(/^payments_test_guard_check_[0-9a-f]{8}$/);
    expect(assertTestDatabase(db.url)).toBe(db.name);
    expect(await exists(db.name)).toBe(true);
    await db.drop();
    expect(await exists(db.name)).toBe(false);
  });
});
