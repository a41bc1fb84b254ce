import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TOPICS } from '@payments/contracts';
import { KafkaBrokerHealthCheck } from '@payments/kafka';
import { LoggingModule, loggingOptions } from '@payments/logging';
import { HttpErrorFilter, ObservabilityModule, provideHealthChecks } from '@payments/observability';
import type { Logger } from 'pino';
import { CallbackIngestService } from './application/callback-ingest.service';
import { callbackMetrics } from './application/metrics';
import { CallbackPublisher } from './application/publisher';
import { CALLBACK_METRICS, CONTROL_KEYS, HINT_LIMITER } from './application/tokens';
import { CALLBACK_INGEST_CONFIG, type CallbackIngestSettings } from './config';
import { CLOCK, type Clock, systemClock } from './domain/clock';
import { HintLimiter } from './domain/hint-limiter';
import { BrowserReturnController } from './transport/http/browser-return.controller';
import { GatewayCallbackController } from './transport/http/gateway-callback.controller';
import { EdgeKafkaModule } from './transport/kafka/edge-kafka.module';

export const SERVICE_NAME = 'callback-ingest';

export interface AppModuleOptions {
  /** Reuse the pino logger main.ts (or a test) created. */
  readonly logger?: Logger;
  /** Time source of the hint limiter and the received-at stamps (tests pass their own). */
  readonly clock?: Clock;
}

/**
 * callback-ingest: the gateway's server callbacks and the payer's browser return, verified and
 * published to payments.gateway.callbacks.v1. Logging, health (readiness = broker reachable),
 * metrics, the HTTP error filter.
 */
@Module({})
export class AppModule {
  static forRoot(settings: CallbackIngestSettings, options: AppModuleOptions = {}): DynamicModule {
    const { config, controlKeys } = settings;
    const clock = options.clock ?? systemClock;
    return {
      module: AppModule,
      imports: [
        LoggingModule.forRoot({
          ...loggingOptions(SERVICE_NAME, config),
          ...(options.logger ? { logger: options.logger } : {}),
          requestLog: config.http.requestLog,
        }),
        ObservabilityModule.forRoot({ service: SERVICE_NAME }),
        EdgeKafkaModule.forRoot({
          ...config.kafka, // replication, session/heartbeat, poison limits (libs/config kafkaVars)
          clientId: config.kafka.clientId ?? SERVICE_NAME,
          brokers: config.kafka.brokers,
          topicPartitions: config.kafka.topicPartitions,
          topics: [TOPICS.gatewayCallbacks],
          sendTimeoutMs: config.callbacks.publishTimeoutMs,
          startWaitMs: config.kafka.startWaitMs,
        }),
      ],
      controllers: [GatewayCallbackController, BrowserReturnController],
      providers: [
        { provide: CALLBACK_INGEST_CONFIG, useValue: config },
        { provide: CONTROL_KEYS, useValue: controlKeys },
        { provide: CLOCK, useValue: clock },
        { provide: CALLBACK_METRICS, useFactory: callbackMetrics },
        {
          provide: HINT_LIMITER,
          useFactory: () =>
            new HintLimiter(clock, config.callbacks.hintWindowMs, config.callbacks.hintCapacity),
        },
        CallbackPublisher,
        CallbackIngestService,
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        ...provideHealthChecks({ liveness: [], readiness: [KafkaBrokerHealthCheck] }),
      ],
      exports: [CALLBACK_INGEST_CONFIG],
    };
  }
}
