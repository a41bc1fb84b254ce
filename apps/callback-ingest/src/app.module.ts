import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { LoggingModule } from '@payments/logging';
import { HttpErrorFilter, ObservabilityModule, provideHealthChecks } from '@payments/observability';
import type { Logger } from 'pino';
import { CALLBACK_INGEST_CONFIG, CallbackIngestConfig } from './config';

export const SERVICE_NAME = 'callback-ingest';

/**
 * callback-ingest's shell: logging, health and metrics, the HTTP error filter. The callback and browser-return controllers and the Kafka producer plug in here as they land.
 */
@Module({})
export class AppModule {
  static forRoot(config: CallbackIngestConfig, logger?: Logger): DynamicModule {
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
      ],
      providers: [
        { provide: CALLBACK_INGEST_CONFIG, useValue: config },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        // Kafka producer/consumer readiness joins here when libs/kafka lands.
        ...provideHealthChecks({ liveness: [], readiness: [] }),
      ],
      exports: [CALLBACK_INGEST_CONFIG],
    };
  }
}
