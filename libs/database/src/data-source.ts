import { DataSource, EntitySchema, MixedList } from 'typeorm';
import type { MigrationInterface } from 'typeorm';
import type { PostgresConnectionOptions } from 'typeorm/driver/postgres/PostgresConnectionOptions';
import { needsPrimaryResolution, parseDatabaseUrl } from './database-url';
import { baseClientConfig, failoverClientClass } from './failover-client';

export type MigrationClass = new () => MigrationInterface;
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own entity list type
export type EntityList = MixedList<Function | string | EntitySchema>;

export interface DataSourceSettings {
  /**
   * postgres:// URL (DATABASE_URL); several hosts with `target_session_attrs=read-write` for a
   * replicated PostgreSQL (`postgres://u@h1:5432,h2:5432/db?target_session_attrs=read-write`):
   * the pool then connects to whichever host is the writable primary (failover-client.ts).
   */
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
    ...connectionOptions(settings.url),
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

/**
 * How TypeORM reaches the server: a single-host URL as is; a multi-host or read-write URL split
 * into its parts (TypeORM and pg parse one host only) with the pool's Client class replaced by one
 * that finds the writable primary on every new connection.
 */
function connectionOptions(
  url: string,
): Pick<
  PostgresConnectionOptions,
  'url' | 'host' | 'port' | 'username' | 'password' | 'database' | 'extra'
> {
  const parsed = parseDatabaseUrl(url);
  if (!needsPrimaryResolution(parsed)) return { url };
  const first = parsed.hosts[0];
  const base = baseClientConfig(parsed);
  return {
    host: first.host,
    port: first.port,
    ...(parsed.user === undefined ? {} : { username: parsed.user }),
    ...(parsed.password === undefined ? {} : { password: parsed.password }),
    ...(parsed.database === undefined ? {} : { database: parsed.database }),
    // pg-pool takes `Client` and TCP keep-alive from the pool options TypeORM passes through.
    extra: {
      Client: failoverClientClass(parsed),
      keepAlive: base.keepAlive,
      ...('ssl' in base ? { ssl: base.ssl } : {}),
    },
  };
}
