import type { InjectionToken } from '@nestjs/common';
import type { z } from 'zod';
import type { ConsumedMessage } from './message';

/**
 * A Kafka message handler: one topic, the zod schema its values must match, and `handle`.
 * Returning normally means "done": the runner commits the offset. Throwing means "not done": the
 * runner retries (or dead-letters a PoisonMessageError at once). Handlers never commit, never
 * catch-and-log, never write to the DLQ themselves. They must be idempotent (redelivery after a
 * crash or rebalance is normal): record processed message ids (inbox) in the same transaction as
 * their effects.
 */
export interface KafkaMessageHandler<T = unknown> {
  readonly topic: string;
  readonly schema: z.ZodType<T>;
  handle(message: ConsumedMessage<T>): Promise<void>;
  /**
   * Optional: several consecutive messages of one partition (in offset order, all decoded) at
   * once, all or nothing — one database transaction, typically. Returning means every one is done
   * (the runner commits once, after the last); throwing means none is (whatever it wrote must
   * roll back): the runner then hands the same messages to `handle` one by one, with the usual
   * retries and dead letters, so one bad message never holds up or poisons its neighbours.
   */
  handleBatch?(messages: readonly ConsumedMessage<T>[]): Promise<void>;
  /**
   * Optional: whether a failure says what the handler stands on is unavailable (its database
   * without a writable primary during a failover), not that the message is at fault. Such a
   * failure never exhausts the retries: it is tried again in place, at most the policy's longest
   * delay apart, for as long as the consumer runs — never dead-lettered (a gateway result
   * dead-lettered while the primary was being replaced left its payment without its answer).
   */
  isUnavailable?(error: unknown): boolean;
}

/** A handler object, or the Nest token (usually the class) of a provider that is one. */
export type KafkaHandlerSource = KafkaMessageHandler | InjectionToken;

/** Builds a handler object from a function, for small handlers and tests. */
export function defineHandler<S extends z.ZodType>(
  topic: string,
  schema: S,
  handle: (message: ConsumedMessage<z.output<S>>) => Promise<void>,
): KafkaMessageHandler<z.output<S>> {
  return { topic, schema: schema as z.ZodType<z.output<S>>, handle };
}

export function isHandlerObject(source: KafkaHandlerSource): source is KafkaMessageHandler {
  return (
    typeof source === 'object' &&
    source !== null &&
    typeof source.handle === 'function' &&
    typeof source.topic === 'string'
  );
}
