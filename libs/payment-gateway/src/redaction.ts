import type { RawReply } from './replies';

/**
 * Redaction for request/response logging (DESIGN guarantee 7 and 8): PAN masked to BIN(6) + last
 * four, CVV and expiry dropped, `control`, `oauth_*`, `Authorization`, signatures, keys and
 * secrets never present. Any other value that looks like a card number (13–19 digits passing
 * Luhn) is masked as well, whatever its field name.
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

export function maskPan(value: string): string {
  const digits = value.replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(digits)) return '****';
  return `${digits.slice(0, 6)}${'*'.repeat(digits.length - 10)}${digits.slice(-4)}`;
}

function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

function looksLikePan(value: string): boolean {
  const digits = value.replace(/[\s-]/g, '');
  return /^\d{13,19}$/.test(digits) && luhnValid(digits);
}

/** Masks card-number-like digit runs inside free text. */
function maskPanRuns(value: string): string {
  return value.replace(/(?<!\d)\d{13,19}(?!\d)/g, (run) => (luhnValid(run) ? maskPan(run) : run));
}

/** Redacts a flat field record (request body or raw reply). Returns a new object. */
export function redactFields(fields: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (DROP.some((re) => re.test(k))) continue;
    out[k] = PAN_FIELDS.some((re) => re.test(k)) || looksLikePan(v) ? maskPan(v) : maskPanRuns(v);
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
    copy[k] = typeof v !== 'string' ? v : looksLikePan(v) ? maskPan(v) : maskPanRuns(v);
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
