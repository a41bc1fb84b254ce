import type { DataSource } from 'typeorm';

/**
 * Key of the session-level advisory lock every migration runner of this database takes.
 * Any fixed bigint works as long as all runners agree; this one spells "paymigr1" in ASCII.
 */
export const MIGRATION_LOCK_KEY = '8097880439336235313';

/** The little a migration runner needs from a logger (pino, nestjs-pino's PinoLogger...). */
export interface MigrationLogger {
  info(message: string): void;
}

/**
 * Applies pending migrations under `pg_advisory_lock(MIGRATION_LOCK_KEY)`, the pattern of the
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
    await lockRunner.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
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
