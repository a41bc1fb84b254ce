import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * SHA-1 `control` checksums (spec §4.1, facts §2.1, §6): SHA-1 over the plain concatenation of
 * the listed values followed by the merchant control key, UTF-8, lowercase hex.
 */
export function sha1Control(parts: readonly string[], controlKey: string): string {
  return createHash('sha1')
    .update(parts.join('') + controlKey, 'utf8')
    .digest('hex');
}

/**
 * Constant-time comparison of a received checksum with the expected lowercase hex digest.
 * Only lowercase hex is accepted (every public source writes lowercase; being strict here makes
 * a client bug visible in tests); anything that is not 40 lowercase hex
 * characters is refused without comparing.
 */
export function controlMatches(received: string | undefined, expected: string): boolean {
  if (received === undefined || !/^[0-9a-f]{40}$/.test(received)) return false;
  const a = Buffer.from(received, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Control of the server callback and of the 3-D Secure return POST (facts §5, §6). */
export function callbackControl(
  status: string,
  orderId: string,
  merchantOrder: string,
  controlKey: string,
): string {
  return sha1Control([status, orderId, merchantOrder], controlKey);
}
