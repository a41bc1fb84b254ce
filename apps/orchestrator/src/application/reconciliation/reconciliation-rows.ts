import {
  CE_SOURCES,
  ceType,
  type GatewayResult,
  GatewayStatusRequest,
  type MismatchKind,
  type ReconciliationCompleted,
  type ReconciliationMismatch,
  TOPICS,
  toKafkaHeaders,
} from '@payments/contracts';
import { messageTraceparent } from '@payments/observability';
import {
  type CheckSubject,
  type Expectation,
  type GatewayAnswer,
  isEvidence,
} from '../../domain/reconciliation/reconciliation';
import {
  gatewayRequestRow,
  type InputMeta,
  type OutboxRow,
} from '../../runtime/outbox/outbox-rows';

/**
 * What a reconciliation run reads and writes, as rows: its checks, the status queries they send,
 * the answers they take, and the events (mismatches, the run's completion) it reports.
 */

/** A check as stored. */
export interface CheckRow {
  run_id: string;
  saga_id: string;
  subject: CheckSubject;
  request_id: string;
  flow: string;
  endpoint_id: string;
  expectation: Expectation;
  state: string;
  attempts: number;
  /** Of the attempts, those our own adapter held back (not-sent with retryAt): not spent. */
  holds: number;
}

/**
 * How many of a check's attempts count against RECONCILIATION_MAX_ATTEMPTS: those the gateway
 * could have answered. An attempt the adapter held back by its own status budget (a run's queries
 * take the budget's bounded background share, so a run outpaces it by design) reached nothing;
 * it waits for the budget instead, up to `MAX_HOLDS` times.
 */
export function spentAttempts(check: Pick<CheckRow, 'attempts' | 'holds'>): number {
  return check.holds >= MAX_HOLDS ? Number.POSITIVE_INFINITY : check.attempts - check.holds;
}

/** Holds after which a check stops waiting for the budget (≈ an hour at one per retryAt). */
export const MAX_HOLDS = 3_600;

/** The status query a check sends (its own request id is the answer's subject). */
export function statusRequestRow(
  check: CheckRow,
  attempt: number,
  now: Date,
  rowId: string,
): OutboxRow {
  const e = check.expectation;
  const request = GatewayStatusRequest.parse({
    operation: 'status',
    requestId: check.request_id,
    paymentId: check.saga_id,
    merchant: { endpointId: check.endpoint_id },
    clientOrderId: e.clientOrderId,
    attempt,
    requestedAt: now.toISOString(),
    // The check is its own subject: the answer is matched on its request id.
    subjectRequestId: check.request_id,
    subjectOperation: e.operation,
    // Reconciliation reads settled history: the bounded background share of the status budget,
    // never a live payment's queries (domain/gateway-operation/polling.ts).
    priority: 'background',
    // The lookup names no order: the gateway answers about the one it holds under the id.
    ...(e.gatewayOrderId === undefined || check.subject === 'client-order-id'
      ? {}
      : { gatewayOrderId: e.gatewayOrderId }),
    // A request check asks about exactly that request of the order.
    ...(e.serial === undefined || check.subject === 'client-order-id'
      ? {}
      : { subjectSerial: e.serial }),
  });
  // The one way a gateway request becomes an outbox row (a new trace: a check has no input).
  return gatewayRequestRow(request, rowId, now.toISOString(), {});
}

/** A run's event (a mismatch, the run's completion) as an outbox row on the reconciliation topic. */
export function eventRow(
  id: string,
  runId: string,
  event: ReconciliationMismatch | ReconciliationCompleted,
  time: string,
  meta: InputMeta | undefined,
): OutboxRow {
  return {
    id,
    topic: TOPICS.reconciliation,
    key: runId,
    headers: toKafkaHeaders({
      id,
      type: ceType.reconciliation(event.type),
      source: CE_SOURCES.reconciliation,
      subject: runId,
      time,
      traceparent: messageTraceparent(TOPICS.reconciliation, meta?.traceparent),
    }),
    payload: event,
    aggregateId: runId,
  };
}

/** The mismatch a check found, as its event says it. */
export function mismatchEvent(
  check: CheckRow,
  kind: MismatchKind,
  gateway: GatewaySide | undefined,
  otherOrder: GatewaySide | undefined,
  detectedAt: string,
): ReconciliationMismatch {
  const expectation = check.expectation;
  return {
    type: 'reconciliation-mismatch',
    runId: check.run_id,
    sagaId: check.saga_id,
    flow: check.flow,
    endpointId: check.endpoint_id,
    kind,
    ours: {
      status: expectation.status,
      operation: expectation.operation,
      ...(expectation.amount === undefined ? {} : { amount: expectation.amount }),
      ...(expectation.basis === undefined ? {} : { basis: expectation.basis }),
      ...(expectation.requestId === undefined ? {} : { requestId: expectation.requestId }),
      ...(expectation.serial === undefined ? {} : { serial: expectation.serial }),
    },
    ...(gateway === undefined ? {} : { gateway }),
    ...(otherOrder === undefined ? {} : { otherOrder }),
    detectedAt,
  };
}

/**
 * How long after the check that asked for it the lookup by client order id is due: longer than
 * the adapter's least interval between two status queries of one payment
 * (GATEWAY_STATUS_MIN_INTERVAL_MS, 1 s). Asked at once it was held back by the adapter ("status
 * query for this payment sent moments ago"): a round trip for nothing (test/chaos.md).
 */
export const LOOKUP_AFTER_MS = 2_000;

/** 2 s, 4 s, 8 s … capped at a minute: a processing order or a busy adapter gets time. */
export function backoffMs(attempts: number): number {
  return Math.min(60_000, 1000 * 2 ** Math.max(1, attempts));
}

/** A final answer, or undefined when the check must ask again. */
export function answerOf(result: GatewayResult): GatewayAnswer | undefined {
  const r = result.result;
  switch (r.kind) {
    case 'accepted':
      return r.report === undefined ? undefined : { kind: 'report', report: r.report };
    case 'rejected':
      return {
        kind: 'rejected',
        code: r.code,
        ...(r.orderUnknown === true ? { orderUnknown: true } : {}),
      };
    case 'not-sent':
    case 'unknown':
      return undefined;
  }
}

/**
 * A check's answer as evidence for its saga: the gateway's final reply about the very request the
 * saga waits for (domain/reconciliation/reconciliation.ts `isEvidence`), as the ordinary status reply about that
 * request a poll of the saga's own would bring (its subject the saga's request; the check's own
 * request id and attempt keep it apart in the saga's inbox). Undefined: not evidence.
 */
export function evidenceFor(
  check: CheckRow,
  result: GatewayResult,
  answer: GatewayAnswer,
): GatewayResult | undefined {
  const waitedFor = check.expectation.requestId;
  if (waitedFor === undefined || !isEvidence(check.expectation, answer)) return undefined;
  return { ...result, paymentId: check.saga_id, subjectRequestId: waitedFor };
}

export type GatewaySide = NonNullable<ReconciliationMismatch['gateway']>;

export function gatewaySide(
  report: NonNullable<Extract<GatewayAnswer, { kind: 'report' }>['report']>,
): GatewaySide {
  return {
    status: report.status,
    ...(report.transactionType === undefined ? {} : { transactionType: report.transactionType }),
    ...(report.amount === undefined ? {} : { amount: report.amount }),
    ...(report.gatewayOrderId === undefined ? {} : { gatewayOrderId: report.gatewayOrderId }),
    ...(report.errorCode === undefined ? {} : { errorCode: report.errorCode }),
  };
}
