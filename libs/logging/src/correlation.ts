import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/**
 * Correlation ids follow one unit of work across services: the HTTP request header
 * `x-correlation-id`, else the trace id of a W3C `traceparent`, else a fresh UUID. Kafka handlers
 * run their work inside `runWithCorrelationId`, and every log line written inside inherits it
 * (the logger's mixin reads `currentCorrelationId()`).
 */
export const CORRELATION_ID_HEADER = 'x-correlation-id';
export const TRACEPARENT_HEADER = 'traceparent';

interface CorrelationStore {
  readonly correlationId: string;
  /** True when the logger already carries the id as a binding (HTTP request logger). */
  readonly bound: boolean;
}

const storage = new AsyncLocalStorage<CorrelationStore>();

/** Runs `fn` (sync or async) with `id` as the current correlation id. Returns what `fn` returns. */
export function runWithCorrelationId<T>(id: string, fn: () => T): T {
  return storage.run({ correlationId: id, bound: false }, fn);
}

/** @internal used by the HTTP middleware, whose request logger already binds the id. */
export function runWithBoundCorrelationId<T>(id: string, fn: () => T): T {
  return storage.run({ correlationId: id, bound: true }, fn);
}

/** The correlation id of the work in progress, or undefined outside any. */
export function currentCorrelationId(): string | undefined {
  return storage.getStore()?.correlationId;
}

/** @internal for the logger mixin: the id to add to a line, unless a binding already has it. */
export function correlationIdForMixin(): string | undefined {
  const store = storage.getStore();
  return store && !store.bound ? store.correlationId : undefined;
}

export function newCorrelationId(): string {
  return randomUUID();
}

// Printable, short and free of separators that could forge log structure.
const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

export function isSafeCorrelationId(value: string): boolean {
  return SAFE_ID.test(value);
}

/** The W3C trace id of a `traceparent` value, or undefined when absent or invalid (all zeros). */
export function traceIdFromTraceparent(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const match = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!match || /^0+$/.test(match[1])) return undefined;
  return match[1];
}

type HeaderValue = string | string[] | undefined;
export type HeaderBag = Readonly<Record<string, HeaderValue>>;

function first(value: HeaderValue): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Picks the correlation id for an incoming message from its headers (lower-case names, as Node
 * delivers HTTP headers; Kafka adapters should pass decoded string headers): `x-correlation-id`
 * when it is a safe token, else the `traceparent` trace id, else a new UUID.
 */
export function correlationIdFromHeaders(headers: HeaderBag): string {
  const explicit = first(headers[CORRELATION_ID_HEADER])?.trim();
  if (explicit && isSafeCorrelationId(explicit)) return explicit;
  return traceIdFromTraceparent(first(headers[TRACEPARENT_HEADER])) ?? newCorrelationId();
}
