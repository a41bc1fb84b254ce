import { maskCardNumber, maskCardNumbers } from '@payments/core';
import type { RawReply } from './replies';

/**
 * Redaction for request/response logging (DESIGN guarantee 7 and 8): PAN masked to BIN(6) + last
 * four, CVV and expiry dropped, `control`, `oauth_*`, `Authorization`, signatures, keys and
 * secrets never present. Any card number in any other value is masked as well, whatever its field
 * name, by the one detector of `@payments/core`.
 */
const DROP = [
  /^cvv2?$/i,
  /^cvc2?$/i,
  /^control$/i,
  /^oauth_/i,
  /^authorization$/i,
  /signature/i,
  /secret/i,
  /password/i,
  /private/i,
  /control[-_]?key/i,
  /^expire[-_](month|year)$/i,
  /^card[-_]exp[-_](month|year)$/i,
];
const PAN_FIELDS = [
  /^credit[-_]card[-_]number$/i,
  /^destination[-_]card[-_]no$/i,
  /^card[-_]?number$/i,
  /^pan$/i,
];

/**
 * The value of a card-number field: BIN + `******` + last four when it holds 12-19 digits (spaces
 * and dashes allowed, Luhn or not: the field name says it is a card), `****` otherwise.
 */
export function maskPan(value: string): string {
  const digits = value.replace(/[\s-]/g, '');
  return /^\d{12,19}$/.test(digits) ? maskCardNumber(digits) : '****';
}

/** Redacts a flat field record (request body or raw reply). Returns a new object. */
export function redactFields(fields: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (DROP.some((re) => re.test(k))) continue;
    out[k] = PAN_FIELDS.some((re) => re.test(k)) ? maskPan(v) : maskCardNumbers(v);
  }
  return out;
}

/** Request fields as they go on the wire → safe to log. */
export function redactRequest(fields: Readonly<Record<string, string>>): Record<string, string> {
  return redactFields(fields);
}

/** A typed reply (or anything carrying a `raw` record) → safe to log. */
export function redactReply<T extends { readonly raw: RawReply }>(reply: T): T {
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(reply)) {
    if (k === 'raw') continue;
    if (DROP.some((re) => re.test(k))) continue;
    copy[k] = typeof v === 'string' ? maskCardNumbers(v) : v;
  }
  copy.raw = redactFields(reply.raw);
  return copy as T;
}

/** Header map → safe to log (drops Authorization). */
export function redactHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (!/^authorization$/i.test(k)) out[k] = v;
  }
  return out;
}
