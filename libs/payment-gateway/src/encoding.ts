/**
 * RFC 3986 percent-encoding, shared by the OAuth base string, the `Authorization` header and the
 * form-encoded request body (a space is `%20`, never `+`).
 *
 * Only the unreserved set `A-Z a-z 0-9 - . _ ~` is left as is; every other UTF-8 byte becomes
 * `%XX` with upper-case hex. Strings that are not well-formed UTF-16 (lone surrogates) cannot be
 * encoded as UTF-8 and are refused instead of being silently replaced.
 */
const UNRESERVED_ONLY = /^[A-Za-z0-9\-._~]*$/;

export function percentEncode(value: string): string {
  if (UNRESERVED_ONLY.test(value)) return value;
  let encoded: string;
  try {
    encoded = encodeURIComponent(value);
  } catch {
    throw new TypeError('value is not well-formed unicode (lone surrogate)');
  }
  return encoded.replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Inverse of {@link percentEncode}. `+` is NOT a space here (RFC 3986, not HTML forms). */
export function percentDecode(value: string): string {
  return decodeURIComponent(value);
}

/** Compare two strings by their UTF-8 bytes (RFC 5849 §3.4.1.3.2 "ascending byte value"). */
export function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * Byte order of two percent-encoded strings: they are ASCII (unreserved characters and `%XX`), so
 * UTF-16 code-unit order is their UTF-8 byte order and no Buffer is needed.
 */
function compareAscii(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Request parameters: a record, or name/value pairs in which a name may repeat (RFC 5849
 * §3.4.1.3.1 signs every occurrence).
 */
export type FormParams =
  Readonly<Record<string, string>> | ReadonlyArray<readonly [name: string, value: string]>;

/** The parameters as pairs, in their given order. */
export function parameterPairs(params: FormParams): ReadonlyArray<readonly [string, string]> {
  return isPairs(params) ? params : Object.entries(params);
}

function isPairs(params: FormParams): params is ReadonlyArray<readonly [string, string]> {
  return Array.isArray(params);
}

/**
 * RFC 5849 §3.4.1.3.2 normalised parameter string: every name and value percent-encoded, pairs
 * sorted by encoded name (then encoded value) in byte order, joined `name=value` with `&`.
 * Empty values take part (`name=`); a repeated name takes part once per value.
 */
export function normalizeParameters(params: FormParams): string {
  const pairs: Array<readonly [string, string]> = [];
  for (const [k, v] of parameterPairs(params)) pairs.push([percentEncode(k), percentEncode(v)]);
  pairs.sort(([ak, av], [bk, bv]) => compareAscii(ak, bk) || compareAscii(av, bv));
  let joined = '';
  for (const [k, v] of pairs) joined += `${joined === '' ? '' : '&'}${k}=${v}`;
  return joined;
}

/** `application/x-www-form-urlencoded` body with RFC 3986 encoding (space → `%20`). */
export function formEncode(fields: Readonly<Record<string, string>>): string {
  let body = '';
  for (const k of Object.keys(fields)) {
    body += `${body === '' ? '' : '&'}${percentEncode(k)}=${percentEncode(fields[k] ?? '')}`;
  }
  return body;
}
