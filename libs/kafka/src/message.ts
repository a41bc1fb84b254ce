import type { KafkaMessage } from 'kafkajs';
import type { z } from 'zod';
import { decodeHeaders } from './headers';

/** What a handler receives: the validated value and the message's coordinates. */
export interface ConsumedMessage<T> {
  readonly topic: string;
  readonly partition: number;
  /** Kafka offset as a decimal string (offsets are 64-bit). */
  readonly offset: string;
  /** The record key as UTF-8 (by convention the payment id), or null. */
  readonly key: string | null;
  /** The value parsed as JSON and validated by the handler's schema. */
  readonly value: T;
  /** Header values decoded to UTF-8 strings (last value of a repeated name). */
  readonly headers: Readonly<Record<string, string>>;
  /** Record timestamp, epoch ms as a decimal string. */
  readonly timestamp: string;
}

/** Why a message cannot be handled at all: `parse` (not JSON) or `schema` (JSON, wrong shape). */
export type DecodeFailureReason = 'parse' | 'schema';

export type DecodeResult<T> =
  | { readonly ok: true; readonly message: ConsumedMessage<T> }
  | { readonly ok: false; readonly reason: DecodeFailureReason; readonly error: string };

export interface RawMessage {
  readonly topic: string;
  readonly partition: number;
  readonly message: Pick<KafkaMessage, 'key' | 'value' | 'headers' | 'offset' | 'timestamp'>;
}

const MAX_ISSUES = 5;

/** Summary of schema issues as `path: message` (zod messages describe types, not values). */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const shown = issues.slice(0, MAX_ISSUES).map((issue) => {
    const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
    return `${path}: ${issue.message}`;
  });
  const more = issues.length > MAX_ISSUES ? `; and ${issues.length - MAX_ISSUES} more` : '';
  return shown.join('; ') + more;
}

/** Parses the value as JSON and validates it; never throws. */
export function decodeMessage<T>(raw: RawMessage, schema: z.ZodType<T>): DecodeResult<T> {
  const { message } = raw;
  if (message.value === null || message.value.length === 0) {
    return { ok: false, reason: 'parse', error: 'empty value (tombstone or no payload)' };
  }
  let json: unknown;
  try {
    json = JSON.parse(message.value.toString('utf8'));
  } catch (error) {
    // SyntaxError messages can quote a fragment of the input: keep only the position.
    const detail = error instanceof Error ? /position \d+/.exec(error.message)?.[0] : undefined;
    return {
      ok: false,
      reason: 'parse',
      error: `value is not valid JSON${detail ? ` (at ${detail})` : ''}`,
    };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    return {
      ok: false,
      reason: 'schema',
      error: `value does not match the schema: ${describeIssues(parsed.error.issues)}`,
    };
  }
  return {
    ok: true,
    message: {
      topic: raw.topic,
      partition: raw.partition,
      offset: message.offset,
      key: message.key === null ? null : message.key.toString('utf8'),
      value: parsed.data,
      headers: decodeHeaders(message.headers),
      timestamp: message.timestamp,
    },
  };
}
