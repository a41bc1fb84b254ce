import { createHash } from 'node:crypto';

/**
 * A UUID derived from a name (RFC 9562 version 8: the first 122 bits of SHA-256 of the name).
 * The same name always gives the same id, so an id a decision derives — a schedule cycle's rebill
 * payment and command — is the same however often the decision is taken again (a timer fired
 * twice, a transaction rolled back and retried): the runtime's command idempotency does the rest.
 */
export function derivedUuid(name: string): string {
  const hex = createHash('sha256').update(name).digest('hex').slice(0, 32).split('');
  hex[12] = '8';
  hex[16] = ((parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
