import type { Kafka } from 'kafkajs';
import { DEFAULT_RETRY_POLICY, type RetryPolicy, validateRetryPolicy } from './backoff';
import type { KafkaMessageHandler } from './handler';
import type { KafkaLogger } from './logger';
import { KAFKA_DEFAULTS, type KafkaConsumerOptions, type KafkaModuleOptions } from './options';
import type { KafkaProducerService } from './producer.service';

export type ConsumerState = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped' | 'crashed';

export interface ResolvedConsumerSettings {
  readonly groupId: string;
  readonly retry: RetryPolicy;
  readonly partitionsConsumedConcurrently: number;
  readonly topicPartitions: number;
  readonly fromBeginning: boolean;
  readonly lagIntervalMs: number;
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly maxWaitTimeMs: number;
  readonly maxRestarts: number;
  readonly restartWindowMs: number;
  readonly shutdownTimeoutMs: number;
  readonly sendTimeoutMs: number;
  readonly autoStart: boolean;
  /** A value larger than this is poison (DLQ `parse`) before it is parsed. */
  readonly maxMessageBytes: number;
  /** A value nested deeper than this is poison (DLQ `parse`) before it is parsed. */
  readonly maxValueDepth: number;
  /** Most messages one `handleBatch` call gets (handlers that have one; default 100). */
  readonly maxBatchMessages: number;
  readonly replicationFactor: number;
  readonly minInsyncReplicas: number;
}

export interface ConsumerRunnerDeps {
  readonly kafka: Kafka;
  readonly producer: Pick<KafkaProducerService, 'sendRaw'>;
  readonly logger: KafkaLogger;
  readonly settings: ResolvedConsumerSettings;
  /** Called once at start (Nest providers are resolved lazily, after every module is ready). */
  readonly handlers: () => readonly KafkaMessageHandler[];
}

export function indexHandlers(
  handlers: readonly KafkaMessageHandler[],
): Map<string, KafkaMessageHandler> {
  if (handlers.length === 0) throw new Error('a consumer needs at least one handler');
  const byTopic = new Map<string, KafkaMessageHandler>();
  for (const handler of handlers) {
    if (byTopic.has(handler.topic)) {
      throw new Error(`two handlers for topic ${handler.topic}: one handler per topic and group`);
    }
    byTopic.set(handler.topic, handler);
  }
  return byTopic;
}

/** Consumer settings from the module-wide and the per-group options, with defaults. */
export function resolveConsumerSettings(
  root: Pick<
    KafkaModuleOptions,
    | 'partitionsConsumedConcurrently'
    | 'topicPartitions'
    | 'sendTimeoutMs'
    | 'maxMessageBytes'
    | 'maxValueDepth'
    | 'replicationFactor'
    | 'minInsyncReplicas'
    | 'sessionTimeoutMs'
    | 'heartbeatIntervalMs'
  >,
  group: Omit<KafkaConsumerOptions, 'handlers'>,
): ResolvedConsumerSettings {
  const maxBatchMessages = group.maxBatchMessages ?? KAFKA_DEFAULTS.maxBatchMessages;
  if (!Number.isInteger(maxBatchMessages) || maxBatchMessages < 1) {
    throw new RangeError(`maxBatchMessages must be a whole number >= 1, got ${maxBatchMessages}`);
  }
  return {
    groupId: group.groupId,
    retry: validateRetryPolicy({ ...DEFAULT_RETRY_POLICY, ...group.retry }),
    partitionsConsumedConcurrently:
      group.partitionsConsumedConcurrently ??
      root.partitionsConsumedConcurrently ??
      KAFKA_DEFAULTS.partitionsConsumedConcurrently,
    topicPartitions:
      group.topicPartitions ?? root.topicPartitions ?? KAFKA_DEFAULTS.topicPartitions,
    fromBeginning: group.fromBeginning ?? KAFKA_DEFAULTS.fromBeginning,
    lagIntervalMs: group.lagIntervalMs ?? KAFKA_DEFAULTS.lagIntervalMs,
    sessionTimeoutMs:
      group.sessionTimeoutMs ?? root.sessionTimeoutMs ?? KAFKA_DEFAULTS.sessionTimeoutMs,
    heartbeatIntervalMs:
      group.heartbeatIntervalMs ?? root.heartbeatIntervalMs ?? KAFKA_DEFAULTS.heartbeatIntervalMs,
    maxWaitTimeMs: group.maxWaitTimeMs ?? KAFKA_DEFAULTS.maxWaitTimeMs,
    maxRestarts: group.maxRestarts ?? KAFKA_DEFAULTS.maxRestarts,
    restartWindowMs: group.restartWindowMs ?? KAFKA_DEFAULTS.restartWindowMs,
    shutdownTimeoutMs: group.shutdownTimeoutMs ?? KAFKA_DEFAULTS.shutdownTimeoutMs,
    sendTimeoutMs: root.sendTimeoutMs ?? KAFKA_DEFAULTS.sendTimeoutMs,
    autoStart: group.autoStart ?? true,
    maxMessageBytes: root.maxMessageBytes ?? KAFKA_DEFAULTS.maxMessageBytes,
    maxValueDepth: root.maxValueDepth ?? KAFKA_DEFAULTS.maxValueDepth,
    maxBatchMessages,
    replicationFactor: root.replicationFactor ?? KAFKA_DEFAULTS.replicationFactor,
    minInsyncReplicas: root.minInsyncReplicas ?? KAFKA_DEFAULTS.minInsyncReplicas,
  };
}

/**
 * Whether a consumer that crashed (retriably) for the `restarts`-th time since it last joined its
 * group, the first of those crashes at `firstCrashAt`, restarts again: while restarts are left or
 * the restart window since the first crash is still open. A group join resets both.
 */
export function keepRestarting(
  restarts: number,
  firstCrashAt: number,
  now: number,
  settings: Pick<ResolvedConsumerSettings, 'maxRestarts' | 'restartWindowMs'>,
): boolean {
  return restarts <= settings.maxRestarts || now - firstCrashAt < settings.restartWindowMs;
}

/** A consumer's crashes since it last joined its group, against `keepRestarting`. */
export class RestartBudget {
  private restarts = 0;
  private firstCrashAt: number | undefined;

  constructor(
    private readonly settings: Pick<ResolvedConsumerSettings, 'maxRestarts' | 'restartWindowMs'>,
  ) {}

  joined(): void {
    this.restarts = 0;
    this.firstCrashAt = undefined;
  }

  /** Counts a crash at `now`: whether to restart, and what has been spent (for the log). */
  crashed(now: number): { restart: boolean; restarts: number; secondsSinceFirstCrash: number } {
    this.restarts += 1;
    this.firstCrashAt ??= now;
    return {
      restart: keepRestarting(this.restarts, this.firstCrashAt, now, this.settings),
      restarts: this.restarts - 1,
      secondsSinceFirstCrash: Math.round((now - this.firstCrashAt) / 1000),
    };
  }
}
