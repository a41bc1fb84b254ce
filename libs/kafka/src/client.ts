import { Kafka, type KafkaConfig } from 'kafkajs';
import { kafkaJsLogCreator, type KafkaLogger, toKafkaJsLevel } from './logger';
import { KAFKA_DEFAULTS, type KafkaModuleOptions } from './options';

/** The kafkajs client for these options, logging through `logger`. */
export function createKafkaClient(
  options: KafkaModuleOptions,
  logger: KafkaLogger,
  overrides: Partial<KafkaConfig> = {},
): Kafka {
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    logLevel: toKafkaJsLevel(options.logLevel ?? KAFKA_DEFAULTS.logLevel),
    logCreator: kafkaJsLogCreator(logger),
    connectionTimeout: options.connectionTimeoutMs ?? KAFKA_DEFAULTS.connectionTimeoutMs,
    requestTimeout: options.requestTimeoutMs ?? KAFKA_DEFAULTS.requestTimeoutMs,
    ...overrides,
  });
}
