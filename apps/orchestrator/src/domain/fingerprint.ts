import { createHash } from 'node:crypto';
import type { AnyCommand, RecurringCommand } from '@payments/contracts';

/**
 * Fields left out of a command's fingerprint:
 *  - occurredAt: a producer that retries usually re-stamps the time; the intent is unchanged;
 *  - sealedCard: sealing is randomised, so re-sealing the same card gives a different string. A
 *    retry with the same command id must not be refused for that (the first card is the one used).
 */
export const FINGERPRINT_EXCLUDED_FIELDS = ['occurredAt', 'sealedCard'] as const;

/** JSON with object keys sorted at every level and undefined members dropped. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Stable hash of a command's canonical body. The application layer stores it with the command id:
 * same id + same fingerprint → re-emit the earlier outcome; same id + other fingerprint → reject
 * with DUPLICATE_COMMAND_CONFLICT.
 */
export function commandFingerprint(command: AnyCommand | RecurringCommand): string {
  const body: Record<string, unknown> = { ...command };
  for (const field of FINGERPRINT_EXCLUDED_FIELDS) delete body[field];
  return `sha256:${createHash('sha256').update(canonicalJson(body)).digest('hex')}`;
}

export type IdempotencyVerdict = 'new' | 'duplicate' | 'conflict';

/** What to do with a command given the fingerprint stored for its id (if any). */
export function idempotencyVerdict(
  stored: string | undefined,
  incoming: string,
): IdempotencyVerdict {
  if (stored === undefined) return 'new';
  return stored === incoming ? 'duplicate' : 'conflict';
}
