import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TOPICS } from '@payments/contracts';
import { DATABASE_HEALTH_CHECK, DatabaseModule } from '@payments/database';
import { getConsumerLivenessToken, KafkaBrokerHealthCheck, KafkaModule } from '@payments/kafka';
import { createLogger, LoggingModule, loggingOptions } from '@payments/logging';
import { HttpErrorFilter, ObservabilityModule, provideHealthChecks } from '@payments/observability';
import type { Logger } from 'pino';
import { GATEWAY_ADAPTER_CONFIG, GatewayAdapterConfig } from './config';
import { type Clock, systemClock } from '@payments/core';
import { GatewayEndpoints } from './application/gateway-endpoints';
import { GatewayRequestHandler } from './transport/kafka/gateway-request.handler';
import { GatewayRequestService } from './application/gateway-request.service';
import { ResultPublisher } from './application/result-publisher';
import { SentRequestsLedger } from './persistence/sent-requests.ledger';
import { RequestHandoffs } from './persistence/request-handoffs';
import { HandoffKeeper } from './application/handoff-keeper';
import { adapterMigrations } from './migrations';
import type { AdapterSecrets } from './secrets/credentials';
import { ADAPTER_CLOCK, CARD_OPENER, GATEWAY_ENDPOINTS } from './tokens';

export const SERVICE_NAME = 'gateway-adapter';
export const CONSUMER_GROUP = 'gateway-adapter';

/** Closes the gateway clients' connection pools after the consumer stopped. */
@Injectable()
class GatewayEndpointsCloser implements OnApplicationShutdown {
  constructor(@Inject(GATEWAY_ENDPOINTS) private readonly endpoints: GatewayEndpoints) {}
  async onApplicationShutdown(): Promise<void> {
    await this.endpoints.close();
  }
}

export interface AppModuleOptions {
  /** Reuse the boot logger (main.ts) or a test's capturing logger. */
  readonly logger?: Logger;
  readonly clock?: Clock;
}

/**
 * The gateway-adapter: consumes `payments.gateway.requests.v1` (group `gateway-adapter`), calls
 * the gateway through the signed client with per-endpoint limits and breaker, records mutating
 * sends in its ledger table, publishes `payments.gateway.results.v1`. Health: ready when the
 * broker and the database answer; live while the consumer runs.
 */
@Module({})
export class AppModule {
  static forRoot(
    config: GatewayAdapterConfig,
    secrets: AdapterSecrets,
    options: AppModuleOptions = {},
  ): DynamicModule {
    const logger = options.logger ?? createLogger(loggingOptions(SERVICE_NAME, config));
    const clock = options.clock ?? systemClock;
    return {
      module: AppModule,
      imports: [
        LoggingModule.forRoot({
          ...loggingOptions(SERVICE_NAME, config),
          logger,
        }),
        ObservabilityModule.forRoot({ service: SERVICE_NAME }),
        DatabaseModule.forRoot({
          url: config.database.url,
          poolSize: config.database.poolSize,
          migrations: adapterMigrations,
          applicationName: SERVICE_NAME,
          migrateOnBoot: config.database.migrateOnBoot,
        }),
        KafkaModule.forRoot({
          ...config.kafka, // replication, session/heartbeat, poison limits (libs/config kafkaVars)
          clientId: config.kafka.clientId ?? SERVICE_NAME,
          brokers: config.kafka.brokers,
          logger,
          topics: [TOPICS.gatewayResults],
          topicPartitions: config.kafka.topicPartitions,
          partitionsConsumedConcurrently: config.kafka.partitionsConsumedConcurrently,
        }),
        KafkaModule.forConsumer({ groupId: CONSUMER_GROUP, handlers: [GatewayRequestHandler] }),
      ],
      providers: [
        { provide: GATEWAY_ADAPTER_CONFIG, useValue: config },
        { provide: ADAPTER_CLOCK, useValue: clock },
        { provide: CARD_OPENER, useValue: secrets.cards },
        {
          provide: GATEWAY_ENDPOINTS,
          useFactory: () =>
            new GatewayEndpoints(secrets.endpoints, config.transport, clock, config.replicas),
        },
        GatewayEndpointsCloser,
        SentRequestsLedger,
        RequestHandoffs,
        ResultPublisher,
        HandoffKeeper,
        GatewayRequestService,
        GatewayRequestHandler,
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        ...provideHealthChecks({
          liveness: [getConsumerLivenessToken(CONSUMER_GROUP)],
          readiness: [KafkaBrokerHealthCheck, DATABASE_HEALTH_CHECK],
        }),
      ],
      exports: [GATEWAY_ADAPTER_CONFIG],
    };
  }
}
