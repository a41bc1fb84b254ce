import {
  CE_SOURCES,
  ceType,
  type GatewayRequest,
  TOPICS,
  toKafkaHeaders,
} from '@payments/contracts';
import { messageTraceparent } from '@payments/observability';
import type { SagaEvent } from '../flow';

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
  /**
   * W3C traceparent of the input (its consume span, or its timer's span); outgoing messages
   * continue its trace (`messageTraceparent`).
   */
  readonly traceparent?: string;
}

/**
 * An event on payments.events.v1. `ceId` is the event's id from history: the outbox row id when it
 * is first published, the same id again when it is re-published for a duplicate command, so
 * consumers deduplicate it.
 */
export function eventRow(
  sagaId: string,
  event: SagaEvent,
  ids: { rowId: string; ceId: string },
  meta: InputMeta,
): OutboxRow {
  return {
    id: ids.rowId,
    topic: TOPICS.events,
    key: sagaId,
    headers: toKafkaHeaders({
      id: ids.ceId,
      type: ceType.event(event.type),
      source: CE_SOURCES.orchestrator,
      subject: sagaId,
      time: event.occurredAt,
      traceparent: messageTraceparent(TOPICS.events, meta.traceparent),
    }),
    payload: event,
    aggregateId: sagaId,
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
      traceparent: messageTraceparent(TOPICS.gatewayRequests, meta.traceparent),
    }),
    payload: request,
    aggregateId: request.paymentId,
  };
}

/** Backoff of the relay after failed publications: 200 ms doubling up to `maxMs`. */
export function relayBackoffMs(failures: number, maxMs: number): number {
  return Math.min(maxMs, 200 * 2 ** Math.min(20, Math.max(0, failures - 1)));
}
