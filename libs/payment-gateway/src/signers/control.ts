import { hash, timingSafeEqual } from 'node:crypto';

/**
 * SHA-1 `control` checksum (spec §5.1, §4.1): lowercase hex SHA-1 over the plain concatenation
 * of the values followed by the merchant control key, UTF-8. Amounts must already be in minor
 * units; absent optional values are passed as empty strings.
 */
export function controlChecksum(values: readonly string[], controlKey: string): string {
  // One-shot `hash` (a string is hashed as UTF-8): no Hash object per checksum.
  return hash('sha1', values.join('') + controlKey, 'hex');
}

const HEX40 = /^[0-9a-f]{40}$/i;

/**
 * Constant-time comparison of a received control against the expected lowercase hex digest.
 * Empty, wrong-length or non-hex inputs are rejected before any comparison. Upper-case hex is
 * accepted (it is the same digest).
 */
export function controlMatches(expectedHex: string, received: string): boolean {
  if (!HEX40.test(received) || !HEX40.test(expectedHex)) return false;
  const a = Buffer.from(expectedHex.toLowerCase(), 'hex');
  const b = Buffer.from(received.toLowerCase(), 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
