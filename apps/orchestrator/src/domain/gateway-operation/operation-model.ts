import {
  type GatewayStatusReport,
  type GatewayStatusRequest,
  type MerchantRef,
  type Money,
  type PayerAction,
  type StatusPriority,
  type SubjectOperation,
  type UnknownConcern,
} from '@payments/contracts';
import { addMs, type IgnoreReason, type KeepSooner, msBetween } from '../decision';
import { nextPollDelay } from './polling';

/**
 * The vocabulary of one gateway operation in flight, shared by every flow that sends one: its
 * state, order, timers, effects, rules, the names a flow gives its events, and the steps a
 * decision makes (gateway-operation.ts decides when each is due).
 */
export type OperationStage = 'requested' | 'processing' | 'action-required' | 'outcome-unknown';

export interface OperationInFlight<Op extends SubjectOperation = SubjectOperation> {
  readonly operation: Op;
  /** Stable across resends; results and status replies are matched on it. */
  readonly requestId: string;
  /** The command that caused it. */
  readonly commandId: string;
  readonly requestedAt: string;
  readonly stage: OperationStage;
  readonly unknownSince?: string;
  /** The alert for this unknown outcome was raised. */
  readonly alerted?: boolean;
  /** The payer action last announced, so a repeated status reply does not announce it again. */
  readonly action?: PayerAction;
  /** Sent once more because the gateway had no trace of it. */
  readonly resent?: boolean;
  /** The gateway's serial number of this request, once a reply named it. */
  readonly serial?: string;
  /** Why a person must look at this unknown outcome, when it is more than time. */
  readonly concern?: UnknownConcern;
}

/** What the gateway's acknowledgement of a request says (accepted-by-gateway). */
export interface AcceptedFacts {
  readonly gatewayOrderId?: string;
  readonly serialNumber?: string;
}

/**
 * What a reply names besides its status report: the recurring-payment-id of a registration
 * (create-recurring-payment's reply, or a status reply about it).
 */
export interface ReplyFacts {
  readonly recurringPaymentId?: string;
}

/** What an outcome-unknown event says. */
export interface UnknownFacts {
  readonly since: string;
  readonly alert: boolean;
  readonly concern?: UnknownConcern;
  readonly reportedAmount?: Money;
}

/**
 * How an operation in flight changes with its events (every flow's evolve uses these): requested,
 * acknowledged by the gateway (no longer unknown), waiting for the payer, unknown (since the first
 * unknown; `alert` once raised), sent once more after the gateway had no trace of it.
 */
export const inFlight = {
  requested: <Op extends SubjectOperation>(event: {
    operation: Op;
    requestId: string;
    commandId: string;
    occurredAt: string;
  }): OperationInFlight<Op> => ({
    operation: event.operation,
    requestId: event.requestId,
    commandId: event.commandId,
    requestedAt: event.occurredAt,
    stage: 'requested',
  }),
  // Dropping the unknown-outcome fields leaves an O without them (the cast says so).
  accepted: <O extends OperationInFlight>(
    { unknownSince: _u, alerted: _a, concern: _c, ...op }: O,
    serial?: string,
  ): O =>
    ({
      ...op,
      stage: 'processing',
      ...(serial === undefined ? {} : { serial }),
    }) as O,
  actionRequired: <O extends OperationInFlight>(op: O, action: PayerAction): O => ({
    ...op,
    stage: 'action-required',
    action,
  }),
  unknown: <O extends OperationInFlight>(
    op: O,
    since: string,
    alert: boolean,
    concern?: UnknownConcern,
  ): O => ({
    ...op,
    stage: 'outcome-unknown',
    unknownSince: op.unknownSince ?? since,
    ...(alert ? { alerted: true } : {}),
    ...(concern === undefined ? {} : { concern }),
  }),
  // A new send: whatever was raised about the first one is over (the cast as for `accepted`).
  resent: <O extends OperationInFlight>({ alerted: _a, concern: _c, ...op }: O, at: string): O =>
    ({ ...op, resent: true, unknownSince: at }) as O,
};

/** A state at `version` with its operation in flight changed (when it has one). */
export function withOperation<
  S extends { readonly version: number; readonly inFlight?: OperationInFlight },
>(
  state: S,
  version: number,
  change: (op: NonNullable<S['inFlight']>) => NonNullable<S['inFlight']>,
): S {
  const op = state.inFlight as NonNullable<S['inFlight']> | undefined;
  return { ...state, version, ...(op ? { inFlight: change(op) } : {}) };
}

