import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TOPICS } from '@payments/contracts';
import { DATABASE_HEALTH_CHECK, DatabaseModule } from '@payments/database';
import {
  getConsumerLivenessToken,
  KafkaBrokerHealthCheck,
  type KafkaLogger,
  KafkaModule,
} from '@payments/kafka';
import { LoggingModule, loggingOptions } from '@payments/logging';
import { HttpErrorFilter, ObservabilityModule, provideHealthChecks } from '@payments/observability';
import type { Logger } from 'pino';
import { Clock, IdGenerator } from './application/clock';
import { PaymentSagaService } from './application/payment-saga.service';
import { PAYMENT_POLICY, policyFromConfig } from './application/policy';
import { ORCHESTRATOR_CONFIG, OrchestratorConfig } from './config';
import { PaymentQueryService } from './http/payment-query.service';
import { PaymentsController } from './http/payments.controller';
import { ORCHESTRATOR_HANDLERS } from './messaging/handlers';
import { orchestratorMigrations } from './migrations';
import { Database } from './persistence/database';
import { orchestratorEntities } from './persistence/entities';
import { OutboxRepository } from './persistence/outbox.repository';
import { PaymentRepository } from './persistence/payment.repository';
import { TimerRepository } from './persistence/timer.repository';
import { OutboxRelay } from './relay/outbox-relay';
import { TimerWorker } from './timers/timer-worker';

export const SERVICE_NAME = 'orchestrator';

function kafkaLogger(logger: Logger): KafkaLogger {
  const child = logger.child({ component: 'kafka' });
  return {
    debug: (fields, msg) => child.debug(fields, msg),
    info: (fields, msg) => child.info(fields, msg),
    warn: (fields, msg) => child.warn(fields, msg),
    error: (fields, msg) => child.error(fields, msg),
  };
}

/**
 * The orchestrator: PostgreSQL (sagas, outbox, inbox, timers), the `orchestrator` consumer group
 * (commands, gateway results, callbacks), the outbox relay, the timer worker and the read API.
 * Readiness: database and broker; liveness: the consumer group.
 */
@Module({})
export class AppModule {
  static forRoot(config: OrchestratorConfig, logger?: Logger): DynamicModule {
    const groupId = config.kafka.consumerGroup;
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
          migrations: orchestratorMigrations,
          entities: orchestratorEntities,
          applicationName: SERVICE_NAME,
          migrateOnBoot: config.database.migrateOnBoot,
        }),
        KafkaModule.forRoot({
          ...config.kafka, // replication, session/heartbeat, poison limits (libs/config kafkaVars)
          clientId: config.kafka.clientId ?? SERVICE_NAME,
          brokers: config.kafka.brokers,
          ...(logger ? { logger: kafkaLogger(logger) } : {}),
          topicPartitions: config.kafka.topicPartitions,
          partitionsConsumedConcurrently: config.kafka.partitionsConsumedConcurrently,
          topics: [TOPICS.events, TOPICS.gatewayRequests],
        }),
        KafkaModule.forConsumer({ groupId, handlers: ORCHESTRATOR_HANDLERS }),
      ],
      controllers: [PaymentsController],
      providers: [
        { provide: ORCHESTRATOR_CONFIG, useValue: config },
        { provide: PAYMENT_POLICY, useValue: policyFromConfig(config.policy) },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        Clock,
        IdGenerator,
        Database,
        PaymentRepository,
        OutboxRepository,
        TimerRepository,
        PaymentSagaService,
        PaymentQueryService,
        OutboxRelay,
        TimerWorker,
        ...ORCHESTRATOR_HANDLERS,
        ...provideHealthChecks({
          liveness: [getConsumerLivenessToken(groupId)],
          readiness: [DATABASE_HEALTH_CHECK, KafkaBrokerHealthCheck],
        }),
      ],
      exports: [ORCHESTRATOR_CONFIG],
    };
  }
}
