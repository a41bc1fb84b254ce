import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import {
  type Admin,
  type Consumer,
  type EachBatchPayload,
  type EachMessagePayload,
  type KafkaMessage,
} from 'kafkajs';
import { sleep, withTimeout } from '@payments/core';
import { correlationIdFromHeaders, runWithCorrelationId } from '@payments/logging';
import { type HealthCheck, type SpanScope, startSpan } from '@payments/observability';
import { backoffDelay, validateRetryPolicy } from './backoff';
import { type BatchCaller, callBatch, decodeChunk } from './consumer-batch';
import { coordinates, type DeadLetterWriter, writeDeadLetter } from './consumer-dead-letter';
import { ConsumerStoppingError, rebalanceCause } from './consumer-errors';
import { topicLag } from './consumer-lag';
import {
  type ConsumerRunnerDeps,
  type ConsumerState,
  indexHandlers,
  RestartBudget,
} from './consumer-settings';
import { consumeSpan } from './consumer-spans';
import { dlqTopicFor, type DlqReason, sanitizeErrorText } from './dlq';
import { errorMessage, isNonRetriable, whileMetadataSettles } from './errors';
import type { KafkaMessageHandler } from './handler';
import type { ConsumedMessage } from './message';
import { decodeMessage } from './message';
import { kafkaConsumerMetrics, type KafkaConsumerMetrics } from './metrics';
import { ensureTopics } from './topics';

export { rebalanceCause } from './consumer-errors';
export {
  type ConsumerRunnerDeps,
  type ConsumerState,
  indexHandlers,
  type ResolvedConsumerSettings,
  resolveConsumerSettings,
} from './consumer-settings';

/*
 * Why a Nest-managed consumer (a provider with lifecycle hooks) and not a `@nestjs/microservices`
 * CustomTransportStrategy (`class extends Server`), although DESIGN.md names the latter:
 *  1. The runner must tell a PoisonMessageError from a retriable failure. Handlers run through
 *     Nest's RPC pipeline lose that: RpcExceptionsHandler turns any non-RpcException into
 *     `{ status: 'error', message: 'Internal server error' }`, and `Server.handleEvent` drops
 *     errors of event handlers entirely. Fixing that needs a global exception filter, which also
 *     touches the HTTP side of hybrid apps.
 *  2. The commit policy, retries and DLQ need the decoded, schema-validated message and the
 *     kafkajs payload (heartbeat, offsets) — a transport would bypass Nest's pipes/guards anyway.
 *  3. Health checks and tests need the runner from DI (`app.get(...)`); a strategy instance is
 *     built in main.ts outside the container, and needs `connectMicroservice` +
 *     `startAllMicroservices` that apps can forget.
 *  4. Shutdown order is explicit: `beforeApplicationShutdown` (here) runs before every
 *     `onApplicationShutdown` (TypeORM closes its DataSource there, the producer disconnects
 *     there), whereas a transport's close() runs inside `dispose()` with no documented order.
 * Handlers stay thin transport adapters (STYLE.md practice 1): a provider with topic, schema and
 * `handle`, registered with `KafkaModule.forConsumer({ groupId, handlers: [...] })`.
 */

type Outcome = 'committed' | 'left-uncommitted';

/**
 * Runs one consumer group over the topics of its handlers and owns the commit policy:
 *  - handler returns → offset+1 committed (autoCommit is off; one explicit commit per message);
 *  - handler throws a retriable error → retried in place (bounded exponential backoff, heartbeats
 *    while waiting), then dead-lettered as `retries-exhausted`;
 *  - not JSON / schema mismatch / PoisonMessageError → dead-lettered at once (`parse`, `schema`,
 *    `non-retriable`); the DLQ record is acknowledged BEFORE the offset is committed;
 *  - DLQ write fails → nothing committed, the consumer crashes (liveness fails): never lose one.
 * Partitions are consumed `partitionsConsumedConcurrently` at a time; within a partition strictly
 * one message after another, so order per key is kept.
 *
 * Handlers with `handleBatch` (batch mode: kafkajs eachBatch): the consecutive messages of a fetched
 * batch, up to `maxBatchMessages`, all decoded, go to `handleBatch` in one call and are committed
 * once after it returns. If a message does not decode, or the call throws, the same messages go
 * through the per-message path above (its retries, dead letters and commits), in order.
 */