/** The order an operation belongs to (what a status query and a callback are matched with). */
export interface GatewayOrder {
  /** The saga id (the request's `paymentId`). */
  readonly sagaId: string;
  readonly merchant: MerchantRef;
  readonly clientOrderId: string;
  readonly gatewayOrderId?: string;
  /** The gateway's serial numbers of the order's earlier requests (settled before this one). */
  readonly requestSerials?: readonly string[];
}

export type OperationTimer =
  /**
   * `hinted`: brought forward by a verified callback or browser return, or asked again after the
   * adapter held an urgent query back (an urgent query). `hintedAt`: when that hint (or hold)
   * came: the operation's polls stay urgent, at the fast cadence counted from it, for
   * URGENT_FOR_MS (domain/gateway-operation/polling.ts `hintLive`) — a hinted query refused or
   * answered 5xx does not drop the hint.
   */
  | { kind: 'status-poll'; requestId: string; attempt: number; hinted?: true; hintedAt?: string }
  | { kind: 'unknown-alert'; requestId: string }
  | ResultDeadlineTimer;

/**
 * The deadline of a send's result (issue 32 item 8), armed by the runtime for every request it
 * publishes (flow-binding.ts) and dropped by the request's first result: a request or result lost
 * on the way (dead-lettered, an adapter down past it) would otherwise leave the operation
 * `requested` forever, never polled, alerted, counted or reconciled. `attempt`: the send's.
 */
export interface ResultDeadlineTimer {
  kind: 'result-deadline';
  requestId: string;
  attempt: number;
}

export const RESULT_DEADLINE_TIMER = 'result-deadline' satisfies ResultDeadlineTimer['kind'];

/** How long a send may go without its result before the outcome is unknown (RESULT_DEADLINE_SECONDS). */
export const DEFAULT_RESULT_DEADLINE_MS = 2 * 60 * 1000;

/** The timer kinds of an operation in flight (a flow's own timers come on top). */
export const OPERATION_TIMER_KINDS = [
  'status-poll',
  'unknown-alert',
  RESULT_DEADLINE_TIMER,
] as const satisfies ReadonlyArray<OperationTimer['kind']>;

/**
 * Publish the SAME request again (same requestId and client_orderid, `attempt` bumped) not before
 * `notBefore`; `afterNoTrace`: the one resend after the gateway showed no trace of it.
 */
export interface ResendGatewayRequest {
  type: 'resend-gateway-request';
  requestId: string;
  attempt: number;
  notBefore: string;
  afterNoTrace?: true;
}

/** The effects of this module, a subset of every gateway flow's effects. */
export type OperationEffect =
  | { type: 'send-gateway-request'; request: GatewayStatusRequest }
  | ResendGatewayRequest
  /** `keepSooner`: a pending timer of this kind and request due no later stays as it is (KeepSooner). */
  | { type: 'schedule-timer'; timer: OperationTimer; at: string; keepSooner?: KeepSooner }
  | { type: 'cancel-timer'; timer: OperationTimer['kind'] };

export interface OperationRules {
  /** Sends of one request before a persistent not-sent result fails it. */
  readonly maxSendAttempts: number;
  /** How long a request our own breaker or limits held back may wait (undefined: the default). */
  readonly ownLimitWaitMs?: number;
  /** No trace at the gateway this long → sent once more (undefined: the default). */
  readonly neverReceivedAfterMs?: number;
  /** An outcome unknown this long raises the alert (facts §4: one hour). */
  readonly unknownAlertAfterMs: number;
  /**
   * A send without its result this long is unknown (undefined: {@link DEFAULT_RESULT_DEADLINE_MS});
   * the runtime arms the deadline (runtime/flow-binding.ts).
   */
  readonly resultDeadlineMs?: number;
  /**
   * Where the gateway answers a request repeated under the same client_orderid with the first
   * one's order and never charges twice: `true` every endpoint, a list those endpoint ids, `false`
   * or undefined none (the default: the spec never promises it, and a gateway that charges a
   * reused client_orderid again, slower than the window, would charge twice). Where it does not,
   * a request that opens an order is never sent again: no trace leaves it unknown for a person.
   */
  readonly gatewayRefusesReusedOrderId?: ReusedOrderIdRefusal;
}

/** `true`: every endpoint; a list: these endpoint ids; `false` / undefined: none. */
export type ReusedOrderIdRefusal = boolean | readonly string[];

