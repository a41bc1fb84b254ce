export { backoffDelay } from './backoff';
export { errorMessage, PoisonMessageError, whileMetadataSettles } from './errors';
export { type ConsumedMessage } from './message';
export { dlqTopicFor, maskDlqBytes } from './dlq';
export { type KafkaLogger } from './logger';
export { KAFKA_METRIC } from './metrics';
export {
  KAFKA_CLIENT,
  KAFKA_DEFAULTS,
  KAFKA_LOGGER,
  KAFKA_MODULE_OPTIONS,
  type KafkaConsumerOptions,
  type KafkaModuleOptions,
} from './options';
export { defineHandler, type KafkaMessageHandler } from './handler';
export {
  IdempotentSender,
  type IdempotentSenderHooks,
  type IdempotentSenderOptions,
  SenderClosedError,
} from './idempotent-sender';
export { KafkaProducerService } from './producer.service';
export { KafkaConsumerRunner } from './consumer-runner';
export { KafkaBrokerHealthCheck } from './health';
export { createKafkaClient } from './client';
export { getConsumerLivenessToken, getConsumerToken, KafkaModule } from './kafka.module';
