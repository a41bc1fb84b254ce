import {
  type DynamicModule,
  type FactoryProvider,
  Global,
  type InjectionToken,
  type ModuleMetadata,
  Module,
  type Provider,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Kafka } from 'kafkajs';
import { createKafkaClient } from './client';
import { KafkaConsumerRunner, resolveConsumerSettings } from './consumer-runner';
import { isHandlerObject, type KafkaMessageHandler } from './handler';
import { KafkaBrokerHealthCheck } from './health';
import { type KafkaLogger, nestKafkaLogger } from './logger';
import {
  KAFKA_CLIENT,
  KAFKA_LOGGER,
  KAFKA_MODULE_OPTIONS,
  type KafkaConsumerOptions,
  type KafkaModuleOptions,
} from './options';
import { KafkaProducerService } from './producer.service';

/** Nest token of the runner of one consumer group (to `app.get(...)` it, e.g. in tests). */
export function getConsumerToken(groupId: string): string {
  return `KafkaConsumerRunner:${groupId}`;
}

/** Nest token of the consumer group's liveness HealthCheck (list it under LIVENESS_CHECKS). */
export function getConsumerLivenessToken(groupId: string): string {
  return `KafkaConsumerLiveness:${groupId}`;
}

export interface KafkaModuleAsyncOptions {
  readonly imports?: ModuleMetadata['imports'];
  readonly inject?: InjectionToken[];
  // `never[]` accepts any factory signature without `any`; Nest supplies the injected values.
  readonly useFactory: (...deps: never[]) => KafkaModuleOptions | Promise<KafkaModuleOptions>;
}

const sharedProviders: Provider[] = [
  {
    provide: KAFKA_LOGGER,
    useFactory: (options: KafkaModuleOptions): KafkaLogger => options.logger ?? nestKafkaLogger(),
    inject: [KAFKA_MODULE_OPTIONS],
  },
  {
    provide: KAFKA_CLIENT,
    useFactory: (options: KafkaModuleOptions, logger: KafkaLogger) =>
      createKafkaClient(options, logger),
    inject: [KAFKA_MODULE_OPTIONS, KAFKA_LOGGER],
  },
  KafkaProducerService,
  KafkaBrokerHealthCheck,
];

const sharedExports = [
  KAFKA_MODULE_OPTIONS,
  KAFKA_CLIENT,
  KAFKA_LOGGER,
  KafkaProducerService,
  KafkaBrokerHealthCheck,
];

/**
 * kafkajs under a thin Nest layer.
 *
 *   KafkaModule.forRoot({ clientId: 'orchestrator', brokers: config.kafka.brokers, logger })
 *     global: KafkaProducerService, KafkaBrokerHealthCheck (readiness), the kafkajs client;
 *   KafkaModule.forConsumer({ groupId: 'orchestrator', handlers: [PaymentCommandHandler] })
 *     one consumer group: a KafkaConsumerRunner (getConsumerToken(groupId)) and its liveness
 *     check (getConsumerLivenessToken(groupId)).
 *
 * Shutdown order (app.close() / enableShutdownHooks):
 *   onModuleDestroy → beforeApplicationShutdown: consumers pause, finish in-flight messages,
 *   commit, leave the group → onApplicationShutdown: producer and admin clients disconnect,
 *   TypeORM closes the DataSource. Nothing the in-flight handlers need may close earlier (do not
 *   close a database pool in onModuleDestroy).
 */
@Global()
@Module({})
export class KafkaModule {
  static forRoot(options: KafkaModuleOptions): DynamicModule {
    return {
      module: KafkaModule,
      global: true,
      providers: [{ provide: KAFKA_MODULE_OPTIONS, useValue: options }, ...sharedProviders],
      exports: sharedExports,
    };
  }

  static forRootAsync(options: KafkaModuleAsyncOptions): DynamicModule {
    const optionsProvider: FactoryProvider<KafkaModuleOptions | Promise<KafkaModuleOptions>> = {
      provide: KAFKA_MODULE_OPTIONS,
      useFactory: options.useFactory as (...deps: unknown[]) => KafkaModuleOptions,
      inject: options.inject ?? [],
    };
    return {
      module: KafkaModule,
      global: true,
      imports: options.imports ?? [],
      providers: [optionsProvider, ...sharedProviders],
      exports: sharedExports,
    };
  }

  /** One consumer group; needs KafkaModule.forRoot/forRootAsync in the app. */
  static forConsumer(options: KafkaConsumerOptions): DynamicModule {
    return KafkaConsumerModule.register(options);
  }
}

@Module({})
export class KafkaConsumerModule {
  static register(options: KafkaConsumerOptions): DynamicModule {
    const runnerToken = getConsumerToken(options.groupId);
    const livenessToken = getConsumerLivenessToken(options.groupId);
    return {
      module: KafkaConsumerModule,
      providers: [
        {
          provide: runnerToken,
          useFactory: (
            kafka: Kafka,
            root: KafkaModuleOptions,
            logger: KafkaLogger,
            producer: KafkaProducerService,
            moduleRef: ModuleRef,
          ) =>
            new KafkaConsumerRunner({
              kafka,
              producer,
              logger,
              settings: resolveConsumerSettings(root, options),
              handlers: () =>
                options.handlers.map((source) =>
                  isHandlerObject(source)
                    ? source
                    : moduleRef.get<KafkaMessageHandler>(source, { strict: false }),
                ),
            }),
          inject: [
            KAFKA_CLIENT,
            KAFKA_MODULE_OPTIONS,
            KAFKA_LOGGER,
            KafkaProducerService,
            ModuleRef,
          ],
        },
        {
          provide: livenessToken,
          useFactory: (runner: KafkaConsumerRunner) => runner.liveness,
          inject: [runnerToken],
        },
      ],
      exports: [runnerToken, livenessToken],
    };
  }
}
