import {
  CompressionTypes,
  type Message,
  type Producer,
  type RecordMetadata,
  type TopicMessages,
} from 'kafkajs';
import { TimeoutError, withTimeout } from '@payments/core';

/** What the sender reports about itself (for logs and metrics); every field optional. */
export interface IdempotentSenderHooks {
  /** A produce call failed or timed out: its outcome is unknown and the producer was replaced. */
  readonly retired?: (error: unknown, messages: number) => void;
}

export interface IdempotentSenderOptions {
  /** Most messages one produce call carries when waiting sends are coalesced (default 500). */
  readonly maxBatchMessages?: number;
  readonly hooks?: IdempotentSenderHooks;
}

interface Pending {
  readonly topic: string;
  readonly messages: Message[];
  readonly deadline: number;
  readonly resolve: (metadata: RecordMetadata[]) => void;
  readonly reject: (error: unknown) => void;
  timer?: NodeJS.Timeout;
}

/** Thrown to a send asked for after the sender was closed (nothing was handed to kafkajs). */
export class SenderClosedError extends Error {
  constructor() {
    super('the Kafka producer is closed; nothing more is sent');
    this.name = 'SenderClosedError';
  }
}

/**
 * A kafkajs idempotent producer (acks from all in-sync replicas) used the only way that keeps an
 * acknowledgement true.
 *
 * kafkajs 2.2.4 numbers each partition's batches under a per-broker lock and, when a produce
 * request fails, hands the numbers back. If that request had in fact been written (the leader
 * replicated it and died before answering), the next batch for the partition takes the same
 * numbers; the new leader sees a retry of the batch it already has, answers success with that
 * batch's offset and drops the new one: acknowledged, never in the log. (Seen in
 * libs/kafka/test/cluster.int-spec.ts: message 58 acknowledged, absent from the log, after a
 * leader SIGKILL; a send the test had counted as failed was there in its place.) Two rules close
 * it:
 * - One produce call at a time. A failed request's own retries (inside kafkajs) re-send the same
 *   batch with the same numbers, which the broker de-duplicates; no other batch can take the
 *   numbers in between.
 * - A call that fails or times out (outcome unknown) retires the producer: the next call goes out
 *   on a new producer id, whose numbers cannot collide with anything the old one wrote. The old
 *   producer is disconnected in the background (its bounded retries may still land the batch —
 *   the caller was told "not acknowledged", never "not written").
 *
 * A third defect sits inside one call, and is fixed in kafkajs itself (patches/kafkajs+2.2.4.patch,
 * producer/sendMessages.js): a call spanning several leaders kept its answers per broker and, on a
 * retry, skipped every broker that had answered, so a partition whose leader moved to such a
 * broker ("not the leader" during a broker restart) was never sent and the call still resolved.
 * The patched call keeps answers per partition and re-sends exactly the unanswered ones (seen and
 * held in libs/kafka/test/cluster.int-spec.ts: 13–21 acknowledged messages missing from the log
 * per run before the patch, none after).
 *
 * Sends that arrive while a call is in flight wait and go out together in the next call (one
 * sendBatch, in arrival order, so per-key order holds), so serialising costs little throughput.
 * Each send has its own deadline, counted from the moment it was asked for: one still waiting
 * when it passes is dropped unsent (TimeoutError); a call in flight is bounded by the earliest
 * deadline among its sends and they share its outcome.
 */
export class IdempotentSender {
  private producer: Producer;
  private connecting: Promise<void> | undefined;
  private readonly waiting: Pending[] = [];
  /** True from the first waiting send until the flush loop has seen the queue empty. */
  private flushing = false;
  private drained: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly maxBatchMessages: number;

  constructor(
    private readonly createProducer: () => Producer,
    private readonly options: IdempotentSenderOptions = {},
  ) {
    this.producer = createProducer();
    this.maxBatchMessages = options.maxBatchMessages ?? 500;
    if (!Number.isInteger(this.maxBatchMessages) || this.maxBatchMessages < 1) {
      throw new RangeError(
        `maxBatchMessages must be a whole number >= 1, got ${this.maxBatchMessages}`,
      );
    }
  }

  /** Connects the current producer (once; again after a failed attempt or a retirement). */
  connect(): Promise<void> {
    const producer = this.producer;
    this.connecting ??= producer.connect().catch((error: unknown) => {
      if (this.producer === producer) this.connecting = undefined;
      throw error;
    });
    return this.connecting;
  }

