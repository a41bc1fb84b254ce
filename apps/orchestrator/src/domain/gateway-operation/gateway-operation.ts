import {
  isFinalGatewayStatus,
  type GatewayCallback,
  type GatewayResult,
  type MerchantRef,
  type PayerAction,
  type SubjectOperation,
} from '@payments/contracts';
import { type Draft, type FlowDecision, msBetween, stampDrafts, unhandled } from '../decision';
import { heldPoll, statusPoll, waitingForPayer } from './operation-polls';
import { hintLive } from './polling';
import { NEVER_RECEIVED_ATTEMPT, resendAfterNotSent } from './send-rules';
import {
  applyReport,
  approvedAmount,
  namedBy,
  reportOutcome,
  replySubject,
  sameMoney,
} from './operation-report';
import {
  DEFAULT_NEVER_RECEIVED_AFTER_MS,
  type GatewayOrder,
  ignored,
  news,
  type OperationEffect,
  type OperationContext,
  type OperationInFlight,
  type OperationRules,
  type OperationScope,
  type OperationStep,
  type OperationTimer,
  type OperationVocabulary,
  refusesReusedOrderId,
  statusQuerySoon,
  unknownAlertTimer,
  unknownAlertVerdict,
  withSettledTimers,
  firstPoll,
} from './operation-model';

export * from './operation-model';
export { heldPoll, pollFacts, statusPoll } from './operation-polls';
export { type ReplySubject, replySubject } from './operation-report';

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
 *    other than the request's, an amount we cannot read, or none in an answer that names it
 *    (`reply-amounts.ts`) raises the alert (`amount-mismatch`) instead of a success event.
 */

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
    // Held back by the adapter's status budget: asked again when it says, not sooner, and in
    // the class it was asked in when that was urgent (a verified callback's or a refresh's
    // query stays urgent; its age would make it background, at the end of that line).
    if (reply.kind === 'not-sent' && reply.retryAt !== undefined)
      return ignored('NO_NEWS', [
        heldPoll(
          op,
          result.requestId,
          reply.retryAt,
          ctx.now,
          result.priority === 'urgent',
          result.urgentSince,
        ),
      ]);
    // A hinted query the gateway did not answer (a 5xx, a timeout): money moved and the truth
    // is owed within seconds, so it is asked again now (plus the jitter), not at the next poll
    // of the fast cadence 3-5 s on (issue #38: a payout-pay's callback reported 10.2 s late
    // after two 503s). The adapter's budget and the per-payment spacing still bound it.
    if (
      reply.kind === 'unknown' &&
      result.priority === 'urgent' &&
      hintLive(result.urgentSince, Date.parse(ctx.now))
    )
      return ignored('NO_NEWS', [
        heldPoll(op, result.requestId, ctx.now, ctx.now, true, result.urgentSince),
      ]);
    // Any other failed status query changes nothing: the poll timer asks again.
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
  const r = result.result;
  // Only the first result of a send counts; a callback or status reply may already have moved on.
  // One exception: the repeat after no trace acknowledged — the gateway has the request now (the
  // first send's result was unknown, so this acknowledgement is the repeat's). Any other answer
  // to the repeat (refused, not sent, unknown) leaves the outcome unknown: the first send may
  // have reached the gateway, and only its answer about the request settles it.
  if (op.stage !== 'requested' && !(r.kind === 'accepted' && resentUnknown(op)))
    return ignored('DUPLICATE_RESULT');

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
        const more = reportOutcome(report, { ...scope, op: progressed }, undefined, 'send-reply');
        if (more.final) return news([...drafts, ...more.drafts], more.effects);
        drafts.push(...more.drafts);
      }
      return news(drafts, [firstPoll(op, ctx.now)]);
    }
    case 'rejected':
      // A repeat refused: the gateway may be refusing it as the duplicate of an earlier send,
      // which arrived after all. Only a status reply can tell.
      if (mayHaveReachedGateway(op)) return stillUnknown(scope);
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
        // This attempt never left, but an earlier one may have reached the gateway: not failed.
        return mayHaveReachedGateway(op)
          ? stillUnknown(scope)
          : withSettledTimers(vocab.failed(op, { reason: 'not-sent', message: r.reason }));
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
    default:
      return unhandled(r, 'result');
  }
}

