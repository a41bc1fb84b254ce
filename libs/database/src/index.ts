export { createDataSource, type MigrationClass, MIGRATIONS_TABLE } from './data-source';
export { runMigrations } from './migrate';
export { DATABASE_HEALTH_CHECK, DatabaseModule } from './database.module';
export { preparedStatement, type PreparedStatement } from './prepared-statement';
