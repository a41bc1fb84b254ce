import {
  isFinalGatewayStatus,
  type GatewayCallback,
  type GatewayResult,
  type GatewayStatusReport,
  type GatewayStatusRequest,
  type MerchantRef,
  type Money,
  type PayerAction,
  type SubjectOperation,
  type UnknownConcern,
} from '@payments/contracts';
import {
  addMs,
  type Draft,
  type FlowDecision,
  type IgnoreReason,
  msBetween,
  stampDrafts,
} from './decision';
import { nextPollDelay, POLL_BANDS } from './polling';
import { NEVER_RECEIVED_ATTEMPT, resendAfterNotSent } from './send-rules';

/**
 * One gateway operation in flight, the same way in every flow (card payments, payouts, transfers):
 * sent → accepted / approved / declined / failed (rejected, not sent, error, filtered) / unknown;
 * status polls; the never-received rule; the unknown-outcome alert. A flow names its events
 * through an {@link OperationVocabulary}; this module decides WHEN each is due.
 *
 * Truth about money (DESIGN.md), the rules every flow shares:
 *  - Which answer settles which request: the send's own reply; a status reply about exactly that
 *    request (asked `by-request-sn` once the gateway gave the request a serial number; otherwise
 *    the order's latest request, which is ours only when its serial is none of the order's earlier
 *    requests and its transaction type names our operation); a verified callback only about an
 *    operation that opens the order (a callback about a follow-up, a browser return or a callback
 *    naming no operation only brings a status query forward).
 *  - A reply that describes an earlier request of the order means "this request has left no trace
 *    yet", never its outcome.
 *  - "No trace" is concluded only from the gateway's answers and their times: for a request that
 *    opens the order, a status query refused because the order does not exist; for another, a
 *    status reply showing an earlier request as the order's latest, in a final status — and only
 *    when the gateway answered after the request's deadline (unknown since + the window).
 *  - A request with no trace is sent again only when the gateway itself would refuse the repeat as
 *    a duplicate (a reused client_orderid, a second capture or void, a repeated payout-pay), and
 *    once. Otherwise, or when the repeat left no trace either, the outcome stays unknown with the
 *    alert raised (`no-trace`): an operator or reconciliation decides. Never `failed` while money
 *    may have moved; never twice.
 *  - An opening operation's success names the gateway's amount: a reported amount or currency
 *    other than the request's raises the alert (`amount-mismatch`) instead of a success event.
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
  | { kind: 'status-poll'; requestId: string; attempt: number }
  | { kind: 'unknown-alert'; requestId: string };

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
  | { type: 'schedule-timer'; timer: OperationTimer; at: string }
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
   * The gateway answers a request repeated under the same client_orderid with the first one's
   * order and never charges twice (undefined: it does, as the sandbox's default). When false a
   * request that opens an order is never sent again: no trace leaves it unknown for a person.
   */
  readonly gatewayRefusesReusedOrderId?: boolean;
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

const news = <D, E>(drafts: D[], effects: Array<E | OperationEffect>): OperationStep<D, E> => ({
  outcome: 'news',
  drafts,
  effects,
});

const ignored = <D, E>(
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

/** The first status poll after a send (facts §4 bands). */
export function firstPoll(op: OperationInFlight, now: string): OperationEffect {
  return {
    type: 'schedule-timer',
    timer: { kind: 'status-poll', requestId: op.requestId, attempt: 1 },
    at: addMs(now, nextPollDelay(0, 0)),
  };
}

/** Nothing changes; a status query is made at once (the poll timer is an upsert per saga). */
export function statusQuerySoon<D, E>(
  op: OperationInFlight,
  now: string,
  reason: IgnoreReason = 'HINT_ONLY',
): OperationStep<D, E> {
  return ignored(reason, [
    {
      type: 'schedule-timer',
      timer: { kind: 'status-poll', requestId: op.requestId, attempt: 1 },
      at: now,
    },
  ]);
}

export function statusRequest(
  order: GatewayOrder,
  op: OperationInFlight,
  ctx: OperationContext,
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
  };
}

/**
 * A refresh asked for by an operator or a producer, in every flow (a card payment's
 * `refresh-status`, a payout's, a transfer's): a status query about the operation in flight, sent
 * now, and no event. Its answer is matched and decides like any poll's, by the rules above: money
 * never moves on the asker's word. Undefined: nothing in flight, nothing to ask (the flow refuses
 * the command with NOTHING_TO_REFRESH).
 */
