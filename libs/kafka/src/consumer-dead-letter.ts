import { type EachMessagePayload, KafkaJSNonRetriableError } from 'kafkajs';
import {
  buildDlqHeaders,
  dlqTopicFor,
  type DlqReason,
  maskDlqBytes,
  sanitizeErrorText,
} from './dlq';
import { errorMessage } from './errors';
import type { KafkaLogger } from './logger';
import type { KafkaConsumerMetrics } from './metrics';
import type { KafkaProducerService } from './producer.service';

/** What a consumer group's dead-letter writes need from its runner. */
export interface DeadLetterWriter {
  readonly groupId: string;
  readonly producer: Pick<KafkaProducerService, 'sendRaw'>;
  readonly logger: KafkaLogger;
  readonly metrics: KafkaConsumerMetrics;
  readonly sendTimeoutMs: number;
  /** Marks the consumer crashed (liveness fails) when the write is not acknowledged. */
  readonly markCrashed: (reason: string) => void;
}

/**
 * Writes the consumed message to its DLQ topic and waits for the acknowledgement; the caller
 * commits the offset only after this returns. A failed write marks the consumer crashed and
 * throws a non-retriable error into kafkajs: nothing is committed, never lose one.
 */
export async function writeDeadLetter(
  writer: DeadLetterWriter,
  payload: EachMessagePayload,
  reason: DlqReason,
  error: string,
): Promise<void> {
  const { topic, partition, message } = payload;
  const dlqTopic = dlqTopicFor(topic);
  const headers = buildDlqHeaders(message.headers, {
    reason,
    error,
    topic,
    partition,
    offset: message.offset,
    groupId: writer.groupId,
  });
  try {
    await writer.producer.sendRaw(
      dlqTopic,
      [{ key: maskDlqBytes(message.key), value: maskDlqBytes(message.value), headers }],
      { timeoutMs: writer.sendTimeoutMs },
    );
  } catch (sendError) {
    const why = sanitizeErrorText(errorMessage(sendError));
    writer.markCrashed(
      `dead-letter write to ${dlqTopic} failed for ${topic}/${partition}@${message.offset}: ${why}`,
    );
    // Non-retriable for kafkajs: no restart, nothing committed; the message is redelivered
    // to whichever consumer owns the partition next.
    throw new KafkaJSNonRetriableError(`dead-letter write failed: ${why}`);
  }
  writer.metrics.deadLettered.inc({ group: writer.groupId, topic, reason });
  writer.logger.warn(
    {
      ...coordinates(payload),
      groupId: writer.groupId,
      reason,
      error: sanitizeErrorText(error),
      dlqTopic,
    },
    'message dead-lettered',
  );
}

/** A consumed message's topic, partition and offset, for log lines. */
export function coordinates(payload: EachMessagePayload): Record<string, unknown> {
  return { topic: payload.topic, partition: payload.partition, offset: payload.message.offset };
}
