import { KeyObject, createHmac, timingSafeEqual, verify as rsaVerify } from 'node:crypto';
import { rfc3986Encode } from './rfc3986';

/**
 * OAuth 1.0a verification (RFC 5849) for the two signature methods of the gateway: HMAC-SHA1
 * keyed with `percent-encode(controlKey)&` and RSA-SHA256 (RSASSA-PKCS1-v1_5) against the merchant's registered
 * public key. Built from the RFC and the spec only.
 */
export type OAuthMethod = 'HMAC-SHA1' | 'RSA-SHA256';

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

const PAIR = /^\s*([A-Za-z0-9_\-.~%]+)\s*=\s*"([^"]*)"\s*$/;

/** `OAuth realm="", oauth_consumer_key="x", …` → name → percent-decoded value. */
export function parseAuthorizationHeader(header: string): Parsed<Map<string, string>> {
  const match = /^\s*OAuth\s+(.*)$/is.exec(header);
  if (!match) return { ok: false, reason: 'Authorization scheme is not OAuth' };
  const params = new Map<string, string>();
  for (const part of (match[1] ?? '').split(',')) {
    if (part.trim() === '') continue;
    const pair = PAIR.exec(part);
    if (!pair) return { ok: false, reason: 'malformed OAuth header parameter' };
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent(pair[1] ?? '');
      value = decodeURIComponent(pair[2] ?? '');
    } catch {
      return { ok: false, reason: 'malformed percent-encoding in the OAuth header' };
    }
    if (params.has(name)) return { ok: false, reason: `duplicate OAuth parameter ${name}` };
    params.set(name, value);
  }
  return { ok: true, value: params };
}

/** RFC 5849 §3.4.1.2: scheme and host lower-case, default port dropped, path kept, no query. */
export function normalizeBaseUrl(scheme: string, host: string, path: string): string {
  const s = scheme.toLowerCase();
  let h = host.toLowerCase();
  if ((s === 'http' && h.endsWith(':80')) || (s === 'https' && h.endsWith(':443'))) {
    h = h.slice(0, h.lastIndexOf(':'));
  }
  return `${s}://${h}${path}`;
}

/** RFC 5849 §3.4.1.3.2: encode each name and value, sort by bytes (name, then value), join. */
export function normalizeParameters(pairs: ReadonlyArray<readonly [string, string]>): string {
  const encoded = pairs.map(([n, v]) => [rfc3986Encode(n), rfc3986Encode(v)] as const);
  encoded.sort((a, b) => compareBytes(a[0], b[0]) || compareBytes(a[1], b[1]));
  return encoded.map(([n, v]) => `${n}=${v}`).join('&');
}

function compareBytes(a: string, b: string): number {
  // Encoded strings are pure ASCII, so code-unit order is byte order.
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

export function signatureBaseString(
  method: string,
  baseUrl: string,
  pairs: ReadonlyArray<readonly [string, string]>,
): string {
  return [
    method.toUpperCase(),
    rfc3986Encode(baseUrl),
    rfc3986Encode(normalizeParameters(pairs)),
  ].join('&');
}

/**
 * Spec §5.2 item 7 with RFC 5849 §3.4.2: the key is the percent-encoded control key (the consumer
 * secret), `&`, and the percent-encoded token secret, which is empty. For UUID-style keys that is
 * the key as is + `&` (the vendor's example); for keys with reserved or non-ASCII characters only
 * the encoded form matches standard OAuth libraries (proven against oauthlib).
 */
export function hmacSha1Key(controlKey: string): string {
  return `${rfc3986Encode(controlKey)}&`;
}

export function verifyHmacSha1(base: string, controlKey: string, signatureB64: string): boolean {
  const expected = createHmac('sha1', hmacSha1Key(controlKey)).update(base, 'utf8').digest();
  const received = decodeBase64Strict(signatureB64);
  return (
    received !== undefined &&
    received.length === expected.length &&
    timingSafeEqual(received, expected)
  );
}

export function verifyRsaSha256(base: string, publicKey: KeyObject, signatureB64: string): boolean {
  const received = decodeBase64Strict(signatureB64);
  if (received === undefined) return false;
  try {
    return rsaVerify('sha256', Buffer.from(base, 'utf8'), publicKey, received);
  } catch {
    return false;
  }
}

function decodeBase64Strict(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  return Buffer.from(text, 'base64');
}
