import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Admin, Kafka } from 'kafkajs';
import { createKafkaClient } from './client';
import type { KafkaLogger } from './logger';
import type { HealthCheck } from '@payments/observability';
import { sanitizeErrorText } from './dlq';
import { errorMessage } from './errors';
import {
  KAFKA_LOGGER,
  KAFKA_DEFAULTS,
  KAFKA_MODULE_OPTIONS,
  type KafkaModuleOptions,
} from './options';
import { withTimeout } from '@payments/core';

/**
 * Readiness: the broker answers `describeCluster` within a short timeout. Uses its own kafkajs
 * client without retries (the shared client's connection retries would keep a failed check
 * reconnecting in the background), and a failed check drops the admin connection so that the next
 * check starts from scratch.
 * List it under READINESS_CHECKS (`provideHealthChecks({ readiness: [KafkaBrokerHealthCheck] })`).
 */
@Injectable()
export class KafkaBrokerHealthCheck implements HealthCheck, OnApplicationShutdown {
  readonly name = 'kafka';
  private admin: Admin | undefined;
  private readonly timeoutMs: number;
  private readonly kafka: Kafka;

  constructor(
    @Inject(KAFKA_MODULE_OPTIONS) options: KafkaModuleOptions,
    @Inject(KAFKA_LOGGER) logger: KafkaLogger,
  ) {
    this.timeoutMs = options.healthCheckTimeoutMs ?? KAFKA_DEFAULTS.healthCheckTimeoutMs;
    this.kafka = createKafkaClient(options, logger, {
      clientId: `${options.clientId}-health`,
      retry: { retries: 0 },
      connectionTimeout: Math.min(this.timeoutMs, KAFKA_DEFAULTS.connectionTimeoutMs),
    });
  }

  async check(): Promise<void> {
    const admin = (this.admin ??= this.kafka.admin());
    try {
      await withTimeout(
        (async () => {
          await admin.connect();
          const cluster = await admin.describeCluster();
          if (cluster.brokers.length === 0) throw new Error('no brokers in the cluster metadata');
        })(),
        this.timeoutMs,
        'Kafka describeCluster',
      );
    } catch (error) {
      this.admin = undefined;
      void admin.disconnect().catch(() => undefined);
      throw new Error(sanitizeErrorText(errorMessage(error), 200));
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.admin?.disconnect().catch(() => undefined);
  }
}
