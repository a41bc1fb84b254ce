import { createHash } from 'node:crypto';
import {
  CE_SOURCES,
  ceType,
  childTraceparent,
  type GatewayRequest,
  type PaymentEvent,
  type RejectionCode,
  TOPICS,
  toKafkaHeaders,
} from '@payments/contracts';
import { canonicalJson, FINGERPRINT_EXCLUDED_FIELDS, type PaymentState } from '../domain';

/** One row for the `outbox` table, written in the transaction of the change it announces. */
export interface OutboxRow {
  /** Row id; also the CloudEvents ce_id, except for a re-published event (see `ceId`). */
  readonly id: string;
  readonly topic: string;
  readonly key: string;
  readonly headers: Record<string, string>;
  readonly payload: object;
  readonly aggregateId: string;
}

/** What the orchestrator keeps from the message that caused a change. */
export interface InputMeta {
  /** W3C traceparent of the input; outgoing messages continue its trace. */
  readonly traceparent?: string;
}

/** The metadata of a consumed message (headers decoded to strings by libs/kafka). */
export function inputMeta(headers: Readonly<Record<string, string>>): InputMeta {
  const traceparent = headers.traceparent;
  return traceparent === undefined ? {} : { traceparent };
}

/**
 * An event on payments.events.v1. `ceId` is the event's id from history: the outbox row id when it
 * is first published, the same id again when it is re-published for a duplicate command, so
 * consumers deduplicate it.
 */
export function eventRow(
  event: PaymentEvent,
  ids: { rowId: string; ceId: string },
  meta: InputMeta,
): OutboxRow {
  return {
    id: ids.rowId,
    topic: TOPICS.events,
    key: event.paymentId,
    headers: toKafkaHeaders({
      id: ids.ceId,
      type: ceType.event(event.type),
      source: CE_SOURCES.orchestrator,
      subject: event.paymentId,
      time: event.occurredAt,
      traceparent: childTraceparent(meta.traceparent),
    }),
    payload: event,
    aggregateId: event.paymentId,
  };
}

/** A gateway request on payments.gateway.requests.v1 (first send or resend). */
export function gatewayRequestRow(
  request: GatewayRequest,
  rowId: string,
  now: string,
  meta: InputMeta,
): OutboxRow {
  return {
    id: rowId,
    topic: TOPICS.gatewayRequests,
    key: request.paymentId,
    headers: toKafkaHeaders({
      id: rowId,
      type: ceType.gatewayRequest(request.operation),
      source: CE_SOURCES.orchestrator,
      subject: request.paymentId,
      time: now,
      traceparent: childTraceparent(meta.traceparent),
    }),
    payload: request,
    aggregateId: request.paymentId,
  };
}

/** The command-rejected event for a command the decider never saw (invalid, or an id conflict). */
export function rejectionEvent(args: {
  paymentId: string;
  commandId: string;
  commandType: string | undefined;
  version: number;
  now: string;
  reason: RejectionCode;
  message: string;
}): PaymentEvent {
  return {
    type: 'command-rejected',
    paymentId: args.paymentId,
    commandId: args.commandId,
    version: args.version,
    occurredAt: args.now,
    commandType:
      args.commandType === undefined || args.commandType.length === 0
        ? 'unknown'
        : args.commandType,
    reason: args.reason,
    message: args.message.slice(0, 1024),
  };
}

/**
 * Fingerprint of a command that failed validation, so a redelivery of the same invalid command is
 * a duplicate (re-emits its rejection) and not a second rejection. Only the hash is kept: the body
 * may hold clear card data (PLAIN_CARD_DATA), which must never be stored.
 */
export function invalidCommandFingerprint(raw: unknown): string {
  const body: Record<string, unknown> =
    raw !== null && typeof raw === 'object' && !Array.isArray(raw)
      ? { ...(raw as Record<string, unknown>) }
      : { value: raw };
  for (const field of FINGERPRINT_EXCLUDED_FIELDS) delete body[field];
  return `invalid:sha256:${createHash('sha256').update(canonicalJson(body)).digest('hex')}`;
}

/** merchant.endpointId of an unvalidated command, when it is a short string. */
export function readEndpointId(raw: unknown): string {
  if (raw === null || typeof raw !== 'object') return '';
  const merchant = (raw as Record<string, unknown>).merchant;
  if (merchant === null || typeof merchant !== 'object') return '';
  const endpointId = (merchant as Record<string, unknown>).endpointId;
  return typeof endpointId === 'string' && endpointId.length <= 64 ? endpointId : '';
}

/** At most one hint-driven status refresh per payment per interval. */
export function hintAllowed(lastHintAt: Date | null, now: Date, intervalMs: number): boolean {
  return lastHintAt === null || now.getTime() - lastHintAt.getTime() >= intervalMs;
}

/**
 * A deferred resend (not-sent, then `notBefore`) still applies only while that request is the one
 * in flight and nothing came back from the gateway for it.
 */
export function resendStillWanted(state: PaymentState, requestId: string): boolean {
  return state.inFlight?.requestId === requestId && state.inFlight.stage === 'requested';
}

/** Backoff of a timer whose firing failed: 1 s, 2 s, 4 s … up to 5 minutes. */
export function timerRetryDelayMs(attempts: number): number {
  return Math.min(5 * 60_000, 1000 * 2 ** Math.min(20, Math.max(0, attempts)));
}

/** Backoff of the relay after failed publications: 200 ms doubling up to `maxMs`. */
export function relayBackoffMs(failures: number, maxMs: number): number {
  return Math.min(maxMs, 200 * 2 ** Math.min(20, Math.max(0, failures - 1)));
}
