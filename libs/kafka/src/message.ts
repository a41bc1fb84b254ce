import type { KafkaMessage } from 'kafkajs';
import type { z } from 'zod';
import { errorMessage } from './errors';
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

/**
 * Limits that make a value poison before it is parsed or handled: a value too
 * big, or nested too deep for recursive code (zod, scans, JSON.stringify, drivers) to walk without
 * a stack overflow. Checked on the bytes and the text, never by recursion.
 */
export interface DecodeLimits {
  /** Largest value accepted, in bytes (KAFKA_MAX_MESSAGE_BYTES); default 1 MiB. */
  readonly maxValueBytes: number;
  /** Deepest nesting of objects and arrays accepted (KAFKA_MAX_VALUE_DEPTH); default 64. */
  readonly maxDepth: number;
}

export const DEFAULT_DECODE_LIMITS: DecodeLimits = { maxValueBytes: 1_048_576, maxDepth: 64 };

/**
 * The deepest nesting of `{`/`[` in JSON text, counting only outside strings; stops early once
 * past `limit`. One linear pass, no recursion, no allocation.
 */
export function jsonNestingDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return deepest;
}

// A NUL, or a UTF-16 surrogate without its partner (JSON escapes such as "\ud800" decode to one).
// PostgreSQL refuses both in text and jsonb, so no retry can ever store such a value.
// eslint-disable-next-line no-control-regex
const NUL = /\u0000/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const MAX_PATH_SEGMENT = 32;

function unstorableText(text: string): string | undefined {
  if (NUL.test(text)) return 'a NUL character (\\u0000)';
  if (LONE_SURROGATE.test(text)) return 'a lone UTF-16 surrogate';
  return undefined;
}

function pathSegment(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  const shown = key.length > MAX_PATH_SEGMENT ? `${key.slice(0, MAX_PATH_SEGMENT)}…` : key;
  return /^[A-Za-z_$][\w$]*$/.test(key)
    ? `${parent}.${shown}`
    : `${parent}[${JSON.stringify(shown)}]`;
}

/**
 * The first string (value or key) of a parsed JSON value that PostgreSQL could not store, as a
 * description with its path (`$.data.note`), or undefined. Iterative (an explicit stack), so any
 * depth is safe; keys are shown cut to 32 characters (the DLQ masks card data in it anyway).
 */
export function findUnstorableString(value: unknown): string | undefined {
  const stack: Array<[unknown, string]> = [[value, '$']];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, path] = next;
    if (typeof node === 'string') {
      const what = unstorableText(node);
      if (what) return `${what} at ${path}`;
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], pathSegment(path, i)]);
    } else if (typeof node === 'object' && node !== null) {
      const entries = Object.entries(node);
      for (const [key] of entries) {
        const what = unstorableText(key);
        if (what) return `${what} in a key at ${path}`;
      }
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i] as [string, unknown];
        stack.push([child, pathSegment(path, key)]);
      }
    }
  }
  return undefined;
}

/**
 * Parses the value as JSON and validates it; never throws. Poison is recognised here, before any
 * handler runs: too big or too deep → `parse`; a NUL or lone surrogate anywhere, or a schema that
 * overflows the stack → `schema`.
 */
export function decodeMessage<T>(
  raw: RawMessage,
  schema: z.ZodType<T>,
  limits: DecodeLimits = DEFAULT_DECODE_LIMITS,
): DecodeResult<T> {
  const { message } = raw;
  if (message.value === null || message.value.length === 0) {
    return { ok: false, reason: 'parse', error: 'empty value (tombstone or no payload)' };
  }
  if (message.value.length > limits.maxValueBytes) {
    return {
      ok: false,
      reason: 'parse',
      error: `value is ${message.value.length} bytes, more than the limit of ${limits.maxValueBytes}`,
    };
  }
  const text = message.value.toString('utf8');
  if (jsonNestingDepth(text, limits.maxDepth) > limits.maxDepth) {
    return {
      ok: false,
      reason: 'parse',
      error: `value nests deeper than ${limits.maxDepth} levels of objects and arrays`,
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    // SyntaxError messages can quote a fragment of the input: keep only the position.
    const detail = error instanceof Error ? /position \d+/.exec(error.message)?.[0] : undefined;
    return {
      ok: false,
      reason: 'parse',
      error: `value is not valid JSON${detail ? ` (at ${detail})` : ''}`,
    };
  }
  const unstorable = findUnstorableString(json);
  if (unstorable !== undefined) {
    return { ok: false, reason: 'schema', error: `value contains ${unstorable}` };
  }
  let parsed: ReturnType<z.ZodType<T>['safeParse']>;
  try {
    parsed = schema.safeParse(json);
  } catch (error) {
    // A recursive schema on a value within the depth limit can still overflow: poison too.
    return { ok: false, reason: 'schema', error: `validation failed: ${errorMessage(error)}` };
  }
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
