import { randomUUID } from 'node:crypto';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { withTimeout } from '@payments/core';
import type { DeadLetterRecord } from './dead-letters';
import { DLQ_SUFFIX } from './dlq';

export type ReadRecord = KafkaMessage & { readonly topic: string; readonly partition: number };

/**
 * Reads every record of `topics` that is there now (up to each partition's high watermark, taken
 * first), in offset order per partition, through a throw-away consumer group that commits nothing
 * and is deleted afterwards. Resolves with how many records were read.
 */
export async function readToEnd(
  kafka: Kafka,
  topics: readonly string[],
  onRecord: (record: ReadRecord) => Promise<void> | void,
  timeoutMs = 120_000,
): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  const groupId = `payments-read-${randomUUID()}`;
  const remaining = new Map<string, bigint>(); // `${topic}/${partition}` → last offset to read
  try {
    for (const topic of topics) {
      for (const p of await admin.fetchTopicOffsets(topic)) {
        if (BigInt(p.high) > BigInt(p.low))
          remaining.set(`${topic}/${p.partition}`, BigInt(p.high) - 1n);
      }
    }
    if (remaining.size === 0) return 0;
    const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200 });
    let read = 0;
    let finish!: () => void;
    let fail!: (error: unknown) => void;
    const finished = new Promise<void>((resolve, reject) => {
      finish = resolve;
      fail = reject;
    });
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: [...topics], fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachMessage: async ({ topic, partition, message }) => {
          const key = `${topic}/${partition}`;
          const last = remaining.get(key);
          if (last === undefined || BigInt(message.offset) > last) return;
          try {
            await onRecord({ ...message, topic, partition });
          } catch (error) {
            fail(error);
            return;
          }
          read++;
          if (BigInt(message.offset) >= last) remaining.delete(key);
          if (remaining.size === 0) finish();
        },
      });
      await withTimeout(finished, timeoutMs, `reading ${topics.join(', ')} to the end`);
      return read;
    } finally {
      await consumer.disconnect();
    }
  } finally {
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
  }
}

/** A record read from a dead-letter topic, as dead-letters.ts takes it. */
export function deadLetterRecordOf(m: ReadRecord): DeadLetterRecord {
  return {
    topic: m.topic,
    partition: m.partition,
    offset: m.offset,
    timestamp: m.timestamp,
    key: m.key,
    value: m.value,
    headers: m.headers ?? {},
  };
}

/** The dead-letter topics (`*.dlq`) that exist now, sorted. */
export async function existingDeadLetterTopics(kafka: Kafka): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.listTopics()).filter((t) => t.endsWith(DLQ_SUFFIX)).sort();
  } finally {
    await admin.disconnect();
  }
}
