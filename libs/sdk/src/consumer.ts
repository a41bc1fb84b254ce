import type { Consumer } from 'kafkajs';
import { TOPICS } from '@payments/contracts';
import { type ConnectionOptions, kafkaClient } from './connection';
import { EventSchemaMismatchError } from './errors';
import {
  decodeEvent,
  EventGate,
  type EventHandlers,
  type EventMeta,
  type GateVerdict,
  type SeenStore,
} from './event-gate';
import type { OutcomeEvent } from './catalogue';

export interface PaymentsEventConsumerOptions extends ConnectionOptions {
  readonly groupId: string;
  /** One handler per event type you care about; other types are read, checked and skipped. */
  readonly handlers: EventHandlers;
  /**
   * An event this SDK cannot read. Default 'stop': the consumer stops before that record (its
   * offset is not committed, so after an upgrade it resumes there) and `done` rejects with the
   * EventSchemaMismatchError. Or a function: called, then the record is skipped.
   */
  readonly onMismatch?: 'stop' | ((error: EventSchemaMismatchError) => unknown);
  /** Called for duplicates and stale events, which are skipped. */
  readonly onSkipped?: (verdict: Exclude<GateVerdict, 'deliver'>, meta: EventMeta) => void;
  readonly seen?: SeenStore;
  readonly fromBeginning?: boolean;
}

/**
 * Typed handlers over `payments.events.v1`: each record decoded (CloudEvents headers + the
 * contracts' schemas), passed once by ce_id, never backwards by saga version, to the handler of its
 * type. Offsets are committed after the handler returns (at least once; a crash before the commit
 * redelivers, and the in-memory SeenStore forgets on restart — pass a durable `seen` store, or
 * make handlers idempotent). A handler that throws stops the consumer (`done` rejects) before
 * that record's offset is committed.
 */
export class PaymentsEventConsumer {
  private readonly consumer: Consumer;
  private readonly gate: EventGate;
  private settle!: { resolve: () => void; reject: (error: unknown) => void };
  /** Resolves when stopped by `stop()`; rejects with what stopped it otherwise. */
  readonly done: Promise<void>;

  constructor(private readonly options: PaymentsEventConsumerOptions) {
    const kafka = kafkaClient(options, 'PaymentsEventConsumer');
    this.consumer = kafka.consumer({ groupId: options.groupId });
    this.gate = new EventGate(options.seen);
    this.done = new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    this.done.catch(() => undefined); // observed by whoever awaits it
  }

  /** Connects, subscribes and resolves once the group has given this consumer its partitions. */
  async start(timeoutMs = 60_000): Promise<void> {
    const joined = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no group assignment within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const off = this.consumer.on(this.consumer.events.GROUP_JOIN, () => {
        clearTimeout(timer);
        off();
        resolve();
      });
    });
    await this.consumer.connect();
    await this.consumer.subscribe({
      topic: TOPICS.events,
      fromBeginning: this.options.fromBeginning ?? false,
    });
    await this.consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        try {
          await this.handle({
            topic,
            partition,
            offset: message.offset,
            value: message.value,
            headers: message.headers ?? {},
          });
        } catch (error) {
          this.consumer.pause([{ topic }]);
          void this.consumer.disconnect().finally(() => this.settle.reject(error));
          throw error;
        }
      },
    });
    await joined;
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
    this.settle.resolve();
  }

  private async handle(record: Parameters<typeof decodeEvent>[0]): Promise<void> {
    let decoded: { event: OutcomeEvent; meta: EventMeta };
    try {
      decoded = decodeEvent(record);
    } catch (error) {
      if (!(error instanceof EventSchemaMismatchError)) throw error;
      const onMismatch = this.options.onMismatch ?? 'stop';
      if (onMismatch === 'stop') throw error;
      await onMismatch(error);
      return;
    }
    const { event, meta } = decoded;
    const verdict = await this.gate.judge(event, meta);
    if (verdict !== 'deliver') {
      this.options.onSkipped?.(verdict, meta);
      return;
    }
    const handler = this.options.handlers[event.type] as
      ((e: OutcomeEvent, m: EventMeta) => unknown) | undefined;
    if (handler !== undefined) await handler(event, meta);
    await this.gate.delivered(event, meta);
  }
}
