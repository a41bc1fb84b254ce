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
import { ORCHESTRATOR_CONFIG, OrchestratorConfig } from './config';
import { contractCommands } from './flows/command-catalogue';
import { registeredFlows } from './flows/registered-flows';
import { orchestratorMigrations } from './migrations';
import { OutboxRelay } from './runtime/outbox/outbox-relay';
import { OutboxWriter } from './runtime/outbox/outbox.writer';
import { Database } from './persistence/database';
import { orchestratorEntities } from './persistence/entities';
import { SagaRepository } from './persistence/saga.repository';
import { TimerRepository } from './persistence/timer.repository';
import { AdminActionService } from './application/admin/admin-action.service';
import { AdminQueryService } from './application/queries/admin-query.service';
import { AdminTokenService } from './application/admin/admin-token.service';
import { SagaActions } from './application/admin/saga-actions';
import { AdminTokensController } from './transport/http/admin-tokens.controller';
import { LiveFeed } from './application/live/live-feed.service';
import { ReconciliationRunsQuery } from './application/queries/reconciliation-runs.query';
import { PaymentQueryService } from './application/queries/payment-query.service';
import { SagaGauges } from './application/queries/saga-gauges';
import { ReconciliationService } from './application/reconciliation/reconciliation.service';
import { ReconciliationWorker } from './application/reconciliation/reconciliation.worker';
import { CaseService } from './application/cases/case.service';
import { CaseWorker } from './application/cases/case.worker';
import { CasesController } from './transport/http/cases.controller';
import { Clock, IdGenerator } from './runtime/clock';
import { ControllableClock } from './runtime/controllable-clock';
import {
  COMMAND_CATALOGUE,
  FLOWS,
  RUNTIME_OPTIONS,
  type RuntimeOptions,
  SagaRuntime,
} from './runtime/saga-runtime';
import { TimerWorker } from './runtime/timer-worker';
import { AdminController } from './transport/http/admin.controller';
import { DeadLettersController } from './transport/http/dead-letters.controller';
import { DeadLetterService } from './application/dead-letters/dead-letter.service';
import { LiveController } from './transport/http/live.controller';
import { ReconciliationRunsController } from './transport/http/reconciliation-runs.controller';
import { DayCloseController } from './transport/http/day-close.controller';
import { DayCloseService } from './application/finance/day-close.service';
import { DayTieOutService } from './application/finance/day-tie-out.service';
import { DayCloseWorker } from './application/finance/day-close.worker';
import { PaymentsController } from './transport/http/payments.controller';
import { TestControlsController } from './transport/http/test-controls.controller';
import { ORCHESTRATOR_HANDLERS } from './transport/kafka/handlers';

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
          topics: [TOPICS.events, TOPICS.gatewayRequests, TOPICS.adminAudit, TOPICS.reconciliation],
        }),
        KafkaModule.forConsumer({ groupId, handlers: ORCHESTRATOR_HANDLERS }),
      ],
      controllers: [
        PaymentsController,
        // The admin API exists only when ADMIN_TOKENS names a token.
        ...(config.admin.tokens.length > 0
          ? [
              AdminController,
              AdminTokensController,
              LiveController,
              ReconciliationRunsController,
              DayCloseController,
              DeadLettersController,
              CasesController,
            ]
          : []),
        ...(config.testControls.enabled ? [TestControlsController] : []),
      ],
      providers: [
        { provide: ORCHESTRATOR_CONFIG, useValue: config },
        {
          provide: FLOWS,
          useValue: registeredFlows(config),
        },
        { provide: COMMAND_CATALOGUE, useValue: contractCommands },
        {
          provide: RUNTIME_OPTIONS,
          useValue: {
            hintIntervalMs: config.policy.statusHintIntervalSeconds * 1000,
          } satisfies RuntimeOptions,
        },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        // TEST_CONTROLS_ENABLED: a clock the test controls move forward; otherwise the system's.
        // TEST_CLOCK_OFFSET_SECONDS: a replica restarted by a test starts where the others are.
        ...(config.testControls.enabled
          ? [
              {
                provide: ControllableClock,
                useFactory: () => {
                  const clock = new ControllableClock();
                  clock.advance(config.testControls.clockOffsetSeconds * 1000);
                  return clock;
                },
              },
              { provide: Clock, useExisting: ControllableClock },
            ]
          : [Clock]),
        IdGenerator,
        Database,
        SagaRepository,
        OutboxWriter,
        TimerRepository,
        SagaRuntime,
        PaymentQueryService,
        AdminQueryService,
        SagaGauges,
        AdminActionService,
        AdminTokenService,
        SagaActions,
        DeadLetterService,
        // The live stream's own consumer group, only where the admin API is served.
        ...(config.admin.tokens.length > 0 ? [LiveFeed] : []),
        ReconciliationRunsQuery,
        OutboxRelay,
        TimerWorker,
        ReconciliationService,
        ReconciliationWorker,
        CaseService,
        CaseWorker,
        DayCloseService,
        DayTieOutService,
        DayCloseWorker,
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
