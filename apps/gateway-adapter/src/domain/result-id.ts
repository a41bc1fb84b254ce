import { createHash } from 'node:crypto';

/**
 * The CloudEvents `ce_id` of the result of one request attempt: a name-based UUID (version 8
 * layout, SHA-256 of the request id and attempt), the same every time the adapter answers the
 * same attempt, so a result published twice (redelivered request, retried publish) dedupes
 * downstream.
 */
export function resultEventId(requestId: string, attempt: number): string {
  const hex = createHash('sha256')
    .update(`gateway-adapter/result/${requestId}/${attempt}`)
    .digest('hex')
    .slice(0, 32)
    .split('');
  hex[12] = '8';
  hex[16] = ((parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  const s = hex.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}
