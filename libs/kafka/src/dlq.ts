import type { IHeaders } from 'kafkajs';
import { maskCardDataInJson, maskCardDataInText } from '@payments/core';
import { scrubString } from '@payments/logging';
import type { DecodeFailureReason } from './message';

/**
 * Dead-letter records: `<topic>.dlq` receives the original key and value with card data masked
 * (`maskDlqBytes`: unchanged bytes when there is none), the original headers, plus headers naming
 * why and where from. Operators can re-drive a record by producing its key, value and original
 * headers back to `dlq-original-topic` (a masked command then fails again, by design).
 */
export type DlqReason = DecodeFailureReason | 'non-retriable' | 'retries-exhausted';

export const DLQ_REASONS: readonly DlqReason[] = [
  'parse',
  'schema',
  'non-retriable',
  'retries-exhausted',
];

export const DLQ_HEADER = {
  reason: 'dlq-reason',
  error: 'dlq-error',
  originalTopic: 'dlq-original-topic',
  originalPartition: 'dlq-original-partition',
  originalOffset: 'dlq-original-offset',
  consumerGroup: 'dlq-consumer-group',
} as const;

export const DLQ_SUFFIX = '.dlq';
export const MAX_DLQ_ERROR_LENGTH = 500;

export function dlqTopicFor(topic: string): string {
  return `${topic}${DLQ_SUFFIX}`;
}

/** One line, card numbers and private keys masked, at most `max` characters. */
export function sanitizeErrorText(text: string, max = MAX_DLQ_ERROR_LENGTH): string {
  const oneLine = scrubString(text)
    .replace(/[\r\n\t]+/g, ' ')
    .trim();
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…`;
}

export interface DlqOrigin {
  readonly reason: DlqReason;
  readonly error: string;
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly groupId: string;
}

/**
 * The original headers plus the `dlq-*` headers. A record that was already dead-lettered once
 * and re-driven gets fresh `dlq-*` values (ours replace the old ones).
 */
export function buildDlqHeaders(original: IHeaders | undefined, origin: DlqOrigin): IHeaders {
  const headers: IHeaders = {};
  for (const [name, value] of Object.entries(original ?? {})) {
    if (value !== undefined) headers[name] = value;
  }
  headers[DLQ_HEADER.reason] = origin.reason;
  headers[DLQ_HEADER.error] = sanitizeErrorText(origin.error);
  headers[DLQ_HEADER.originalTopic] = origin.topic;
  headers[DLQ_HEADER.originalPartition] = String(origin.partition);
  headers[DLQ_HEADER.originalOffset] = origin.offset;
  headers[DLQ_HEADER.consumerGroup] = origin.groupId;
  return headers;
}

/**
 * Key or value bytes as they may rest in a dead-letter topic: card numbers masked, CVV-like
 * fields blanked (a command with clear card data is dead-lettered, and must not
 * carry it there). A JSON value is masked field by field and re-serialised; anything else (broken
 * JSON, form encoding, text) is masked as text, bytes that are not UTF-8 through latin1 so every
 * other byte stays as it was. Without card data the original bytes are returned unchanged.
 */
export function maskDlqBytes(bytes: Buffer | null): Buffer | null {
  if (bytes === null || bytes.length === 0) return bytes;
  const text = bytes.toString('utf8');
  const utf8 = Buffer.from(text, 'utf8').equals(bytes);
  // Field by field only when shallow: JSON.stringify recurses (a value nested 50,000 deep
  // overflowed the stack here, the dead-letter write failed and the consumer crashed), and
  // core's masker renders anything deeper than MAX_MASK_DEPTH as text anyway.
  if (utf8 && !nestedDeeperThan(text, MAX_MASK_DEPTH)) {
    const parsed = parseJson(text);
    if (parsed.ok) {
      const masked = JSON.stringify(maskCardDataInJson(parsed.value));
      return masked === JSON.stringify(parsed.value) ? bytes : Buffer.from(masked, 'utf8');
    }
  }
  const encoding = utf8 ? 'utf8' : 'latin1';
  const original = bytes.toString(encoding);
  const masked = maskCardDataInText(original);
  return masked === original ? bytes : Buffer.from(masked, encoding);
}

/** libs/core masks JSON field by field down to this depth. */
const MAX_MASK_DEPTH = 64;

/** Whether JSON text opens more than `limit` arrays/objects at once (strings skipped), one pass. */
function nestedDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}
