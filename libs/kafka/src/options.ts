import type { RetryPolicy } from './backoff';
import type { KafkaLogger, KafkaLogLevelName } from './logger';
import type { KafkaHandlerSource } from './handler';
import { DEFAULT_DECODE_LIMITS } from './message';

/** Client-wide settings: `KafkaModule.forRoot(...)`. Build them from `kafkaVars` of libs/config. */
export interface KafkaModuleOptions {
  /** kafkajs client id, e.g. the app name. */
  readonly clientId: string;
  /** host:port list (KAFKA_BROKERS). Use 127.0.0.1 rather than localhost (kafkajs has no IPv6). */
  readonly brokers: readonly string[];
  /** Where kafkajs and this library log; default: Nest's Logger. */
  readonly logger?: KafkaLogger;
  /** kafkajs verbosity (default 'warn'; our own consumer/producer lines use the logger directly). */
  readonly logLevel?: KafkaLogLevelName;
  /** Partitions for topics created at start (KAFKA_TOPIC_PARTITIONS); default 6. */
  readonly topicPartitions?: number;
  /**
   * Replicas of each partition of topics created at start (KAFKA_REPLICATION_FACTOR); default 1
   * (one local broker). A three-broker cluster: 3.
   */
  readonly replicationFactor?: number;
  /**
   * `min.insync.replicas` of topics created at start (KAFKA_MIN_INSYNC_REPLICAS); default 1. With
   * the producer's acks=all a write is acknowledged only once this many replicas have it: 2 of 3
   * survives the loss of one broker without losing an acknowledged message.
   */
  readonly minInsyncReplicas?: number;
  /**
   * Consumer group session timeout, ms (KAFKA_SESSION_TIMEOUT_MS): how long a crashed member keeps
   * its partitions before the group rebalances. Must lie within the broker's
   * group.min/max.session.timeout.ms (6000..1800000 by default; the local brokers allow 1000+).
   * Default 6000.
   */
  readonly sessionTimeoutMs?: number;
  /** Consumer heartbeat interval, ms (KAFKA_HEARTBEAT_INTERVAL_MS); default 1000. */
  readonly heartbeatIntervalMs?: number;
  /** Partitions handled at once by each consumer (KAFKA_CONSUMER_CONCURRENCY); default 3. */
  readonly partitionsConsumedConcurrently?: number;
  /** Topics this app only produces to, created at start if missing (consumers create their own). */
  readonly topics?: readonly string[];
  /** A send (including a DLQ write) that has no broker acknowledgement by then fails; default 30000. */
  readonly sendTimeoutMs?: number;
  /** Retries of a failed produce request before send() fails (kafkajs backoff); default 5. */
  readonly producerRetries?: number;
  /** Readiness check timeout (admin.describeCluster); default 2000. */
  readonly healthCheckTimeoutMs?: number;
  /** kafkajs connectionTimeout; default 3000. */
  readonly connectionTimeoutMs?: number;
  /** kafkajs requestTimeout; default 30000. */
  readonly requestTimeoutMs?: number;
  /**
   * A consumed value larger than this (bytes) is poison: dead-lettered (`parse`) unparsed, on the
   * first attempt (KAFKA_MAX_MESSAGE_BYTES); default 1048576, the broker's own default limit.
   */
  readonly maxMessageBytes?: number;
  /**
   * A consumed value nesting objects/arrays deeper than this is poison: dead-lettered (`parse`)
   * before JSON.parse, so no recursive code ever overflows on it (KAFKA_MAX_VALUE_DEPTH); default 64.
   */
  readonly maxValueDepth?: number;
}

/** One consumer group of an app: `KafkaModule.forConsumer(...)`. */
export interface KafkaConsumerOptions {
  /** Consumer group id, e.g. 'orchestrator'. Also names the liveness check 'kafka-consumer:<id>'. */
  readonly groupId: string;
  /** Handler providers (class or token, resolved from the app) or handler objects; one per topic. */
  readonly handlers: readonly KafkaHandlerSource[];
  /** In-place retry of a failing handler before dead-lettering; default 5 retries, 200 ms .. 10 s. */
  readonly retry?: Partial<RetryPolicy>;
  /** Overrides the client-wide setting. Order within a partition is always kept. */
  readonly partitionsConsumedConcurrently?: number;
  /** Overrides the client-wide partition count for this group's topics and their DLQs. */
  readonly topicPartitions?: number;
  /** A group without committed offsets starts at the earliest message (default true). */
  readonly fromBeginning?: boolean;
  /** How often the lag gauge is refreshed, ms; 0 = only on demand (`refreshLag()`). Default 15000. */
  readonly lagIntervalMs?: number;
  /** Overrides the client-wide sessionTimeoutMs for this group. */
  readonly sessionTimeoutMs?: number;
  /**
   * Longest a fetch waits on the broker for new data (kafkajs maxWaitTimeInMs); a graceful stop
   * waits for the fetch in flight, so this bounds the idle part of shutdown. Default 1000.
   */
  readonly maxWaitTimeMs?: number;
  /** Overrides the client-wide heartbeatIntervalMs for this group. */
  readonly heartbeatIntervalMs?: number;
  /**
   * Restarts after retriable kafkajs crashes before giving up (liveness then fails); default 3.
   * The consumer gives up only when both this count and `restartWindowMs` are spent.
   */
  readonly maxRestarts?: number;
  /**
   * How long after its first crash without rejoining the group a consumer keeps restarting,
   * however many restarts that takes; default 120000. A broker restarted on a busy machine can be
   * unreachable for most of a minute, and each kafkajs restart spends about 12 s on its
   * connection retries: three restarts alone would give up on an outage that is ending.
   */
  readonly restartWindowMs?: number;
  /** How long a graceful stop waits for in-flight handlers; default 30000. */
  readonly shutdownTimeoutMs?: number;
  /** Start consuming on application bootstrap (default true); false = call `start()` yourself. */
  readonly autoStart?: boolean;
  /** Most messages one `handleBatch` call gets, for handlers that have one; default 100. */
  readonly maxBatchMessages?: number;
}

export const KAFKA_MODULE_OPTIONS = Symbol('KAFKA_MODULE_OPTIONS');
export const KAFKA_CLIENT = Symbol('KAFKA_CLIENT');
export const KAFKA_LOGGER = Symbol('KAFKA_LOGGER');

export const KAFKA_DEFAULTS = {
  logLevel: 'warn',
  topicPartitions: 6,
  partitionsConsumedConcurrently: 3,
  sendTimeoutMs: 30_000,
  producerRetries: 5,
  healthCheckTimeoutMs: 2_000,
  connectionTimeoutMs: 3_000,
  requestTimeoutMs: 30_000,
  fromBeginning: true,
  lagIntervalMs: 15_000,
  replicationFactor: 1,
  minInsyncReplicas: 1,
  sessionTimeoutMs: 6_000,
  heartbeatIntervalMs: 1_000,
  maxWaitTimeMs: 1_000,
  maxRestarts: 3,
  restartWindowMs: 120_000,
  shutdownTimeoutMs: 30_000,
  maxMessageBytes: DEFAULT_DECODE_LIMITS.maxValueBytes,
  maxValueDepth: DEFAULT_DECODE_LIMITS.maxDepth,
  maxBatchMessages: 100,
} as const;
