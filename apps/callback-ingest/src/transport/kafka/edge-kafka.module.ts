import { type DynamicModule, Inject, Injectable, Module } from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import {
  backoffDelay,
  createKafkaClient,
  errorMessage,
  KAFKA_CLIENT,
  KAFKA_LOGGER,
  KAFKA_MODULE_OPTIONS,
  KafkaBrokerHealthCheck,
  type KafkaLogger,
  type KafkaModuleOptions,
  KafkaProducerService,
} from '@payments/kafka';
import { sleep, withTimeout } from '@payments/core';
import { ROOT_LOGGER } from '@payments/logging';
import type { Logger } from 'pino';

export const KAFKA_START_WAIT_MS = Symbol('KAFKA_START_WAIT_MS');

const START_RETRY = { retries: Number.MAX_SAFE_INTEGER, initialDelayMs: 500, maxDelayMs: 10_000 };

/**
 * libs/kafka's producer, started so that the public edge comes up even while the broker is
 * unreachable. KafkaProducerService connects (and creates the topic) in onModuleInit and fails
 * the whole boot when that fails (after kafkajs's ~10 s of retries). Here boot waits at most
 * `startWaitMs`; after that the app serves anyway — readiness reports the broker down, verified
 * callbacks answer 503 (the gateway retries), payers are still redirected — while the start is
 * retried in the background until it succeeds or the app stops.
 */
@Injectable()
export class EdgeKafkaProducer extends KafkaProducerService {
  private readonly stopping = new AbortController();
  private readonly startLogger: KafkaLogger;

  constructor(
    @Inject(KAFKA_CLIENT) kafka: Kafka,
    @Inject(KAFKA_MODULE_OPTIONS) options: KafkaModuleOptions,
    @Inject(KAFKA_LOGGER) logger: KafkaLogger,
    @Inject(KAFKA_START_WAIT_MS) private readonly startWaitMs: number,
  ) {
    super(kafka, options, logger);
    this.startLogger = logger;
  }

  override async onModuleInit(): Promise<void> {
    try {
      await withTimeout(this.startInBackground(), this.startWaitMs, 'Kafka producer start');
    } catch (error) {
      this.startLogger.warn(
        { error: errorMessage(error) },
        'broker not reachable at start; serving anyway (callbacks answer 503 until it is)',
      );
    }
  }

  override async onApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    await super.onApplicationShutdown();
  }

  private started: Promise<void> | undefined;

  private startInBackground(): Promise<void> {
    this.started ??= this.startWithRetries();
    return this.started;
  }

  private async startWithRetries(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await super.onModuleInit();
        if (attempt > 1) this.startLogger.info({ attempt }, 'Kafka producer started');
        return;
      } catch (error) {
        if (this.stopping.signal.aborted) return;
        if (attempt === 1) {
          this.startLogger.warn(
            { error: errorMessage(error) },
            'Kafka producer start failed; retrying in the background',
          );
        }
        const delay = backoffDelay(attempt, START_RETRY);
        if (!(await sleep(delay, this.stopping.signal))) return;
      }
    }
  }
}

export interface EdgeKafkaOptions extends Omit<KafkaModuleOptions, 'logger'> {
  /** How long boot waits for the broker before serving anyway. */
  readonly startWaitMs: number;
}

/**
 * The parts of KafkaModule.forRoot this app needs (client, producer, readiness check), with the
 * producer above and kafkajs logging through the app's pino logger.
 */
@Module({})
export class EdgeKafkaModule {
  static forRoot(options: EdgeKafkaOptions): DynamicModule {
    const { startWaitMs, ...root } = options;
    return {
      module: EdgeKafkaModule,
      providers: [
        {
          provide: KAFKA_MODULE_OPTIONS,
          useFactory: (logger: Logger): KafkaModuleOptions => ({
            ...root,
            logger: logger.child({ component: 'kafka' }),
          }),
          inject: [ROOT_LOGGER],
        },
        {
          provide: KAFKA_LOGGER,
          useFactory: (o: KafkaModuleOptions): KafkaLogger | undefined => o.logger,
          inject: [KAFKA_MODULE_OPTIONS],
        },
        {
          provide: KAFKA_CLIENT,
          useFactory: createKafkaClient,
          inject: [KAFKA_MODULE_OPTIONS, KAFKA_LOGGER],
        },
        { provide: KAFKA_START_WAIT_MS, useValue: startWaitMs },
        { provide: KafkaProducerService, useClass: EdgeKafkaProducer },
        KafkaBrokerHealthCheck,
      ],
      exports: [KafkaProducerService, KafkaBrokerHealthCheck],
    };
  }
}
