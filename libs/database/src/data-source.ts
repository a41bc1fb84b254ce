import { DataSource, EntitySchema, MixedList } from 'typeorm';
import type { MigrationInterface } from 'typeorm';

export type MigrationClass = new () => MigrationInterface;
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own entity list type
export type EntityList = MixedList<Function | string | EntitySchema>;

export interface DataSourceSettings {
  /** postgres:// URL (DATABASE_URL). */
  readonly url: string;
  /** Connections in the pool (DATABASE_POOL_SIZE); runMigrations needs at least 2. */
  readonly poolSize: number;
  /** Migration classes, oldest first (timestamped names, e.g. `OutboxInbox1767225600000`). */
  readonly migrations?: readonly MigrationClass[];
  readonly entities?: EntityList;
  /** Shown in pg_stat_activity, e.g. 'orchestrator'. */
  readonly applicationName: string;
}

/** The name of the table TypeORM records applied migrations in. */
export const MIGRATIONS_TABLE = 'migrations';

/**
 * A TypeORM DataSource for PostgreSQL with schema changes only through reviewed migrations
 * (`synchronize: false`, STYLE.md practice 8) and never implicitly at connect
 * (`migrationsRun: false`): migrations run through `runMigrations`, under an advisory lock.
 */
export function createDataSource(settings: DataSourceSettings): DataSource {
  return new DataSource({
    type: 'postgres',
    url: settings.url,
    applicationName: settings.applicationName,
    poolSize: settings.poolSize,
    entities: settings.entities ?? [],
    migrations: [...(settings.migrations ?? [])],
    migrationsTableName: MIGRATIONS_TABLE,
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: false,
    dropSchema: false,
    logging: false,
  });
}