export class KafkaConsumerRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly groupId: string;
  readonly liveness: HealthCheck;

  private state: ConsumerState = 'idle';
  private crashReason: string | undefined;
  private consumer: Consumer | undefined;
  private admin: Admin | undefined;
  private handlerByTopic = new Map<string, KafkaMessageHandler>();
  private readonly restartBudget: RestartBudget;
  private lagTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly abort = new AbortController();
  private readonly metrics: KafkaConsumerMetrics = kafkaConsumerMetrics();
  private readonly deadLetterWriter: DeadLetterWriter;
  private readonly batchCaller: BatchCaller;
  private readonly joined: Promise<void>;
  private markJoined: () => void = () => undefined;

  constructor(private readonly deps: ConsumerRunnerDeps) {
    this.groupId = deps.settings.groupId;
    this.restartBudget = new RestartBudget(deps.settings);
    validateRetryPolicy(deps.settings.retry);
    this.deadLetterWriter = {
      groupId: this.groupId,
      producer: deps.producer,
      logger: deps.logger,
      metrics: this.metrics,
      sendTimeoutMs: deps.settings.sendTimeoutMs,
      markCrashed: (reason) => this.markCrashed(reason),
    };
    this.batchCaller = {
      groupId: this.groupId,
      settings: deps.settings,
      logger: deps.logger,
      metrics: this.metrics,
    };
    this.joined = new Promise((resolve) => {
      this.markJoined = resolve;
    });
    this.liveness = {
      name: `kafka-consumer:${this.groupId}`,
      check: () => {
        if (this.state === 'crashed') {
          throw new Error(`consumer crashed: ${this.crashReason ?? 'unknown reason'}`);
        }
      },
    };
  }

  get status(): { readonly state: ConsumerState; readonly reason?: string } {
    return this.crashReason === undefined
      ? { state: this.state }
      : { state: this.state, reason: this.crashReason };
  }

  get topics(): string[] {
    return [...this.handlerByTopic.keys()];
  }

  /** Resolves when the consumer first joined its group (and got partitions assigned). */
  whenJoined(): Promise<void> {
    return this.joined;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.deps.settings.autoStart) await this.start();
  }

  /** Runs before any onApplicationShutdown hook: the database and the producer are still up. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  async start(): Promise<void> {
    if (this.state !== 'idle') throw new Error(`consumer ${this.groupId} already ${this.state}`);
    this.state = 'starting';
    const { settings, kafka, logger } = this.deps;
    try {
      this.handlerByTopic = indexHandlers(this.deps.handlers());
      const topics = this.topics;
      this.admin = kafka.admin();
      await this.admin.connect();
      await ensureTopics(
        this.admin,
        topics
          .flatMap((topic) => [topic, dlqTopicFor(topic)])
          .map((topic) => ({
            topic,
            numPartitions: settings.topicPartitions,
            replicationFactor: settings.replicationFactor,
            minInsyncReplicas: settings.minInsyncReplicas,
          })),
        logger,
      );
      const consumer = kafka.consumer({
        groupId: settings.groupId,
        sessionTimeout: settings.sessionTimeoutMs,
        heartbeatInterval: settings.heartbeatIntervalMs,
        maxWaitTimeInMs: settings.maxWaitTimeMs,
        allowAutoTopicCreation: false,
        retry: { restartOnFailure: (error) => Promise.resolve(this.shouldRestart(error)) },
      });
      this.consumer = consumer;
      consumer.on(consumer.events.GROUP_JOIN, (event) => {
        this.restartBudget.joined();
        logger.info(
          {
            groupId: this.groupId,
            memberId: event.payload.memberId,
            assignment: event.payload.memberAssignment,
          },
          'consumer joined its group',
        );
        this.markJoined();
      });
      consumer.on(consumer.events.CRASH, (event) => {
        const reason = sanitizeErrorText(errorMessage(event.payload.error));
        if (event.payload.restart) {
          logger.warn(
            { groupId: this.groupId, error: reason },
            'consumer crashed; kafkajs restarts it',
          );
        } else {
          this.markCrashed(reason);
        }
      });
      await consumer.connect();
      await whileMetadataSettles(() =>
        consumer.subscribe({ topics, fromBeginning: settings.fromBeginning }),
      );
      const batched = [...this.handlerByTopic.values()].some((h) => h.handleBatch !== undefined);
      await consumer.run({
        autoCommit: false,
        partitionsConsumedConcurrently: settings.partitionsConsumedConcurrently,
        ...(batched
          ? { eachBatch: (payload: EachBatchPayload) => this.onBatch(payload) }
          : { eachMessage: (payload: EachMessagePayload) => this.onMessage(payload) }),
      });
      if (this.state === 'starting') this.state = 'running';
      if (settings.lagIntervalMs > 0) {
        this.lagTimer = setInterval(() => void this.refreshLagQuietly(), settings.lagIntervalMs);
        this.lagTimer.unref();
      }
      logger.info({ groupId: this.groupId, topics }, 'consumer started');
    } catch (error) {
      this.markCrashed(`start failed: ${sanitizeErrorText(errorMessage(error))}`);
      await this.disconnectQuietly();
      throw error;
    }
  }

  /**
   * Graceful stop: pause every partition (no new fetches), wake handlers waiting for a retry
   * (their message stays uncommitted and is redelivered), let in-flight handlers finish and commit,
   * leave the group, disconnect. Safe to call more than once.
   */
  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    const { logger, settings } = this.deps;
    if (this.lagTimer) clearInterval(this.lagTimer);
    if (this.state === 'idle') {
      this.state = 'stopped';
      return;
    }
    const crashed = this.state === 'crashed';
    if (!crashed) this.state = 'stopping';
    this.abort.abort();
    try {
      this.consumer?.pause(this.topics.map((topic) => ({ topic })));
    } catch {
      // Not running (never started or crashed): nothing to pause.
    }
    try {
      // Drain BEFORE disconnecting: once kafkajs is stopping, `consumer.commitOffsets` silently
      // does nothing (runner.commitOffsets returns when !running), so an in-flight message that
      // finished during disconnect() would be handled but not committed, and handled again later.
      await withTimeout(this.whenIdle(), settings.shutdownTimeoutMs, 'in-flight messages');
    } catch (error) {
      logger.error(
        {
          groupId: this.groupId,
          inFlight: this.inFlight,
          error: sanitizeErrorText(errorMessage(error)),
        },
        'in-flight messages did not finish in time; they will be redelivered',
      );
    }
    try {
      if (this.consumer) {
        await withTimeout(this.consumer.disconnect(), settings.shutdownTimeoutMs, 'consumer stop');
      }
    } catch (error) {
      logger.error(
        { groupId: this.groupId, error: sanitizeErrorText(errorMessage(error)) },
        'consumer did not stop cleanly; uncommitted messages will be redelivered',
      );
    }
    await this.admin?.disconnect().catch(() => undefined);
    if (!crashed) this.state = 'stopped';
    logger.info({ groupId: this.groupId }, 'consumer stopped');
  }

  private whenIdle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Lag per topic (high watermark minus committed offset, summed over partitions; a partition
   * without a committed offset counts from its low watermark) — also sets the lag gauge.
   */
  async refreshLag(): Promise<Map<string, number>> {
    const admin = this.admin;
    if (!admin) throw new Error('consumer not started');
    const result = new Map<string, number>();
    for (const topic of this.topics) {
      const lag = await topicLag(admin, this.groupId, topic);
      result.set(topic, lag);
      this.metrics.lag.set({ group: this.groupId, topic }, lag);
    }
    return result;
  }

  private async refreshLagQuietly(): Promise<void> {
    if (this.state !== 'running') return;
    try {
      await this.refreshLag();
    } catch (error) {
      this.deps.logger.debug(
        { groupId: this.groupId, error: errorMessage(error) },
        'lag refresh failed',
      );
    }
  }

  private shouldRestart(error: Error): boolean {
    if (!this.isActive()) return false;
    const { restart, ...spent } = this.restartBudget.crashed(Date.now());
    if (!restart) {
      this.deps.logger.error(
        { groupId: this.groupId, ...spent, error: sanitizeErrorText(errorMessage(error)) },
        'consumer keeps crashing; giving up',
      );
    }
    return restart;
  }

  private markCrashed(reason: string): void {
    if (this.state === 'stopped' || this.state === 'crashed') return;
    this.state = 'crashed';
    this.crashReason ??= reason;
    if (this.lagTimer) clearInterval(this.lagTimer);
    this.deps.logger.error(
      { groupId: this.groupId, reason },
      'consumer crashed; liveness now fails',
    );
  }

  /** Batch mode: chunks to `handleBatch`, falling back to the per-message path chunk by chunk. */
  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const handler = this.handlerByTopic.get(batch.topic);
    const max = this.deps.settings.maxBatchMessages;
    for (let start = 0; start < batch.messages.length; start += max) {
      const chunk = batch.messages.slice(start, start + max);
      if (chunk.length > 1 && handler?.handleBatch !== undefined) {
        if (await this.tryBatch(handler, payload, chunk)) continue;
      }
      for (const message of chunk) {
        await this.onMessage({
          topic: batch.topic,
          partition: batch.partition,
          message,
          heartbeat: () => payload.heartbeat(),
          pause: () => payload.pause(),
        });
        payload.resolveOffset(message.offset);
      }
    }
  }

  /** One `handleBatch` call for `chunk`; true when handled and committed, false to go one by one. */
  private async tryBatch(
    handler: KafkaMessageHandler,
    payload: EachBatchPayload,
    chunk: readonly KafkaMessage[],
  ): Promise<boolean> {
    if (!this.isActive()) throw new ConsumerStoppingError();
    const { topic, partition } = payload.batch;
    const decoded = decodeChunk(this.batchCaller, handler, payload.batch, chunk);
    if (decoded === undefined) return false;
    const handleBatch = handler.handleBatch?.bind(handler);
    if (handleBatch === undefined) return false;
    const last = chunk[chunk.length - 1];
    if (last === undefined) return false;
    return this.inFlightWork(async () => {
      if (!(await callBatch(this.batchCaller, handleBatch, payload, chunk, decoded))) return false;
      await this.commitNext(topic, partition, last.offset);
      payload.resolveOffset(last.offset);
      return true;
    });
  }

  /** Runs `work` counted in flight: a stop waits for it (whenIdle) before it disconnects. */
  private async inFlightWork<T>(work: () => Promise<T>): Promise<T> {
    this.inFlight += 1;
    try {
      return await work();
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  private async onMessage(payload: EachMessagePayload): Promise<void> {
    // Anything reached after a stop began (or after a crash) is neither handled nor committed.
    if (!this.isActive()) throw new ConsumerStoppingError();
    const outcome = await this.inFlightWork(() => this.process(payload));
    if (outcome === 'left-uncommitted') {
      this.deps.logger.info(
        {
          groupId: this.groupId,
          topic: payload.topic,
          partition: payload.partition,
          offset: payload.message.offset,
        },
        'stopping: message left uncommitted for redelivery',
      );
      // Keep kafkajs from moving on to later messages of this batch.
      throw new ConsumerStoppingError();
    }
  }

  private async process(payload: EachMessagePayload): Promise<Outcome> {
    const { topic } = payload;
    const handler = this.handlerByTopic.get(topic);
    if (!handler) return this.deadLetter(payload, 'non-retriable', `no handler for topic ${topic}`);
    const { maxMessageBytes, maxValueDepth } = this.deps.settings;
    const decoded = decodeMessage(payload, handler.schema, {
      maxValueBytes: maxMessageBytes,
      maxDepth: maxValueDepth,
    });
    if (!decoded.ok) return this.deadLetter(payload, decoded.reason, decoded.error);

    const { span, message } = consumeSpan(this.groupId, decoded.message);
    let outcome: Outcome | undefined;
    try {
      outcome = await this.handleWithRetries(payload, handler, message, span);
      return outcome;
    } finally {
      span.setAttributes({ 'payments.outcome': outcome ?? 'failed' });
      span.end();
    }
  }

  private async handleWithRetries(
    payload: EachMessagePayload,
    handler: KafkaMessageHandler,
    consumed: ConsumedMessage<unknown>,
    span: SpanScope,
  ): Promise<Outcome> {
    const { topic } = payload;
    const labels = { group: this.groupId, topic };
    const policy = this.deps.settings.retry;
    const correlationId = correlationIdFromHeaders(consumed.headers);
    for (let retry = 0; ; retry++) {
      let failure: { error: unknown } | undefined;
      // kafkajs heartbeats only between messages: keep the session alive while a handler runs
      // longer than the (short) session timeout, e.g. a slow gateway call.
      const keepAlive = setInterval(
        () => void payload.heartbeat().catch(() => undefined),
        this.deps.settings.heartbeatIntervalMs,
      );
      const handleSpan = startSpan(`handle ${topic}`, {
        ...(span.traceparent === undefined ? {} : { parent: span.traceparent }),
        attributes: { 'payments.attempt': retry + 1 },
      });
      try {
        await handleSpan.run(() =>
          runWithCorrelationId(correlationId, () => handler.handle(consumed)),
        );
      } catch (error) {
        failure = { error };
      } finally {
        clearInterval(keepAlive);
        handleSpan.end(failure?.error);
      }
      if (!failure) {
        this.metrics.handled.inc(labels);
        await this.commit(payload);
        return 'committed';
      }
      this.metrics.failed.inc(labels);
      const message = errorMessage(failure.error);
      if (isNonRetriable(failure.error)) return this.deadLetter(payload, 'non-retriable', message);
      const unavailable = handler.isUnavailable?.(failure.error) === true;
      if (retry >= policy.retries && !unavailable) {
        return this.deadLetter(
          payload,
          'retries-exhausted',
          `after ${retry + 1} attempts: ${message}`,
        );
      }
      if (!this.isActive()) return 'left-uncommitted';
      const delayMs = backoffDelay(retry + 1, policy);
      this.deps.logger.warn(
        {
          ...coordinates(payload),
          groupId: this.groupId,
          attempt: retry + 1,
          delayMs,
          ...(unavailable ? { unavailable: true } : {}),
          error: sanitizeErrorText(message),
        },
        'handler failed; retrying',
      );
      if (!(await this.waitWithHeartbeat(delayMs, payload))) return 'left-uncommitted';
    }
  }

  /** Waits `ms` while heartbeating; false when a stop interrupted the wait. */
  private async waitWithHeartbeat(ms: number, payload: EachMessagePayload): Promise<boolean> {
    const step = Math.max(100, this.deps.settings.heartbeatIntervalMs);
    let remaining = ms;
    while (remaining > 0) {
      const chunk = Math.min(step, remaining);
      if (!(await sleep(chunk, this.abort.signal))) return false;
      remaining -= chunk;
      // A rebalance error here propagates to kafkajs: the message stays uncommitted, redelivered.
      await payload.heartbeat();
    }
    return this.isActive();
  }

  private isActive(): boolean {
    return this.state === 'running' || this.state === 'starting';
  }

  private async deadLetter(
    payload: EachMessagePayload,
    reason: DlqReason,
    error: string,
  ): Promise<Outcome> {
    await writeDeadLetter(this.deadLetterWriter, payload, reason, error);
    await this.commit(payload);
    return 'committed';
  }

  private commit(payload: EachMessagePayload): Promise<void> {
    return this.commitNext(payload.topic, payload.partition, payload.message.offset);
  }

  /** Commits `offset + 1` (the next message to read) of one partition. */
  private async commitNext(topic: string, partition: number, offset: string): Promise<void> {
    const consumer = this.consumer;
    if (!consumer) throw new Error('consumer not started');
    const next = (BigInt(offset) + 1n).toString();
    try {
      await consumer.commitOffsets([{ topic, partition, offset: next }]);
    } catch (error) {
      // A rebalance raced the commit (seen on the three-node cluster when a broker died):
      // kafkajs wraps the protocol error as non-retriable and the consumer crashed for good.
      // Hand kafkajs the protocol error itself, which it answers by re-joining the group; the
      // message was not committed and comes again (handlers are idempotent).
      throw rebalanceCause(error) ?? error;
    }
  }

  private async disconnectQuietly(): Promise<void> {
    await this.consumer?.disconnect().catch(() => undefined);
    await this.admin?.disconnect().catch(() => undefined);
  }
}
