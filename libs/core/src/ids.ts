import { createHash, randomUUID } from 'node:crypto';

/** New ids for events, requests, outbox rows: behind an interface so tests can predict them. */
export interface IdGenerator {
  next(): string;
}

/** A random UUID v4 (node:crypto, cryptographically strong). */
export function newId(): string {
  return randomUUID();
}

export const uuidGenerator: IdGenerator = { next: newId };

/**
 * Predictable UUID-shaped ids for tests (`00000000-0000-4000-8000-000000000001`, …): valid v4
 * syntax, so schemas that demand a UUID accept them.
 */
export class SequentialIds implements IdGenerator {
  private counter = 0;

  next(): string {
    this.counter += 1;
    return `00000000-0000-4000-8000-${this.counter.toString(16).padStart(12, '0')}`;
  }
}

/**
 * A UUID derived from a name (RFC 9562 version 8: the first 122 bits of SHA-256 of the name).
 * The same name always gives the same id, so an id derived from something received twice (a
 * timer fired twice, a browser POST replayed) is the same both times and the consumer's
 * idempotency does the rest.
 */
export function derivedUuid(name: string): string {
  const hex = createHash('sha256').update(name).digest('hex').slice(0, 32).split('');
  hex[12] = '8';
  hex[16] = ((parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
