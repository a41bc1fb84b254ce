import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { DATABASE_HEALTH_CHECK, DatabaseModule } from '@payments/database';
import { LoggingModule } from '@payments/logging';
import { HttpErrorFilter, ObservabilityModule, provideHealthChecks } from '@payments/observability';
import type { Logger } from 'pino';
import { ORCHESTRATOR_CONFIG, OrchestratorConfig } from './config';
import { orchestratorMigrations } from './migrations';

export const SERVICE_NAME = 'orchestrator';

/**
 * The orchestrator's shell: logging, health and metrics, PostgreSQL with its migrations.
 * Kafka consumers, sagas and the outbox relay plug in here as they land.
 */
@Module({})
export class AppModule {
  static forRoot(config: OrchestratorConfig, logger?: Logger): DynamicModule {
    return {
      module: AppModule,
      imports: [
        LoggingModule.forRoot({
          service: SERVICE_NAME,
          version: config.version,
          level: config.log.logLevel,
          pretty: config.log.logPretty,
          logger,
        }),
        ObservabilityModule.forRoot({ service: SERVICE_NAME }),
        DatabaseModule.forRoot({
          url: config.database.url,
          poolSize: config.database.poolSize,
          migrations: orchestratorMigrations,
          applicationName: SERVICE_NAME,
          migrateOnBoot: config.database.migrateOnBoot,
        }),
      ],
      providers: [
        { provide: ORCHESTRATOR_CONFIG, useValue: config },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        ...provideHealthChecks({ liveness: [], readiness: [DATABASE_HEALTH_CHECK] }),
      ],
      exports: [ORCHESTRATOR_CONFIG],
    };
  }
}