export function refreshQuery(
  order: GatewayOrder,
  op: OperationInFlight | undefined,
  ctx: OperationContext,
): Extract<OperationEffect, { type: 'send-gateway-request' }> | undefined {
  if (op === undefined) return undefined;
  return { type: 'send-gateway-request', request: statusRequest(order, op, ctx) };
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

function unknownAlertTimer(op: OperationInFlight, since: string, rules: OperationRules) {
  return {
    type: 'schedule-timer',
    timer: { kind: 'unknown-alert', requestId: op.requestId },
    at: addMs(since, rules.unknownAlertAfterMs),
  } as const satisfies OperationEffect;
}

function withSettledTimers<D, E>(outcome: OperationOutcome<D, E>): OperationStep<D, E> {
  return news(outcome.drafts, [...settleTimers(), ...outcome.effects]);
}

/**
 * Which request of the order a status reply describes, for the operation in flight:
 *  - `this`: the operation's own request;
 *  - `earlier`: a request the order had before it (this request has left no trace yet);
 *  - `undetermined`: it cannot be told (no serial to tell two requests of one type apart).
 * The reply names its request by serial (`by-request-sn`); `about` lists the operations its
 * transaction type can name, normalised at the edge.
 */
export type ReplySubject = 'this' | 'earlier' | 'undetermined';

export function replySubject<O extends OperationInFlight>(
  report: GatewayStatusReport,
  about: readonly string[] | undefined,
  order: Pick<GatewayOrder, 'requestSerials'>,
  op: O,
  opensOrder: (operation: O['operation']) => boolean,
): ReplySubject {
  const serial = report.requestSerial;
  const earlier = order.requestSerials ?? [];
  if (serial !== undefined && earlier.includes(serial)) return 'earlier';
  // Nothing came before the request that opens the order: any reply about the order is about it.
  if (opensOrder(op.operation)) return 'this';
  if (serial !== undefined && op.serial !== undefined)
    return serial === op.serial ? 'this' : 'undetermined';
  // The latest request is of another type: an earlier one (e.g. the preauth before a capture).
  if (about !== undefined && !about.includes(op.operation)) return 'earlier';
  // Same type, and no serial to tell ours from an earlier one of that type (a second return).
  if (serial === undefined) return 'undetermined';
  return 'this';
}

/**
 * A send result or a status reply. A status reply settles the operation only when it describes
 * this very request ({@link replySubject}); one that shows an earlier request as the order's latest
 * means no trace of this one yet.
 */
function decideOperationResult<O extends OperationInFlight, D, E>(
  result: GatewayResult,
  about: readonly string[] | undefined,
  scope: OperationScope<O, D, E>,
): OperationStep<D, E> {
  const { order, op, vocab, rules, ctx } = scope;
  if (result.operation === 'status') {
    if (result.subjectRequestId !== op.requestId) return ignored('STALE_REQUEST');
    const reply = result.result;
    if (reply.kind === 'rejected') {
      // Only "no such order" says anything: a refused query (credentials, endpoint, form) does not.
      if (op.stage === 'outcome-unknown' && vocab.opensOrder(op.operation) && reply.orderUnknown)
        return noTrace(scope, result.completedAt);
      return ignored('NO_NEWS');
    }
    // A failed status query changes nothing: the poll timer asks again.
    if (reply.kind !== 'accepted' || reply.report === undefined) return ignored('NO_NEWS');
    switch (replySubject(reply.report, about, order, op, (o) => vocab.opensOrder(o))) {
      case 'this': {
        const named = namedBy(about, op, vocab);
        // A final status of a transaction the gateway decided, in a reply that does not say
        // which it was: whether money was charged or only held cannot be told from it.
        if (named === undefined && isFinalGatewayStatus(reply.report.status))
          return ignored('NOT_ABOUT_THIS_OPERATION');
        return applyReport(
          reply.report,
          { ...scope, op: named ?? op },
          reply.recurringPaymentId === undefined
            ? undefined
            : { recurringPaymentId: reply.recurringPaymentId },
        );
      }
      case 'earlier':
        if (op.stage === 'outcome-unknown' && isFinalGatewayStatus(reply.report.status))
          return noTrace(scope, result.completedAt);
        return ignored('NOT_ABOUT_THIS_OPERATION');
      case 'undetermined':
        return ignored('NOT_ABOUT_THIS_OPERATION');
      default:
        throw new Error('unhandled reply subject');
    }
  }

  if (result.requestId !== op.requestId) return ignored('STALE_REQUEST');
  // Only the first result of a send counts; a callback or status reply may already have moved on.
  if (op.stage !== 'requested') return ignored('DUPLICATE_RESULT');

  const r = result.result;
  switch (r.kind) {
    case 'accepted': {
      const acknowledged =
        r.report === undefined
          ? vocab.acknowledgedOutcome?.(op, {
              ...(r.gatewayOrderId === undefined ? {} : { gatewayOrderId: r.gatewayOrderId }),
              ...(r.serialNumber === undefined ? {} : { serialNumber: r.serialNumber }),
              ...(r.recurringPaymentId === undefined
                ? {}
                : { recurringPaymentId: r.recurringPaymentId }),
            })
          : undefined;
      if (acknowledged !== undefined) return withSettledTimers(acknowledged);
      const drafts: D[] = [
        vocab.acceptedByGateway(op, {
          ...(r.gatewayOrderId === undefined ? {} : { gatewayOrderId: r.gatewayOrderId }),
          ...(r.serialNumber === undefined ? {} : { serialNumber: r.serialNumber }),
        }),
      ];
      let progressed: O = {
        ...op,
        stage: 'processing',
        ...(r.serialNumber === undefined ? {} : { serial: r.serialNumber }),
      };
      if (r.redirectUrl !== undefined && vocab.actionRequired !== undefined) {
        const action: PayerAction = { kind: 'redirect', url: r.redirectUrl };
        drafts.push(vocab.actionRequired(progressed, action));
        progressed = { ...progressed, action };
      }
      if (r.report !== undefined) {
        const report =
          r.report.gatewayOrderId === undefined && r.gatewayOrderId !== undefined
            ? { ...r.report, gatewayOrderId: r.gatewayOrderId }
            : r.report;
        const more = reportOutcome(report, { ...scope, op: progressed });
        if (more.final) return news([...drafts, ...more.drafts], more.effects);
        drafts.push(...more.drafts);
      }
      return news(drafts, [firstPoll(op, ctx.now)]);
    }
    case 'rejected':
      // The repeat of a request with no trace refused: the gateway may be refusing it as the
      // duplicate of the first send, which arrived after all. Only a status reply can tell.
      if (op.resent === true && result.attempt >= NEVER_RECEIVED_ATTEMPT)
        return news(
          [vocab.outcomeUnknown(op, { since: ctx.now, alert: false })],
          [firstPoll(op, ctx.now), unknownAlertTimer(op, ctx.now, rules)],
        );
      return withSettledTimers(
        vocab.failed(op, { reason: 'rejected', code: r.code, message: r.message }),
      );
    case 'not-sent': {
      const resend = resendAfterNotSent({
        attempt: result.attempt,
        retryAt: r.retryAt,
        requestedAt: op.requestedAt,
        now: ctx.now,
        maxSendAttempts: rules.maxSendAttempts,
        ownLimitWaitMs: rules.ownLimitWaitMs,
      });
      if (resend === undefined)
        return withSettledTimers(vocab.failed(op, { reason: 'not-sent', message: r.reason }));
      // Resend the same request: same requestId, same clientOrderId. No event; nothing happened.
      return ignored('NO_NEWS', [
        { type: 'resend-gateway-request', requestId: op.requestId, ...resend },
      ]);
    }
    case 'unknown':
      return news(
        [vocab.outcomeUnknown(op, { since: ctx.now, alert: false })],
        [firstPoll(op, ctx.now), unknownAlertTimer(op, ctx.now, rules)],
      );
    default: {
      const never: never = r;
      throw new Error(`unhandled result ${JSON.stringify(never)}`);
    }
  }
}

/**
 * The gateway showed no trace of the request in an answer given at `answeredAt` (a status query
 * refused as "no such order" for a request that opens the order; the order's latest request being
 * an earlier one for another). Judged on when the gateway answered, after the request's deadline:
 * the window from when the outcome became unknown. Then the request is sent once more only when
 * the gateway would refuse the repeat as a duplicate; otherwise, or when the repeat left no trace
 * either, the outcome stays unknown with the alert raised for a person (polls go on: a slow
 * gateway's late answer still settles it).
 */
function noTrace<O extends OperationInFlight, D, E>(
  { op, vocab, rules, ctx }: OperationScope<O, D, E>,
  answeredAt: string,
): OperationStep<D, E> {
  const since = op.unknownSince ?? op.requestedAt;
  const windowMs = rules.neverReceivedAfterMs ?? DEFAULT_NEVER_RECEIVED_AFTER_MS;
  if (msBetween(since, answeredAt) < windowMs) return ignored('NO_NEWS');
  const repeatRefused = vocab.opensOrder(op.operation)
    ? rules.gatewayRefusesReusedOrderId !== false
    : (vocab.refusesRepeat?.(op.operation) ?? false);
  if (repeatRefused && op.resent !== true) {
    return news(
      [vocab.operationResent(op, NEVER_RECEIVED_ATTEMPT, since)],
      [
        {
          type: 'resend-gateway-request',
          requestId: op.requestId,
          attempt: NEVER_RECEIVED_ATTEMPT,
          notBefore: ctx.now,
          afterNoTrace: true,
        },
        { type: 'cancel-timer', timer: 'unknown-alert' },
      ],
    );
  }
  if (op.alerted === true) return ignored('NO_NEWS');
  return news(
    [vocab.outcomeUnknown(op, { since, alert: true, concern: 'no-trace' })],
    [{ type: 'cancel-timer', timer: 'unknown-alert' }],
  );
}

/**
 * A verified callback. `about` lists the operations the callback's transaction type can name,
 * normalised from the gateway's vocabulary at the edge (undefined: the callback names none).
 */
function decideOperationCallback<O extends OperationInFlight, D, E>(
  callback: GatewayCallback,
  about: readonly string[] | undefined,
  scope: OperationScope<O, D, E>,
): OperationStep<D, E> {
  const { order, op, vocab, ctx } = scope;
  if (callback.clientOrderId !== order.clientOrderId) return ignored('UNKNOWN_ORDER');
  // The control covers the orderid: one that is not this order's is about another order.
  if (
    order.gatewayOrderId !== undefined &&
    callback.report.gatewayOrderId !== undefined &&
    callback.report.gatewayOrderId !== order.gatewayOrderId
  )
    return ignored('UNKNOWN_ORDER');
  const named = namedBy(about, op, vocab) ?? op;
  if (about !== undefined && !about.includes(named.operation))
    return ignored('NOT_ABOUT_THIS_OPERATION');
  // Truth about money (DESIGN.md): a payer's browser return, a callback that names no operation,
  // and any callback about an operation that does not open the order are hints. The return
  // URL's control is the same for every approved operation on the order and the server checksum
  // binds neither the operation nor the amount, so a genuine control can be replayed for another
  // operation. Such a callback only asks for a status query; the status reply, matched to the
  // operation, decides.
  if (
    callback.source === 'browser-return' ||
    about === undefined ||
    !vocab.opensOrder(op.operation)
  )
    return statusQuerySoon(op, ctx.now);
  // The control does not cover the amount: a callback naming another amount is asked about (the
  // status reply's amount decides, and raises the mismatch if the gateway really says so).
  const expected = vocab.expectedAmount?.(op);
  if (
    expected !== undefined &&
    callback.report.amount !== undefined &&
    !sameMoney(expected, callback.report.amount)
  )
    return statusQuerySoon(op, ctx.now);
  return applyReport(callback.report, { ...scope, op: named });
}

/**
 * The operation in flight as the gateway's answer names it. When the gateway decides the
 * transaction ({@link OperationVocabulary.transactionsByGateway}), its answer's transaction type
 * says which of the possible operations it was: a universal form that held the money reports an
 * authorization, never a charge. An answer naming none of them leaves the operation as asked;
 * undefined: the answer names no transaction type, so it cannot tell which it was.
 */
function namedBy<O extends OperationInFlight, D, E>(
  about: readonly string[] | undefined,
  op: O,
  vocab: OperationVocabulary<O, D, E>,
): O | undefined {
  const possible = vocab.transactionsByGateway?.(op);
  if (possible === undefined) return op;
  if (about === undefined) return undefined;
  const named = possible.find((operation) => about.includes(operation));
  return named === undefined || named === op.operation ? op : { ...op, operation: named };
}

function applyReport<O extends OperationInFlight, D, E>(
  report: GatewayStatusReport,
  scope: OperationScope<O, D, E>,
  reply?: ReplyFacts,
): OperationStep<D, E> {
  const { drafts, effects } = reportOutcome(report, scope, reply);
  if (drafts.length === 0 && effects.length === 0) return ignored('NO_NEWS');
  return news(drafts, effects);
}

const sameMoney = (a: Money, b: Money): boolean => a.minor === b.minor && a.currency === b.currency;

function samePayerAction(a: PayerAction | undefined, b: PayerAction): boolean {
  if (a === undefined || a.kind !== b.kind) return false;
  switch (b.kind) {
    case 'redirect':
      return a.kind === 'redirect' && a.url === b.url;
    case 'html':
      return a.kind === 'html' && a.html === b.html;
    case 'threeds-method':
      return (
        a.kind === 'threeds-method' &&
        a.url === b.url &&
        a.threeDSServerTransID === b.threeDSServerTransID
      );
    default: {
      const never: never = b;
      throw new Error(`unhandled payer action ${JSON.stringify(never)}`);
    }
  }
}

/**
 * What a gateway status (a reply, a status query or a verified callback) means for the operation
 * in flight. `final` when the operation has its outcome.
 */
function reportOutcome<O extends OperationInFlight, D, E>(
  report: GatewayStatusReport,
  { op, vocab, rules, ctx }: OperationScope<O, D, E>,
  reply?: ReplyFacts,
): { drafts: D[]; effects: Array<E | OperationEffect>; final: boolean } {
  // A status reply names the request's serial: kept (accepted-by-gateway) before anything else,
  // so a later request of the order can tell a reply about this one from one about itself.
  const learned: D[] =
    report.requestSerial !== undefined &&
    op.serial === undefined &&
    // (requested / unknown and not final: the acknowledgement below names it; a payer's step in
    // progress is left as it is until the outcome.)
    (isFinalGatewayStatus(report.status) || op.stage === 'processing')
      ? [
          vocab.acceptedByGateway(op, {
            ...(report.gatewayOrderId === undefined
              ? {}
              : { gatewayOrderId: report.gatewayOrderId }),
            serialNumber: report.requestSerial,
          }),
        ]
      : [];
  if (isFinalGatewayStatus(report.status)) {
    const expected = report.status === 'approved' ? vocab.expectedAmount?.(op) : undefined;
    if (
      expected !== undefined &&
      report.amount !== undefined &&
      !sameMoney(expected, report.amount)
    ) {
      // Not the money asked for: no success event; a person compares the gateway's ledger.
      if (op.concern === 'amount-mismatch') return { drafts: [], effects: [], final: true };
      return {
        drafts: [
          ...learned,
          vocab.outcomeUnknown(op, {
            since: op.unknownSince ?? ctx.now,
            alert: true,
            concern: 'amount-mismatch',
            reportedAmount: report.amount,
          }),
        ],
        effects: settleTimers(),
        final: true,
      };
    }
    let outcome: OperationOutcome<D, E>;
    switch (report.status) {
      case 'approved':
        outcome = vocab.succeeded(report, op, reply);
        break;
      case 'declined':
        outcome = vocab.declined(report, op);
        break;
      case 'error':
      case 'filtered':
        outcome = vocab.failed(op, { reason: report.status, ...reportError(report) });
        break;
      default: {
        const never: never = report.status;
        throw new Error(`unhandled final status ${String(never)}`);
      }
    }
    return {
      drafts: [...learned, ...outcome.drafts],
      effects: [...settleTimers(), ...outcome.effects],
      final: true,
    };
  }

  // Non-final: processing, unknown, chain_declined.
  const drafts: D[] = [...learned];
  // A callback or status reply overtook the send result (which will then be ignored): poll from here.
  const effects: Array<E | OperationEffect> =
    op.stage === 'requested' ? [firstPoll(op, ctx.now)] : [];
  if (report.status === 'unknown') {
    if (op.stage !== 'outcome-unknown') {
      drafts.push(vocab.outcomeUnknown(op, { since: ctx.now, alert: false }));
      effects.push(unknownAlertTimer(op, ctx.now, rules));
    }
    return { drafts, effects, final: false };
  }
  const action: PayerAction | undefined =
    report.redirectUrl !== undefined
      ? { kind: 'redirect', url: report.redirectUrl }
      : report.html !== undefined
        ? { kind: 'html', html: report.html }
        : report.threeDSMethod !== undefined
          ? { kind: 'threeds-method', ...report.threeDSMethod }
          : undefined;
  // A hosted form whose reply was lost: the gateway holds the order, but the form's address never
  // reached us, so nobody can ever fill it in; its order stays `processing` at the gateway, which
  // here means nothing will happen. "The gateway has it" does not resolve such an unknown
  // outcome: it stays unknown, its alert timer armed, until the alert is raised after the window.
  // A payer action or a final status the reply brings is taken as for any operation.
  const formAddressLost =
    op.stage === 'outcome-unknown' &&
    op.action === undefined &&
    action === undefined &&
    vocab.hostedForm?.(op) === true;
  // The gateway has the transaction: it is no longer unknown (or not yet acknowledged).
  if ((op.stage === 'requested' || op.stage === 'outcome-unknown') && !formAddressLost) {
    drafts.push(
      vocab.acceptedByGateway(op, {
        ...(report.gatewayOrderId === undefined ? {} : { gatewayOrderId: report.gatewayOrderId }),
        ...(report.requestSerial === undefined ? {} : { serialNumber: report.requestSerial }),
      }),
    );
    if (op.stage === 'outcome-unknown')
      effects.push({ type: 'cancel-timer', timer: 'unknown-alert' });
  }
  if (
    action !== undefined &&
    vocab.actionRequired !== undefined &&
    !samePayerAction(op.action, action)
  ) {
    drafts.push(vocab.actionRequired(op, action));
    if (vocab.payerActionEffects !== undefined)
      effects.push(...vocab.payerActionEffects(op, action));
  }
  return { drafts, effects, final: false };
}

/** The inputs about an operation in flight, as every gateway flow's decider receives them. */
export type OperationInput<Op extends SubjectOperation> =
  | { kind: 'gateway-result'; result: GatewayResult; about?: readonly Op[] }
  | { kind: 'callback'; callback: GatewayCallback; about?: readonly Op[] }
  /** An unverified callback: nothing changes, a status query soon (the runtime rate-limits). */
  | { kind: 'status-check-hint' }
  | { kind: 'timer-fired'; timer: OperationTimer };

/**
 * Everything about the operation in flight: a send result or status reply, a verified callback,
 * a hint, a poll or alert timer. A flow without an operation in flight ignores these inputs
 * (`NO_OPERATION_IN_FLIGHT`; an obsolete timer) before calling this.
 */
export function decideOperationInput<O extends OperationInFlight, D, E>(
  input: OperationInput<O['operation']>,
  scope: OperationScope<O, D, E>,
): OperationStep<D, E> {
  switch (input.kind) {
    case 'gateway-result':
      return decideOperationResult(input.result, input.about, scope);
    case 'callback':
      return decideOperationCallback(input.callback, input.about, scope);
    case 'status-check-hint':
      return statusQuerySoon(scope.op, scope.ctx.now, 'NO_NEWS');
    case 'timer-fired':
      return decideOperationTimer(input.timer, scope);
    default: {
      const never: never = input;
      throw new Error(`unhandled input ${JSON.stringify(never)}`);
    }
  }
}

/** What every gateway flow's open state holds about its order. */
export interface OrderFacts {
  readonly version: number;
  readonly merchant: MerchantRef;
  readonly clientOrderId: string;
  readonly gatewayOrderId?: string;
  /** The gateway's serial numbers of the order's settled requests ({@link withSettledSerial}). */
  readonly requestSerials?: readonly string[];
}

/** The order of a saga's gateway operations. */
export function orderOf(sagaId: string, state: OrderFacts): GatewayOrder {
  return {
    sagaId,
    merchant: state.merchant,
    clientOrderId: state.clientOrderId,
    ...(state.gatewayOrderId === undefined ? {} : { gatewayOrderId: state.gatewayOrderId }),
    ...(state.requestSerials === undefined ? {} : { requestSerials: state.requestSerials }),
  };
}

/**
 * The order's serial numbers once the operation in flight settled (every flow's evolve spreads it
 * into the state it settles): a later status reply naming this serial is about an earlier request.
 */
export function withSettledSerial(
  state: { readonly requestSerials?: readonly string[] },
  op: { readonly serial?: string } | undefined,
): { requestSerials?: readonly string[] } {
  const serial = op?.serial;
  if (serial === undefined || (state.requestSerials ?? []).includes(serial)) return {};
  return { requestSerials: [...(state.requestSerials ?? []), serial] };
}

/** An open saga with its operation in flight, as a flow hands it to {@link operationDecision}. */
export interface SagaOperation<O extends OperationInFlight, IdField extends string, S> {
  readonly state: S & OrderFacts;
  readonly sagaId: string;
  /** The field naming the saga in the flow's events, e.g. `paymentId`. */
  readonly idField: IdField;
  readonly op: O;
}

/**
 * {@link decideOperationInput} as the flow's decision: news stamped as the flow's events
 * (versions continuing the state's), or the ignore. `saga` undefined: nothing in flight (an
 * obsolete timer, or nothing to apply a result or callback to).
 */
export function operationDecision<O extends OperationInFlight, Event, IdField extends string, S, E>(
  input: OperationInput<O['operation']>,
  saga: SagaOperation<O, IdField, S> | undefined,
  vocabulary: (state: S & OrderFacts) => OperationVocabulary<O, Draft<Event, IdField>, E>,
  rules: OperationRules,
  ctx: OperationContext,
): FlowDecision<Event, E | OperationEffect> {
  if (saga === undefined) {
    const reason = input.kind === 'timer-fired' ? 'TIMER_OBSOLETE' : 'NO_OPERATION_IN_FLIGHT';
    return { outcome: 'ignored', reason, events: [], effects: [] };
  }
  const step = decideOperationInput(input, {
    order: orderOf(saga.sagaId, saga.state),
    op: saga.op,
    vocab: vocabulary(saga.state),
    rules,
    ctx,
  });
  return step.outcome === 'news'
    ? {
        outcome: 'accepted',
        events: stampDrafts<Event, IdField>(
          saga.state.version,
          // A computed key widens to string: it is exactly the IdField given.
          { [saga.idField]: saga.sagaId } as Record<IdField, string>,
          ctx.now,
          step.drafts,
        ),
        effects: step.effects,
      }
    : { outcome: 'ignored', reason: step.reason, events: [], effects: step.effects };
}

/**
 * The poll and alert timers of the operation in flight: a poll sends a status query and arms the
 * next; the alert is raised once the outcome has been unknown for `unknownAlertAfterMs` (it stays
 * unknown: silence is not a decline).
 */
function decideOperationTimer<O extends OperationInFlight, D, E>(
  timer: OperationTimer,
  { order, op, vocab, rules, ctx }: OperationScope<O, D, E>,
): OperationStep<D, E> {
  switch (timer.kind) {
    case 'status-poll': {
      if (op.requestId !== timer.requestId) return ignored('TIMER_OBSOLETE');
      // Raised for a person (no trace, nothing safe to send): asked at the slow cadence, which
      // still catches a slow gateway's late answer without crowding out live operations' polls.
      const elapsed =
        op.alerted === true && op.concern === 'no-trace'
          ? Math.max(msBetween(op.requestedAt, ctx.now), POLL_BANDS[0].until)
          : msBetween(op.requestedAt, ctx.now);
      return ignored('NO_NEWS', [
        { type: 'send-gateway-request', request: statusRequest(order, op, ctx) },
        {
          type: 'schedule-timer',
          timer: { kind: 'status-poll', requestId: op.requestId, attempt: timer.attempt + 1 },
          at: addMs(ctx.now, nextPollDelay(timer.attempt, elapsed)),
        },
      ]);
    }
    case 'unknown-alert': {
      if (op.requestId !== timer.requestId || op.stage !== 'outcome-unknown' || op.alerted === true)
        return ignored('TIMER_OBSOLETE');
      const since = op.unknownSince ?? op.requestedAt;
      const remaining = rules.unknownAlertAfterMs - msBetween(since, ctx.now);
      if (remaining > 0)
        return ignored('NO_NEWS', [
          { type: 'schedule-timer', timer, at: addMs(ctx.now, remaining) },
        ]);
      return news([vocab.outcomeUnknown(op, { since, alert: true })], []);
    }
    default: {
      const never: never = timer;
      throw new Error(`unhandled timer ${JSON.stringify(never)}`);
    }
  }
}
