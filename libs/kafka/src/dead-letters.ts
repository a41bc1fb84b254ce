/**
 * Which dead letters an operator picked, and how one goes back to where it came from. Pure: the
 * CLI's `dlq` commands and the orchestrator's admin API read records (read-to-end.ts) and hand
 * them here, so both list and replay by the same rules.
 */
import { DLQ_HEADER as DLQ_HEADERS, DLQ_SUFFIX } from './dlq';

/** Set on a replayed record: the dead letter it came from (`<topic>/<partition>/<offset>`). */
export const REPLAYED_FROM_HEADER = 'dlq-replayed-from';

export type HeaderValue = Buffer | string | Array<Buffer | string> | undefined;
export type Headers = Readonly<Record<string, HeaderValue>>;

export interface DeadLetterRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  /** Epoch ms, as kafkajs gives it (a string). */
  readonly timestamp: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Headers;
}

export interface DeadLetter {
  readonly at: string;
  readonly dlqTopic: string;
  readonly partition: number;
  readonly offset: string;
  readonly time: string;
  readonly key: string | null;
  readonly reason: string;
  readonly error: string;
  readonly originalTopic: string | undefined;
  readonly originalPartition: string | undefined;
  readonly originalOffset: string | undefined;
  readonly consumerGroup: string | undefined;
  readonly replayedFrom: string | undefined;
  readonly bytes: number;
}

export interface DeadLetterFilter {
  readonly reasons?: readonly string[];
  readonly originalTopics?: readonly string[];
  /** A regular expression the record key must match. */
  readonly key?: RegExp;
  /** Only records written at or after this time. */
  readonly since?: Date;
}

function text(value: HeaderValue): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
}

export function describeDeadLetter(record: DeadLetterRecord): DeadLetter {
  const h = record.headers;
  const timestamp = Number(record.timestamp);
  return {
    at: `${record.topic}/${record.partition}/${record.offset}`,
    dlqTopic: record.topic,
    partition: record.partition,
    offset: record.offset,
    time: Number.isFinite(timestamp) ? new Date(timestamp).toISOString() : 'unknown',
    key: record.key === null ? null : record.key.toString(),
    reason: text(h[DLQ_HEADERS.reason]) ?? 'unknown',
    error: text(h[DLQ_HEADERS.error]) ?? '',
    originalTopic: text(h[DLQ_HEADERS.originalTopic]),
    originalPartition: text(h[DLQ_HEADERS.originalPartition]),
    originalOffset: text(h[DLQ_HEADERS.originalOffset]),
    consumerGroup: text(h[DLQ_HEADERS.consumerGroup]),
    replayedFrom: text(h[REPLAYED_FROM_HEADER]),
    bytes: record.value?.length ?? 0,
  };
}

export function matches(letter: DeadLetter, filter: DeadLetterFilter): boolean {
  if (filter.reasons?.length && !filter.reasons.includes(letter.reason)) return false;
  if (filter.originalTopics?.length) {
    if (letter.originalTopic === undefined || !filter.originalTopics.includes(letter.originalTopic))
      return false;
  }
  if (filter.key !== undefined && (letter.key === null || !filter.key.test(letter.key)))
    return false;
  if (filter.since !== undefined && !(Date.parse(letter.time) >= filter.since.getTime()))
    return false;
  return true;
}

export interface Replay {
  readonly topic: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Record<string, Buffer | string>;
}

/**
 * The record to produce again: same key and value, the original headers without the `dlq-*` ones,
 * plus `dlq-replayed-from`. Undefined (with the reason) when it cannot go back: no original topic,
 * or the original topic is itself a dead-letter topic.
 */
export function replayOf(record: DeadLetterRecord): Replay | { readonly refused: string } {
  const original = text(record.headers[DLQ_HEADERS.originalTopic]);
  if (original === undefined || original === '') {
    return { refused: `no ${DLQ_HEADERS.originalTopic} header` };
  }
  if (original.endsWith(DLQ_SUFFIX))
    return { refused: `the original topic ${original} is a dead-letter topic` };
  const kept: Array<[string, Buffer | string]> = [];
  for (const [name, value] of Object.entries(record.headers)) {
    if (name.startsWith('dlq-') || value === undefined) continue;
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) kept.push([name, first]);
  }
  kept.push([REPLAYED_FROM_HEADER, `${record.topic}/${record.partition}/${record.offset}`]);
  // fromEntries defines own properties: a header named `__proto__` survives (an assignment would
  // set the object's prototype instead and drop it; found by the property test).
  const headers = Object.fromEntries(kept) as Record<string, Buffer | string>;
  return { topic: original, key: record.key, value: record.value, headers };
}