/** Whether `endpointId`'s gateway refuses a request repeated under the same client_orderid. */
export function refusesReusedOrderId(rules: OperationRules, endpointId: string): boolean {
  const refusal = rules.gatewayRefusesReusedOrderId;
  return typeof refusal === 'boolean' ? refusal : (refusal?.includes(endpointId) ?? false);
}

/**
 * How long an unknown outcome must stay without any trace at the gateway before the request is
 * sent once more (the gateway shows a new order at once; polls run every 3-5 s meanwhile).
 */
export const DEFAULT_NEVER_RECEIVED_AFTER_MS = 60_000;

/** Why an operation failed without money moving. */
export interface FailedWhy {
  readonly reason: 'rejected' | 'not-sent' | 'error' | 'filtered';
  readonly code?: string;
  readonly message?: string;
}

export interface OperationOutcome<Draft, Effect> {
  readonly drafts: Draft[];
  /** Besides dropping the operation's poll and alert timers, which this module does. */
  readonly effects: Effect[];
}

/** How a flow names what happened to its operation (its events and extra effects). */
export interface OperationVocabulary<O extends OperationInFlight, Draft, Effect> {
  /**
   * Operations that open the order (sale, preauth, payout-check, a one-step payout): the gateway
   * refusing to describe the order means it never got them, any status reply is about them, and
   * a verified callback naming them decides. Others (capture, payout-pay …) are resolved only by a
   * status reply naming them.
   */
  opensOrder(operation: O['operation']): boolean;
  /**
   * An operation that does not open the order which the gateway refuses when it comes a second
   * time (a second capture or void of the order, a repeated payout-pay): only these are sent
   * again after no trace. Undefined: none (a second return would refund twice).
   */
  refusesRepeat?(operation: O['operation']): boolean;
  /**
   * The operations the gateway may turn out this one to be, when the gateway decides the
   * transaction (the universal payment form: a sale or a preauth, as the endpoint is set up).
   * Undefined: the operation is what was asked.
   */
  transactionsByGateway?(op: O): readonly O['operation'][] | undefined;
  /**
   * The operation goes on only once a person fills in the gateway's hosted form, whose address
   * its send reply brings (sale-form, payout-form …). Undefined: none of the flow's do.
   */
  hostedForm?(op: O): boolean;
  /**
   * The amount an operation that opens the order asked for, to compare with the gateway's report
   * (undefined: nothing to compare, e.g. a zero-amount verification or a follow-up, whose status
   * amount stays the order's initial amount).
   */
  expectedAmount?(op: O): Money | undefined;
  /**
   * What the flow does besides the alert when the gateway reports another amount than
   * {@link expectedAmount} (money-out flows: keep the larger of the two reserved on the day's
   * budget, since the gateway's amount may have left). Undefined: nothing.
   */
  amountMismatch?(op: O, reported: Money): Effect[];
  acceptedByGateway(op: O, facts: AcceptedFacts): Draft;
  /**
   * A synchronous operation whose acknowledgement is already its outcome (create-recurring-payment:
   * the reply names the new recurring-payment-id): that outcome instead of `acceptedByGateway`.
   * Undefined (or it returns undefined): acknowledged, and status queries bring the outcome.
   */
  acknowledgedOutcome?(
    op: O,
    facts: AcceptedFacts & ReplyFacts,
  ): OperationOutcome<Draft, Effect> | undefined;
  /** Undefined: the flow has no payer step; a redirect is not announced. */
  actionRequired?(op: O, action: PayerAction): Draft;
  /** What a newly announced payer action starts (card payments: the 3DS method step's deadline). */
  payerActionEffects?(op: O, action: PayerAction): Effect[];
  outcomeUnknown(op: O, facts: UnknownFacts): Draft;
  operationResent(op: O, attempt: number, unknownSince: string): Draft;
  /** `reply`: what a status reply named besides its report (absent for a callback). */
  succeeded(
    report: GatewayStatusReport,
    op: O,
    reply?: ReplyFacts,
  ): OperationOutcome<Draft, Effect>;
  declined(report: GatewayStatusReport, op: O): OperationOutcome<Draft, Effect>;
  failed(op: O, why: FailedWhy): OperationOutcome<Draft, Effect>;
  /**
   * A decision of two people settled the operation (decided-operation.ts): its event. Undefined:
   * the flow takes no decisions.
   */
  settledByDecision?(op: O, decision: OperationDecisionFacts): Draft;
  /** Besides dropping the timers, what a decision starts ("not done": a reservation released). */
  decidedEffects?(op: O, decision: OperationDecisionFacts): Effect[];
  /** A gateway answer contradicted the decision: the case reopened, with an alert. */
  caseReopened?(decided: DecidedOperationFacts, contradiction: ContradictionFacts): Draft;
}

