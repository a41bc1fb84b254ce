import type { DataSource } from 'typeorm';

/**
 * Key of the session-level advisory lock every migration runner of this database takes.
 * Any fixed bigint works as long as all runners agree; this one spells "paymigr1" in ASCII.
 */
export const MIGRATION_LOCK_KEY = '8097880439336235313';

/** How often a runner that found the lock taken asks again. */
const LOCK_RETRY_MS = 200;

/**
 * Takes the migration lock by asking with `pg_try_advisory_lock` until it is free, rather than
 * waiting inside `pg_advisory_lock`: a statement blocked there holds a snapshot, and a migration
 * that builds an index CONCURRENTLY waits for every older snapshot in the database — the waiting
 * runner and the building one would wait on each other. Between two tries nothing is held.
 */
async function takeLock(runner: { query(sql: string, params: unknown[]): Promise<unknown> }) {
  for (;;) {
    const rows = (await runner.query('SELECT pg_try_advisory_lock($1::bigint) AS taken', [
      MIGRATION_LOCK_KEY,
    ])) as Array<{ taken: boolean }>;
    if (rows[0]?.taken === true) return;
    await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
  }
}

/** The little a migration runner needs from a logger (pino, nestjs-pino's PinoLogger...). */
export interface MigrationLogger {
  info(message: string): void;
}

/**
 * Applies pending migrations under the advisory lock `MIGRATION_LOCK_KEY`, the pattern of the
 * Immich server: several replicas starting at once queue on the lock, the first applies the
 * migrations, the others then find nothing pending. The lock is held on a dedicated connection
 * (released in `finally`, and by PostgreSQL if that connection dies); TypeORM runs the
 * migrations on another pooled connection, each in its own transaction.
 * Initialises the DataSource if needed. Returns the names of the migrations it applied.
 */
export async function runMigrations(
  dataSource: DataSource,
  logger: MigrationLogger,
): Promise<string[]> {
  if (!dataSource.isInitialized) await dataSource.initialize();
  const lockRunner = dataSource.createQueryRunner();
  await lockRunner.connect();
  try {
    logger.info('migrations: waiting for the migration lock');
    await takeLock(lockRunner);
    try {
      logger.info('migrations: lock acquired, applying pending migrations');
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      for (const migration of applied) logger.info(`migrations: applied ${migration.name}`);
      logger.info(
        applied.length === 0
          ? 'migrations: schema already up to date'
          : `migrations: ${applied.length} applied`,
      );
      return applied.map((m) => m.name);
    } finally {
      await lockRunner.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await lockRunner.release();
  }
}
