import { sleep } from '@payments/core';
import { KafkaJSConnectionError, KafkaJSProtocolError, KafkaJSRequestTimeoutError } from 'kafkajs';

/**
 * How a handler tells the consumer runner that retrying cannot help. The runner owns the commit
 * policy; a handler only throws:
 *  - `PoisonMessageError` (or any error with `retriable === false`): the message goes to the DLQ
 *    at once with reason `non-retriable`, and the partition moves on;
 *  - anything else: retried in place with backoff, then dead-lettered as `retries-exhausted`.
 * Expected business outcomes (a rejected command) are results, not exceptions: handle them and
 * return normally.
 */
export class PoisonMessageError extends Error {
  readonly retriable = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PoisonMessageError';
  }
}

/**
 * True for PoisonMessageError, for any error object flagged `retriable: false`, and for a stack
 * overflow (`RangeError: Maximum call stack size exceeded`): the same value overflows again on
 * every attempt, so retrying only blocks the partition. Never for a broker that could not be
 * reached: kafkajs flags its error `retriable: false` once its own retries are spent (a broker
 * restart longer than them), but the message is not at fault, so it is retried in place like any
 * failure instead of being dead-lettered at once.
 */
export function isNonRetriable(error: unknown): boolean {
  if (error instanceof PoisonMessageError) return true;
  if (isStackOverflow(error)) return true;
  if (isBrokerUnreachable(error)) return false;
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { retriable?: unknown }).retriable === false
  );
}

/** A connection to the broker failed or timed out, here or in the error's causes. */
function isBrokerUnreachable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if (current instanceof KafkaJSConnectionError || current instanceof KafkaJSRequestTimeoutError)
      return true;
    current = current.cause;
  }
  return false;
}

/** V8's RangeError for a blown stack (deeply nested data walked recursively). */
export function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /maximum call stack size exceeded/i.test(error.message);
}

/** A short description of anything thrown, never the whole object (it could hold data). */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  if (typeof error === 'string') return error;
  return 'non-Error value thrown';
}

/**
 * Runs `call`, asking again (≤ 20 × 500 ms) while the broker answers with a retriable protocol
 * error: a topic created moments ago reaches every broker's metadata, and gets a leader, a moment
 * later ("This server does not host this topic-partition", "…is not the leader for that
 * topic-partition"). Anything else, or the last attempt's error, is thrown.
 */
export async function whileMetadataSettles<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const retriable = error instanceof KafkaJSProtocolError && error.retriable;
      if (!retriable || attempt >= 20) throw error;
      await sleep(500);
    }
  }
}
