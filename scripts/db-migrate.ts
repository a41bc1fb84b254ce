/**
 * `npm run db:migrate`: applies the orchestrator's pending migrations to DATABASE_URL under the
 * same advisory lock the apps take at boot, printing progress. Exit 0 when the schema is up to
 * date, 1 on failure, 78 on bad configuration. Runs with tsx (no Nest, so no decorator metadata
 * is needed).
 */
import { z } from 'zod';
import { commonVars, databaseVars, envVar, loadConfigOrExit } from '@payments/config';
import { createDataSource, runMigrations } from '@payments/database';
import { createLogger } from '@payments/logging';
import { orchestratorMigrations } from '../apps/orchestrator/src/migrations';

const shape = {
  version: envVar('APP_VERSION', z.string().min(1).default('0.1.0-dev')),
  log: commonVars,
  database: databaseVars,
};

async function main(): Promise<number> {
  const config = loadConfigOrExit('db-migrate', shape);
  const logger = createLogger({
    service: 'db-migrate',
    version: config.version,
    level: config.log.logLevel,
    pretty: config.log.logPretty,
  });
  const target = new URL(config.database.url);
  logger.info(`migrating ${target.host}${target.pathname} (orchestrator schema)`);
  const dataSource = createDataSource({
    url: config.database.url,
    poolSize: Math.max(2, Math.min(config.database.poolSize, 4)),
    migrations: orchestratorMigrations,
    applicationName: 'db-migrate',
  });
  try {
    await runMigrations(dataSource, logger);
    return 0;
  } catch (error) {
    logger.error({ err: error }, 'migration failed');
    return 1;
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  () => process.exit(1),
);
