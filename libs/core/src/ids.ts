import { randomUUID } from 'node:crypto';

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
