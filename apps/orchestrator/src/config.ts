import { z } from 'zod';
import {
  bool,
  commonVars,
  databaseVars,
  envVar,
  kafkaVars,
  port,
  ResolvedConfig,
} from '@payments/config';

/** Everything the orchestrator reads from its environment, validated once at boot. */
export const orchestratorConfigShape = {
  version: envVar('APP_VERSION', z.string().min(1).default('0.1.0-dev'), {
    description: 'the build version shown in logs',
  }),
  http: { port: envVar('HTTP_PORT', port(3001)) },
  log: commonVars,
  kafka: kafkaVars,
  database: {
    ...databaseVars,
    migrateOnBoot: envVar('DATABASE_MIGRATE_ON_BOOT', bool(true), {
      description: 'true to apply pending migrations at boot (one of true, false, 1, 0, yes, no)',
    }),
  },
};

export type OrchestratorConfig = ResolvedConfig<typeof orchestratorConfigShape>;

/** Injection token of the resolved OrchestratorConfig. */
export const ORCHESTRATOR_CONFIG = Symbol('ORCHESTRATOR_CONFIG');
