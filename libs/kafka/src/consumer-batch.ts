import type { EachBatchPayload, KafkaMessage } from 'kafkajs';
import { correlationIdFromHeaders, runWithCorrelationId } from '@payments/logging';
import { startSpan } from '@payments/observability';
import type { ResolvedConsumerSettings } from './consumer-settings';
import { consumeSpan } from './consumer-spans';
import { sanitizeErrorText } from './dlq';
import { errorMessage } from './errors';
import type { KafkaMessageHandler } from './handler';
import type { KafkaLogger } from './logger';
import { type ConsumedMessage, decodeMessage } from './message';
import type { KafkaConsumerMetrics } from './metrics';

/** What a consumer group's batch calls need from its runner. */
export interface BatchCaller {
  readonly groupId: string;
  readonly settings: Pick<
    ResolvedConsumerSettings,
    'maxMessageBytes' | 'maxValueDepth' | 'heartbeatIntervalMs'
  >;
  readonly logger: KafkaLogger;
  readonly metrics: KafkaConsumerMetrics;
}

/**
 * The messages of `chunk` decoded for `handler`'s schema, or undefined when one of them does not
 * decode (the chunk then goes through the per-message path, which dead-letters that one).
 */
export function decodeChunk(
  caller: BatchCaller,
  handler: KafkaMessageHandler,
  batch: Pick<EachBatchPayload['batch'], 'topic' | 'partition'>,
  chunk: readonly KafkaMessage[],
): ConsumedMessage<unknown>[] | undefined {
  const { topic, partition } = batch;
  const { maxMessageBytes, maxValueDepth } = caller.settings;
  const decoded: ConsumedMessage<unknown>[] = [];
  for (const message of chunk) {
    const result = decodeMessage({ topic, partition, message }, handler.schema, {
      maxValueBytes: maxMessageBytes,
      maxDepth: maxValueDepth,
    });
    if (!result.ok) return undefined;
    decoded.push(result.message);
  }
  return decoded;
}

/**
 * One `handleBatch` call for the decoded messages of `chunk` (heartbeating while it runs, traced):
 * true when it returned (the caller commits the chunk), false when it threw (its messages go one
 * by one).
 */
export async function callBatch(
  caller: BatchCaller,
  handleBatch: (messages: readonly ConsumedMessage<unknown>[]) => Promise<void>,
  payload: EachBatchPayload,
  chunk: readonly KafkaMessage[],
  decoded: readonly ConsumedMessage<unknown>[],
): Promise<boolean> {
  const { groupId, metrics } = caller;
  const { topic, partition } = payload.batch;
  const keepAlive = setInterval(
    () => void payload.heartbeat().catch(() => undefined),
    caller.settings.heartbeatIntervalMs,
  );
  // One consume span per message (each continues its own trace, and the handler sees its
  // traceparent rewritten to it); the batch is handled in one span linked to all of them.
  const consumed = decoded.map((message) => consumeSpan(groupId, message));
  const traced = consumed.map((c) => c.message);
  const handleSpan = startSpan(`handle ${topic}`, {
    ...(consumed[0]?.span.traceparent === undefined
      ? {}
      : { parent: consumed[0].span.traceparent }),
    links: consumed.slice(1).map((c) => c.span.traceparent),
    attributes: { 'messaging.batch.message_count': traced.length },
  });
  let batchError: unknown;
  try {
    // The batch's log lines carry its first message's correlation id.
    const headers = traced[0]?.headers ?? {};
    await handleSpan.run(() =>
      runWithCorrelationId(correlationIdFromHeaders(headers), () => handleBatch(traced)),
    );
  } catch (error) {
    batchError = error;
    metrics.batchFallbacks.inc({ group: groupId, topic });
    caller.logger.debug(
      {
        groupId,
        topic,
        partition,
        from: chunk[0]?.offset,
        to: chunk[chunk.length - 1]?.offset,
        error: sanitizeErrorText(errorMessage(error)),
      },
      'batch failed; its messages go one by one',
    );
    return false;
  } finally {
    clearInterval(keepAlive);
    handleSpan.end(batchError);
    // A failed batch's messages go one by one, each in a consume span of its own.
    for (const c of consumed) c.span.end(batchError);
  }
  metrics.handled.inc({ group: groupId, topic }, chunk.length);
  metrics.batches.inc({ group: groupId, topic });
  return true;
}