/** What a decision of two people says (decided-operation.ts's OperationDecision). */
export interface OperationDecisionFacts {
  readonly requestId: string;
  readonly caseId: string;
  readonly decision: 'done' | 'not-done';
  readonly amount?: Money;
  readonly amountWhy?: string;
  readonly decidedBy: string;
  readonly approvedBy: string;
  readonly reason: string;
}

/** What the saga keeps of an operation settled by decision (decided-operation.ts). */
export interface DecidedOperationFacts {
  readonly operation: string;
  readonly requestId: string;
  readonly caseId: string;
  readonly decision: 'done' | 'not-done';
  readonly amount?: Money;
  readonly serial?: string;
  readonly reopened?: boolean;
}

/** What a gateway answer contradicting a decision said. */
export interface ContradictionFacts {
  readonly answer: 'succeeded' | 'declined' | 'failed';
  readonly reportedAmount?: Money;
}

export interface OperationContext {
  readonly now: string;
  readonly ids: { next(): string };
}

/** The operation in flight, its order, how its flow names it, the rules and the decision's time. */
export interface OperationScope<O extends OperationInFlight, D, E> {
  readonly order: GatewayOrder;
  readonly op: O;
  readonly vocab: OperationVocabulary<O, D, E>;
  readonly rules: OperationRules;
  readonly ctx: OperationContext;
}

/** What an input means for the operation in flight: news (events to append) or nothing. */
export type OperationStep<Draft, Effect> =
  | { outcome: 'news'; drafts: Draft[]; effects: Array<Effect | OperationEffect> }
  | { outcome: 'ignored'; reason: IgnoreReason; effects: OperationEffect[] };

export const news = <D, E>(
  drafts: D[],
  effects: Array<E | OperationEffect>,
): OperationStep<D, E> => ({
  outcome: 'news',
  drafts,
  effects,
});

export const ignored = <D, E>(
  reason: IgnoreReason,
  effects: OperationEffect[] = [],
): OperationStep<D, E> => ({ outcome: 'ignored', reason, effects });

/** The gateway's error code and message of a report, as events carry them (absent: left out). */
export function reportError(report: GatewayStatusReport): { code?: string; message?: string } {
  return {
    ...(report.errorCode === undefined ? {} : { code: report.errorCode }),
    ...(report.errorMessage === undefined ? {} : { message: report.errorMessage }),
  };
}

/** Timers to drop once the operation in flight has its outcome. */
export function settleTimers(): OperationEffect[] {
  return [
    { type: 'cancel-timer', timer: 'status-poll' },
    { type: 'cancel-timer', timer: 'unknown-alert' },
  ];
}

/**
 * The first status poll after a send (facts §4 bands) — unless a poll of this request is due
 * sooner: a verified callback or browser return that came before the send's result (their
 * streams are not ordered with each other) set a hinted poll due now, and the result's first
 * poll, a routine one seconds later, must not put it off (session 18: a return's callback lost its
 * urgent query that way in CI).
 */
export function firstPoll(op: OperationInFlight, now: string): OperationEffect {
  return {
    type: 'schedule-timer',
    timer: { kind: 'status-poll', requestId: op.requestId, attempt: 1 },
    at: addMs(now, nextPollDelay(0, 0)),
    keepSooner: 'any',
  };
}

/**
 * Nothing changes; a status query is made at once (the poll timer is an upsert per saga).
 * `hinted`: a verified callback or browser return said money may have moved, and the query is
 * urgent (domain/gateway-operation/polling.ts); an unverified hint's is not.
 */
export function statusQuerySoon<D, E>(
  op: OperationInFlight,
  now: string,
  reason: IgnoreReason = 'HINT_ONLY',
  hinted = true,
): OperationStep<D, E> {
  return ignored(reason, [
    {
      type: 'schedule-timer',
      timer: {
        kind: 'status-poll',
        requestId: op.requestId,
        attempt: 1,
        ...(hinted ? { hinted: true as const, hintedAt: now } : {}),
      },
      at: now,
    },
  ]);
}

