export { createDataSource, type MigrationClass, MIGRATIONS_TABLE } from './data-source';
export { runMigrations } from './migrate';
export { DATABASE_HEALTH_CHECK, DatabaseModule } from './database.module';
export { preparedStatement, type PreparedStatement } from './prepared-statement';
export { parseDatabaseUrl, type DatabaseUrl, type DatabaseHost } from './database-url';
export { newPgClient, NoWritablePrimaryError } from './failover-client';
export {
  classifyDatabaseError,
  DEFAULT_FAILOVER_RETRY,
  isDatabaseUnavailable,
  retryOnFailover,
  type DatabaseFailure,
  type FailoverRetryPolicy,
} from './retry';
