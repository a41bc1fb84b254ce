import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { type Kafka, type Message, Partitioners, type RecordMetadata } from 'kafkajs';
import {
  KAFKA_CLIENT,
  KAFKA_DEFAULTS,
  KAFKA_LOGGER,
  KAFKA_MODULE_OPTIONS,
  type KafkaModuleOptions,
} from './options';
import type { KafkaLogger } from './logger';
import { IdempotentSender } from './idempotent-sender';
import { ensureTopics } from './topics';

/** A message to send. `value`: a Buffer or string is sent as is, null is a tombstone, anything else is JSON. */
export interface OutgoingMessage {
  /** Record key (by convention the payment id): same key, same partition, kept in order. */
  readonly key: string | Buffer | null;
  readonly value: unknown;
  readonly headers?: Readonly<Record<string, string | Buffer>>;
  /** Explicit partition; normally leave it to the key. */
  readonly partition?: number;
}

export interface SendOptions {
  /** Overrides the module's sendTimeoutMs for this call. */
  readonly timeoutMs?: number;
}

export function encodeValue(value: unknown): Buffer | string | null {
  if (value === null || value === undefined) return null;
  if (Buffer.isBuffer(value) || typeof value === 'string') return value;
  return JSON.stringify(value);
}

/**
 * The idempotent producer (one per app): acks from all in-sync replicas, one request in flight,
 * the Java-compatible default partitioner (murmur2 of the key, as other clients use), used
 * through IdempotentSender (one produce call at a time, waiting sends coalesced, a producer whose
 * call failed replaced by a new producer id — see there why kafkajs needs both). `send` resolves
 * only after the broker acknowledged; a send that is not acknowledged within the timeout rejects —
 * its outcome is then unknown (it may still land), so callers must treat it as "not
 * acknowledged", never as "not written".
 *
 * Lifecycle: connects in onModuleInit (so consumers can dead-letter from their first message),
 * disconnects in onApplicationShutdown, after the consumers stopped in beforeApplicationShutdown.
 */
@Injectable()
export class KafkaProducerService implements OnModuleInit, OnApplicationShutdown {
  private readonly sender: IdempotentSender;
  private readonly timeoutMs: number;

  constructor(
    @Inject(KAFKA_CLIENT) private readonly kafka: Kafka,
    @Inject(KAFKA_MODULE_OPTIONS) private readonly options: KafkaModuleOptions,
    @Inject(KAFKA_LOGGER) private readonly logger: KafkaLogger,
  ) {
    this.timeoutMs = options.sendTimeoutMs ?? KAFKA_DEFAULTS.sendTimeoutMs;
    const retries = options.producerRetries ?? KAFKA_DEFAULTS.producerRetries;
    this.sender = new IdempotentSender(
      () =>
        kafka.producer({
          idempotent: true,
          maxInFlightRequests: 1,
          createPartitioner: Partitioners.DefaultPartitioner,
          // Topics are created on purpose (consumers, `topics` option): a typo must not create one.
          allowAutoTopicCreation: false,
          // Bounded, unlike kafkajs's idempotent default (MAX_SAFE_INTEGER): an endless retry loop
          // outlives the send timeout and even disconnect() (it reconnects to refresh metadata).
          // Within these retries the broker still de-duplicates (same producer id and sequence);
          // kafkajs logs once that limiting retries "may invalidate EoS guarantees" — a send that
          // failed has an unknown outcome and a later re-send may duplicate; consumers de-duplicate
          // by ce_id (inbox).
          retry: { retries },
        }),
      {
        hooks: {
          retired: (error, messages) =>
            this.logger.warn(
              { err: error, messages },
              'Kafka send not acknowledged (outcome unknown); producer replaced by a new producer id',
            ),
        },
      },
    );
  }

  async onModuleInit(): Promise<void> {
    await this.connect();
    const topics = this.options.topics ?? [];
    if (topics.length > 0) {
      const admin = this.kafka.admin();
      await admin.connect();
      try {
        const spec = {
          numPartitions: this.options.topicPartitions ?? KAFKA_DEFAULTS.topicPartitions,
          replicationFactor: this.options.replicationFactor ?? KAFKA_DEFAULTS.replicationFactor,
          minInsyncReplicas: this.options.minInsyncReplicas ?? KAFKA_DEFAULTS.minInsyncReplicas,
        };
        await ensureTopics(
          admin,
          topics.map((topic) => ({ topic, ...spec })),
          this.logger,
        );
      } finally {
        await admin.disconnect();
      }
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sender.close();
  }

  connect(): Promise<void> {
    return this.sender.connect();
  }

  /** Sends JSON (or raw) messages to one topic; resolves once acknowledged by the broker. */
  async send(
    topic: string,
    messages: readonly OutgoingMessage[],
    options: SendOptions = {},
  ): Promise<RecordMetadata[]> {
    return this.sendRaw(topic, messages.map(toKafkaMessage), options);
  }

  /**
   * Several topics' messages in one produce call (the outbox relay's round); resolves once all
   * are acknowledged, rejects if any is not (the caller re-sends them all, in order).
   */
  async sendTopics(
    groups: ReadonlyArray<{
      readonly topic: string;
      readonly messages: readonly OutgoingMessage[];
    }>,
    options: SendOptions = {},
  ): Promise<RecordMetadata[]> {
    return this.sender.sendAll(
      groups.map((g) => ({ topic: g.topic, messages: g.messages.map(toKafkaMessage) })),
      options.timeoutMs ?? this.timeoutMs,
    );
  }

  /** Sends kafkajs messages as they are (bytes kept), e.g. for dead-lettering. */
  async sendRaw(
    topic: string,
    messages: Message[],
    options: SendOptions = {},
  ): Promise<RecordMetadata[]> {
    return this.sender.send(topic, messages, options.timeoutMs ?? this.timeoutMs);
  }
}

function toKafkaMessage(m: OutgoingMessage): Message {
  return {
    key: m.key,
    value: encodeValue(m.value),
    headers: m.headers ? { ...m.headers } : undefined,
    partition: m.partition,
  };
}