/** `priority`: its class in the adapter's status budget (domain/gateway-operation/polling.ts; absent: routine). */
export function statusRequest(
  order: GatewayOrder,
  op: OperationInFlight,
  ctx: OperationContext,
  priority?: StatusPriority,
  /** For an urgent query: when its urgency began (GatewayStatusRequest `urgentSince`). */
  urgentSince?: string,
): GatewayStatusRequest {
  return {
    operation: 'status',
    requestId: ctx.ids.next(),
    paymentId: order.sagaId,
    merchant: order.merchant,
    clientOrderId: order.clientOrderId,
    attempt: 1,
    requestedAt: ctx.now,
    subjectRequestId: op.requestId,
    subjectOperation: op.operation,
    ...(order.gatewayOrderId === undefined ? {} : { gatewayOrderId: order.gatewayOrderId }),
    ...(op.serial === undefined ? {} : { subjectSerial: op.serial }),
    ...(priority === undefined ? {} : { priority }),
    ...(priority === 'urgent' && urgentSince !== undefined ? { urgentSince } : {}),
  };
}

/**
 * A refresh asked for by an operator or a producer, in every flow (a card payment's
 * `refresh-status`, a payout's, a transfer's): a status query about the operation in flight, sent
 * now, and no event. Its answer is matched and decides like any poll's, by the rules above: money
 * never moves on the asker's word. Undefined: nothing in flight, nothing to ask (the flow refuses
 * the command with NOTHING_TO_REFRESH). A person asked: the query is urgent in the status budget.
 */
export function refreshQuery(
  order: GatewayOrder,
  op: OperationInFlight | undefined,
  ctx: OperationContext,
): Extract<OperationEffect, { type: 'send-gateway-request' }> | undefined {
  if (op === undefined) return undefined;
  return {
    type: 'send-gateway-request',
    request: statusRequest(order, op, ctx, 'urgent', ctx.now),
  };
}

/**
 * Bring the re-ask of `requestId` already pending forward to now: the runtime moves the saga's
 * deferred resend of that very request (not another's) to now, and does nothing when none is
 * pending (its resend is on its way, or it is asked no more).
 */
export interface HastenResend {
  type: 'hasten-resend';
  requestId: string;
}

/**
 * A refresh of a request whose only re-ask is the request itself, sent again under the same
 * request id and client_orderid (a card reference: the gateway has no status of a create-card-ref
 * and keeps one reference per order, so the repeat answers with what the lost reply carried): the
 * pending re-ask is made now, and no event. Only a reply to that very request settles it; money
 * and identity never move on the asker's word. Undefined: the request's outcome is not unknown
 * (no request, or its first reply is still on its way), nothing to ask.
 */
export function refreshResend(
  request: { readonly requestId: string; readonly unknownSince?: string } | undefined,
): HastenResend | undefined {
  if (request?.unknownSince === undefined) return undefined;
  return { type: 'hasten-resend', requestId: request.requestId };
}

export function unknownAlertTimer(op: OperationInFlight, since: string, rules: OperationRules) {
  return {
    type: 'schedule-timer',
    timer: { kind: 'unknown-alert', requestId: op.requestId },
    at: addMs(since, rules.unknownAlertAfterMs),
  } as const satisfies OperationEffect;
}

/**
 * The unknown-outcome alert's timer fired: obsolete (another request's, settled or alerted
 * already), not due yet (armed again for the rest of the window, which may have grown), or due:
 * the outcome has been unknown since `since` for the whole window.
 */
export function unknownAlertVerdict(
  timer: Extract<OperationTimer, { kind: 'unknown-alert' }>,
  op: OperationInFlight,
  rules: OperationRules,
  now: string,
):
  | { readonly verdict: 'obsolete' }
  | { readonly verdict: 'later'; readonly rearm: OperationEffect }
  | { readonly verdict: 'due'; readonly since: string } {
  if (op.requestId !== timer.requestId || op.stage !== 'outcome-unknown' || op.alerted === true)
    return { verdict: 'obsolete' };
  const since = op.unknownSince ?? op.requestedAt;
  const remaining = rules.unknownAlertAfterMs - msBetween(since, now);
  if (remaining > 0)
    return {
      verdict: 'later',
      rearm: { type: 'schedule-timer', timer, at: addMs(now, remaining) },
    };
  return { verdict: 'due', since };
}

export function withSettledTimers<D, E>(outcome: OperationOutcome<D, E>): OperationStep<D, E> {
  return news(outcome.drafts, [...settleTimers(), ...outcome.effects]);
}