/**
 * One of the operation's attempts may have reached the gateway: an attempt was answered unknown
 * (its outcome became unknown) or it was sent once more after no trace. Such an operation is
 * never `failed`: it stays unknown (polled; the alert raised after its window) until the
 * gateway's answer about it. A flow whose state puts a resent operation back to `requested`
 * still keeps this rule, as it reads the operation, not its stage.
 */
export function mayHaveReachedGateway(op: OperationInFlight): boolean {
  return op.resent === true || op.unknownSince !== undefined || op.stage === 'outcome-unknown';
}

/** Resent after no trace, its outcome unknown: the repeat's acknowledgement is news. */
function resentUnknown(op: OperationInFlight): boolean {
  return op.resent === true && op.stage === 'outcome-unknown';
}

/** An answer that settles nothing about an operation that may have reached the gateway. */
function stillUnknown<O extends OperationInFlight, D, E>({
  op,
  vocab,
  rules,
  ctx,
}: OperationScope<O, D, E>): OperationStep<D, E> {
  if (op.stage === 'outcome-unknown') return ignored('NO_NEWS');
  // A flow that put it back to requested: unknown again, polled, the alert armed.
  const since = op.unknownSince ?? ctx.now;
  return news(
    [vocab.outcomeUnknown(op, { since, alert: false })],
    [firstPoll(op, ctx.now), unknownAlertTimer(op, since, rules)],
  );
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
  { order, op, vocab, rules, ctx }: OperationScope<O, D, E>,
  answeredAt: string,
): OperationStep<D, E> {
  const since = op.unknownSince ?? op.requestedAt;
  const windowMs = rules.neverReceivedAfterMs ?? DEFAULT_NEVER_RECEIVED_AFTER_MS;
  if (msBetween(since, answeredAt) < windowMs) return ignored('NO_NEWS');
  const repeatRefused = vocab.opensOrder(op.operation)
    ? refusesReusedOrderId(rules, order.merchant.endpointId)
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
        // Unknown still, now since the repeat: the alert is raised if nothing settles it.
        unknownAlertTimer(op, ctx.now, rules),
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
  // The control does not cover the amount: a callback naming another amount, one we cannot read
  // or none where the callback names it is asked about (the status reply's amount decides, and
  // raises the mismatch if the gateway really says so); never an approval at our own amount.
  const expected = vocab.expectedAmount?.(op);
  if (
    expected !== undefined &&
    (callback.report.status === 'approved'
      ? approvedAmount(expected, callback.report, named.operation, 'callback') !== 'asked'
      : callback.report.amount !== undefined && !sameMoney(expected, callback.report.amount))
  )
    return statusQuerySoon(op, ctx.now);
  return applyReport(callback.report, { ...scope, op: named }, undefined, 'callback');
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
      // Unverified: brought forward (the runtime rate-limits these), but not urgent.
      return statusQuerySoon(scope.op, scope.ctx.now, 'NO_NEWS', false);
    case 'timer-fired':
      return decideOperationTimer(input.timer, scope);
    default:
      return unhandled(input, 'input');
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
    case 'status-poll':
      if (op.requestId !== timer.requestId) return ignored('TIMER_OBSOLETE');
      return ignored(
        'NO_NEWS',
        statusPoll(order, op, timer.attempt, ctx, {
          waitingForPayer: waitingForPayer(op, vocab),
          ...(timer.hinted === true ? { hinted: true } : {}),
          ...(timer.hintedAt === undefined ? {} : { hintedAt: timer.hintedAt }),
        }),
      );
    case 'unknown-alert': {
      const alert = unknownAlertVerdict(timer, op, rules, ctx.now);
      if (alert.verdict === 'obsolete') return ignored('TIMER_OBSOLETE');
      if (alert.verdict === 'later') return ignored('NO_NEWS', [alert.rearm]);
      return news([vocab.outcomeUnknown(op, { since: alert.since, alert: true })], []);
    }
    case 'result-deadline':
      // No result for the send in time (a request or result lost on the way): the send may have
      // reached the gateway, so its outcome is unknown — polled, alerted after the window.
      if (op.requestId !== timer.requestId || op.stage !== 'requested')
        return ignored('TIMER_OBSOLETE');
      return news(
        [vocab.outcomeUnknown(op, { since: ctx.now, alert: false })],
        [firstPoll(op, ctx.now), unknownAlertTimer(op, ctx.now, rules)],
      );
    default:
      return unhandled(timer, 'timer');
  }
}
