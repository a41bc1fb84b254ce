import { randomUUID } from 'node:crypto';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { type LiveEvent, type LiveMinutes, TOPICS } from '@payments/contracts';
import { KAFKA_CLIENT } from '@payments/kafka';
import type { Consumer, Kafka } from 'kafkajs';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../../config';
import { liveEventOf, MinuteCounts } from './live-events';

/** At most this many open streams per replica (each is a socket and a listener). */
export const MAX_LIVE_STREAMS = 64;

export type LiveListener = (event: LiveEvent) => void;

/**
 * The outcome events as they are published, for the admin API's live stream. Each replica reads
 * `payments.events.v1` in a consumer group of its own (a fresh name per process, starting at the
 * end, committing nothing): a stream served by any replica sees every event, whichever replica
 * published it. The outbox would not do: a replica's outbox holds only the events its own
 * commits wrote. The group commits no offsets, so the broker forgets it once the replica leaves.
 */
@Injectable()
export class LiveFeed implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(LiveFeed.name);
  private readonly listeners = new Set<LiveListener>();
  private readonly counts = new MinuteCounts(new Date());
  private consumer: Consumer | undefined;

  constructor(
    @Inject(KAFKA_CLIENT) private readonly kafka: Kafka,
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const groupId = `${this.config.kafka.consumerGroup}-live-${randomUUID()}`;
    const consumer = this.kafka.consumer({ groupId, allowAutoTopicCreation: false });
    this.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topic: TOPICS.events, fromBeginning: false });
    await consumer.run({
      autoCommit: false,
      eachMessage: ({ partition, message }) => {
        const event = liveEventOf(partition, message.offset, message.value);
        if (event !== undefined) this.publish(event);
        return Promise.resolve();
      },
    });
    this.logger.log(`live feed: reading ${TOPICS.events} as ${groupId}`);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.listeners.clear();
    await this.consumer?.disconnect().catch(() => undefined);
  }

  /** Adds a listener; undefined when MAX_LIVE_STREAMS are open. Call the result to remove it. */
  listen(listener: LiveListener): (() => void) | undefined {
    if (this.listeners.size >= MAX_LIVE_STREAMS) return undefined;
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  minutes(now: Date, minutes: number): LiveMinutes {
    return this.counts.window(now, minutes);
  }

  private publish(event: LiveEvent): void {
    this.counts.record(event);
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.logger.warn(`live feed: a listener failed: ${(error as Error).message}`);
      }
    }
  }
}
