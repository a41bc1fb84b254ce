/**
 * Value-based scrubbing, the second line of defence behind pino's path-based `redact`:
 *  - any value under a sensitive key (at any depth, case- and separator-insensitive) is replaced;
 *  - any Luhn-valid 13-19 digit sequence in a string (contiguous, or in space/dash separated
 *    groups) or a number is masked to BIN + `******` + last four;
 *  - PEM private key blocks are dropped.
 */
export const REDACTED = '[REDACTED]';
export const PRIVATE_KEY_REDACTED = '[PRIVATE KEY REDACTED]';

/** Keys whose values never reach a log line (compared lower-case with `_` and `-` removed). */
export const SENSITIVE_KEYS: readonly string[] = [
  // card data
  'cvv',
  'cvv2',
  'cvc',
  'cvc2',
  'securitycode',
  'pan',
  'cardnumber',
  'creditcardnumber',
  'expiremonth',
  'expireyear',
  'expirymonth',
  'expiryyear',
  'expirationdate',
  // gateway secrets and signatures
  'control',
  'merchantcontrol',
  'controlkey',
  'privatekey',
  'signature',
  'oauthsignature',
  'oauthtoken',
  'oauthtokensecret',
  'consumersecret',
  'hostedfieldstoken',
  // generic credentials
  'authorization',
  'proxyauthorization',
  'cookie',
  'setcookie',
  'password',
  'passphrase',
  'secret',
  'clientsecret',
  'apikey',
  'accesstoken',
  'refreshtoken',
];

const SENSITIVE = new Set(SENSITIVE_KEYS);

export function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[_-]/g, '');
}

export function isSensitiveKey(key: string): boolean {
  return SENSITIVE.has(normalizeKey(key));
}

/**
 * Paths for pino's `redact` (fast, before serialisation): each sensitive key in its common
 * spellings at the top level and up to three levels down, plus HTTP headers as pino-http logs
 * them. Deeper or oddly spelled keys are caught by the scrubber.
 */
export function redactPaths(): string[] {
  const spellings = new Set<string>([
    'cvv',
    'cvv2',
    'cvc',
    'pan',
    'card_number',
    'cardNumber',
    'credit_card_number',
    'creditCardNumber',
    'expire_month',
    'expire_year',
    'control',
    'merchant_control',
    'merchantControl',
    'controlKey',
    'control_key',
    'privateKey',
    'private_key',
    'signature',
    'oauth_signature',
    'oauth_token',
    'authorization',
    'Authorization',
    'password',
    'secret',
    'clientSecret',
    'client_secret',
    'apiKey',
    'api_key',
    'accessToken',
    'access_token',
    'refreshToken',
    'refresh_token',
  ]);
  const paths: string[] = [];
  for (const key of spellings) {
    paths.push(key, `*.${key}`, `*.*.${key}`, `*.*.*.${key}`);
  }
  paths.push(
    'req.headers.authorization',
    'req.headers["proxy-authorization"]',
    'req.headers.cookie',
    'req.headers["x-api-key"]',
    'res.headers["set-cookie"]',
  );
  return paths;
}

export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

function isPan(digits: string): boolean {
  return digits.length >= 13 && digits.length <= 19 && luhnValid(digits);
}

export function maskPanDigits(digits: string): string {
  return `${digits.slice(0, 6)}******${digits.slice(-4)}`;
}

const CONTIGUOUS = /(?<![0-9])[0-9]{13,19}(?![0-9])/g;
// 3 to 5 groups of 3-6 digits separated by one space or dash each (4-4-4-4, 4-6-5, 4-4-4-4-3...).
const GROUPED = /(?<![0-9])[0-9]{3,6}(?:[ -][0-9]{3,6}){2,4}(?![0-9])/g;

function maskGrouped(match: string): string {
  const groups = match.split(/[ -]/);
  // Try the longest run of groups from each start, so "4111 1111 1111 1111 2030" still masks.
  for (let start = 0; start < groups.length; start++) {
    for (let end = groups.length; end - start >= 3; end--) {
      const digits = groups.slice(start, end).join('');
      if (isPan(digits)) {
        const before = groups.slice(0, start);
        const after = groups.slice(end);
        const separator = match.charAt(groups[0].length);
        return [...before, maskPanDigits(digits), ...after].join(separator);
      }
    }
  }
  return match;
}

const PEM_PRIVATE_KEY =
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g;

/** Payment, command and correlation ids: their digit-only segments must not read as a card. */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

function maskPans(text: string): string {
  return text
    .replace(CONTIGUOUS, (m) => (isPan(m) ? maskPanDigits(m) : m))
    .replace(GROUPED, maskGrouped);
}

/** Masks card numbers (outside UUIDs, which stay intact) and drops private keys in one string. */
export function scrubString(value: string): string {
  let out = value;
  if (out.includes('PRIVATE KEY')) out = out.replace(PEM_PRIVATE_KEY, PRIVATE_KEY_REDACTED);
  if (!/[0-9]{3}/.test(out)) return out;
  let scrubbed = '';
  let from = 0;
  for (const id of out.matchAll(UUID)) {
    scrubbed += maskPans(out.slice(from, id.index)) + id[0];
    from = id.index + id[0].length;
  }
  return scrubbed + maskPans(out.slice(from));
}

const MAX_DEPTH = 10;

/**
 * A scrubbed copy of `value` (the input is never mutated). Errors stay Errors of the same
 * class; other class instances (except Date and Buffer) become plain copies of their own
 * enumerable properties.
 */
export function scrubValue(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return scrubString(value);
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && value > 0) {
      const digits = String(value);
      if (isPan(digits)) return maskPanDigits(digits);
    }
    return value;
  }
  if (typeof value === 'bigint') {
    const digits = value.toString();
    return isPan(digits) ? maskPanDigits(digits) : value;
  }
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date || Buffer.isBuffer(value)) return value;
  if (seen.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[Truncated]';
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => scrubValue(item, depth + 1, seen));
    if (value instanceof Error) return scrubError(value, depth, seen);
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      out[key] = isSensitiveKey(key) ? REDACTED : scrubValue(inner, depth + 1, seen);
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/**
 * A copy of an Error with the same prototype (so pino's err serializer still reports its type)
 * and scrubbed message, stack, cause and own properties.
 */
function scrubError(error: Error, depth: number, seen: WeakSet<object>): Error {
  const copy = Object.create(Object.getPrototypeOf(error) as object) as Error;
  for (const [key, inner] of Object.entries(error)) {
    (copy as unknown as Record<string, unknown>)[key] = isSensitiveKey(key)
      ? REDACTED
      : scrubValue(inner, depth + 1, seen);
  }
  const hidden = (key: 'message' | 'stack' | 'cause', v: unknown) =>
    Object.defineProperty(copy, key, { value: v, writable: true, configurable: true });
  hidden('message', scrubString(error.message));
  if (error.stack !== undefined) hidden('stack', scrubString(error.stack));
  if (error.cause !== undefined) hidden('cause', scrubValue(error.cause, depth + 1, seen));
  return copy;
}
