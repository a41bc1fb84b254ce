import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { LoggingModule } from '@payments/logging';
import { HttpErrorFilter, ObservabilityModule, provideHealthChecks } from '@payments/observability';
import type { Logger } from 'pino';
import { GATEWAY_ADAPTER_CONFIG, GatewayAdapterConfig } from './config';

export const SERVICE_NAME = 'gateway-adapter';

/**
 * The gateway-adapter's shell: logging, health and metrics. The Kafka consumer of gateway requests and the signed gateway client plug in here as they land.
 */
@Module({})
export class AppModule {
  static forRoot(config: GatewayAdapterConfig, logger?: Logger): DynamicModule {
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
        { provide: GATEWAY_ADAPTER_CONFIG, useValue: config },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        // Kafka producer/consumer readiness joins here when libs/kafka lands.
        ...provideHealthChecks({ liveness: [], readiness: [] }),
      ],
      exports: [GATEWAY_ADAPTER_CONFIG],
    };
  }
}