  /** Resolves once every message is acknowledged by all in-sync replicas. */
  send(topic: string, messages: Message[], timeoutMs: number): Promise<RecordMetadata[]> {
    if (this.closed) return Promise.reject(new SenderClosedError());
    if (messages.length === 0) return Promise.resolve([]);
    const sent = this.enqueue(topic, messages, timeoutMs);
    this.startFlush();
    return sent;
  }

  /**
   * Several topics' messages asked for together: queued in the order given before a call starts,
   * so they go out in one produce call (split only past maxBatchMessages) and resolve with the
   * metadata of all of them once every one is acknowledged. Per partition, a failed call's
   * messages are all re-sent by the caller in their order, so nothing of a key overtakes them.
   */
  sendAll(
    groups: ReadonlyArray<{ readonly topic: string; readonly messages: Message[] }>,
    timeoutMs: number,
  ): Promise<RecordMetadata[]> {
    if (this.closed) return Promise.reject(new SenderClosedError());
    const sends = groups
      .filter((g) => g.messages.length > 0)
      .map((g) => this.enqueue(g.topic, g.messages, timeoutMs));
    if (sends.length === 0) return Promise.resolve([]);
    this.startFlush();
    return Promise.all(sends).then((metadata) => metadata.flat());
  }

  /** Starts the flush loop unless it runs (it takes what waits, in arrival order). */
  private startFlush(): void {
    if (this.flushing) return;
    this.flushing = true;
    this.drained = this.flush();
  }

  private enqueue(
    topic: string,
    messages: Message[],
    timeoutMs: number,
  ): Promise<RecordMetadata[]> {
    return new Promise((resolve, reject) => {
      const pending: Pending = {
        topic,
        messages,
        deadline: Date.now() + timeoutMs,
        resolve,
        reject,
      };
      pending.timer = setTimeout(() => {
        const at = this.waiting.indexOf(pending);
        if (at < 0) return; // already handed to kafkajs: the call's own deadline answers
        this.waiting.splice(at, 1);
        reject(new TimeoutError(`Kafka send to ${topic}: not sent within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.timer.unref();
      this.waiting.push(pending);
    });
  }

  /**
   * Refuses new sends, lets what was already asked for go out (each send still bounded by its own
   * deadline), then disconnects.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.drained;
    await this.producer.disconnect();
  }

  /** Sends until the queue is empty; the flag drops in the same tick as the last check. */
  private async flush(): Promise<void> {
    try {
      while (this.waiting.length > 0) await this.produce(this.take());
    } finally {
      this.flushing = false;
    }
  }

  /** The oldest waiting sends, up to maxBatchMessages (always at least one send). */
  private take(): Pending[] {
    let count = 0;
    let taken = 0;
    while (taken < this.waiting.length) {
      const size = this.waiting[taken]?.messages.length ?? 0;
      if (taken > 0 && count + size > this.maxBatchMessages) break;
      count += size;
      taken++;
    }
    const batch = this.waiting.splice(0, taken);
    for (const pending of batch) clearTimeout(pending.timer);
    return batch;
  }

  private async produce(batch: Pending[]): Promise<void> {
    const producer = this.producer;
    const timeoutMs = Math.max(1, Math.min(...batch.map((p) => p.deadline)) - Date.now());
    const byTopic = new Map<string, Message[]>();
    for (const { topic, messages } of batch) {
      const list = byTopic.get(topic) ?? [];
      list.push(...messages);
      byTopic.set(topic, list);
    }
    const topicMessages: TopicMessages[] = [...byTopic].map(([topic, messages]) => ({
      topic,
      messages,
    }));
    const topics = [...byTopic.keys()].join(', ');
    try {
      await withTimeout(this.connect(), timeoutMs, 'Kafka producer connect');
      const metadata = await withTimeout(
        producer.sendBatch({ topicMessages, acks: -1, compression: CompressionTypes.None }),
        timeoutMs,
        `Kafka send to ${topics}`,
      );
      for (const pending of batch) {
        pending.resolve(metadata.filter((m) => m.topicName === pending.topic));
      }
    } catch (error) {
      this.retire(producer, error, batch);
      for (const pending of batch) pending.reject(error);
    }
  }

  private retire(producer: Producer, error: unknown, batch: readonly Pending[]): void {
    if (this.producer !== producer) return;
    this.producer = this.createProducer();
    this.connecting = undefined;
    void producer.disconnect().catch(() => undefined);
    this.options.hooks?.retired?.(
      error,
      batch.reduce((n, p) => n + p.messages.length, 0),
    );
  }
}
