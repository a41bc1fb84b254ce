import { unhandled } from '../../../domain/decision';
import type {
  CardReferenceCommand,
  CardReferenceEvent,
  CreateCardRefCommand,
  GatewayResult,
  GetCardInfoCommand,
  RebillCommand,
} from '@payments/contracts';
import { refreshResend } from '../../../domain/gateway-operation/gateway-operation';
import { nextPollDelay } from '../../../domain/gateway-operation/polling';
import {
  NEVER_RECEIVED_ATTEMPT,
  resendAfterNotSent,
} from '../../../domain/gateway-operation/send-rules';
import { type Decision, type DecisionContext } from './decision';
import {
  accepted,
  addMs,
  firstSend,
  ignored,
  msBetween,
  policyOf,
  rejected,
  type EventDraft,
} from './drafts';
import type { Effect } from './effects';
import type { Timer } from './inputs';
import { existingPayment, firstRefusal, isRejection, limitRefusal, refuse } from './guards';
import { requestBase, requestPayment } from './initiate';
import type { CardRefRequest, OpenPayment, PaymentState } from './state';

/**
 * Card references and rebill, hosted by the card-payment saga:
 *  - `rebill` is a payment of its own, a sale of a card reference with the cardholder absent; once
 *    requested it is a main operation like a sale, so approved / declined / unknown / status /
 *    never-received are the card-payment flow's own rules, and its outcome events are the same
 *    (`approved` says the money moved, on a gateway answer about that very rebill);
 *  - `create-card-ref` takes a reference from this successful sale or preauth, `get-card-info`
 *    reads BIN, last four and brand of the payment's reference. Neither moves money; one at a time.
 *    A lost reply is asked again on the status-poll cadence until answered (the gateway keeps one
 *    reference per order) and raises the unknown-outcome alert after the same window as a payment.
 * What is kept of a card: the reference id, BIN, last four and brand, never number, CVV or expiry.
 */

export function isCardReferenceCommand(command: {
  readonly type: string;
}): command is CardReferenceCommand {
  return (
    command.type === 'rebill' ||
    command.type === 'create-card-ref' ||
    command.type === 'get-card-info'
  );
}

export function isCardReferenceResult(result: GatewayResult): boolean {
  return result.operation === 'create-card-ref' || result.operation === 'get-card-info';
}

export function decideCardReferenceCommand(
  command: CardReferenceCommand,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  switch (command.type) {
    case 'rebill':
      return rebill(command, state, ctx);
    case 'create-card-ref':
    case 'get-card-info': {
      const payment = referencePayment(command, state);
      if (isRejection(payment)) return rejected(state, command, ctx, payment);
      return command.type === 'create-card-ref'
        ? createCardRef(command, state, ctx, payment)
        : getCardInfo(command, state, ctx, payment);
    }
    default:
      return unhandled(command, 'command');
  }
}

function rebill(command: RebillCommand, state: PaymentState, ctx: DecisionContext): Decision {
  const refusal = firstRefusal([
    state.status !== 'initial' &&
      refuse('PAYMENT_ALREADY_EXISTS', `payment ${command.paymentId} already exists`),
    limitRefusal(ctx.policy?.limits, command.merchant.endpointId, command.amount),
  ]);
  if (refusal) return rejected(state, command, ctx, refusal);
  return requestPayment(
    command,
    state,
    ctx,
    'rebill',
    command.amount,
    (ids) => ({
      operation: 'rebill',
      ...requestBase(command, ids, ctx),
      cardRefId: command.cardRef.refId,
      amount: command.amount,
      orderDescription: command.order.description,
    }),
    {
      cardRef: command.cardRef,
      ...(command.schedule === undefined ? {} : { schedule: command.schedule }),
    },
  );
}

/** The fields of a request about this payment's order, first sent now. */
/** The payment a card-reference command may use: existing, same endpoint, nothing of its kind pending. */
function referencePayment(
  command: CreateCardRefCommand | GetCardInfoCommand,
  state: PaymentState,
): OpenPayment | ReturnType<typeof refuse> {
  const payment = existingPayment(command, state);
  if (isRejection(payment)) return payment;
  if (payment.cardRefRequest !== undefined)
    return refuse(
      'OPERATION_IN_PROGRESS',
      `a ${payment.cardRefRequest.operation} of this payment has no answer yet`,
    );
  return payment;
}

function createCardRef(
  command: CreateCardRefCommand,
  state: PaymentState,
  ctx: DecisionContext,
  payment: OpenPayment,
): Decision {
  const successful =
    payment.status === 'approved' ||
    payment.status === 'authorized' ||
    payment.status === 'captured' ||
    payment.status === 'partially-returned';
  const refusal = firstRefusal([
    payment.kind === 'rebill' &&
      refuse('INVALID_STATE', 'a rebill already charges a card reference'),
    !successful &&
      refuse(
        'INVALID_STATE',
        `a card reference needs a sale or preauth in a final successful status, this one is ${payment.status}`,
      ),
    payment.cardRef !== undefined &&
      refuse('INVALID_STATE', `the payment's card reference exists: ${payment.cardRef.refId}`),
  ]);
  const orderId = payment.gatewayOrderId;
  if (refusal !== undefined || orderId === undefined)
    return rejected(
      state,
      command,
      ctx,
      refusal ?? refuse('INVALID_STATE', 'the gateway order id of the payment is not known'),
    );
  const requestId = ctx.ids.next();
  return accepted(
    state,
    payment.paymentId,
    ctx,
    [
      {
        type: 'card-ref-requested',
        commandId: command.commandId,
        requestId,
        ...(command.schedule === undefined ? {} : { schedule: command.schedule }),
      },
    ],
    [
      {
        type: 'send-gateway-request',
        request: {
          operation: 'create-card-ref',
          ...firstSend(payment, requestId, ctx),
          gatewayOrderId: orderId,
        },
      },
    ],
  );
}

function getCardInfo(
  command: GetCardInfoCommand,
  state: PaymentState,
  ctx: DecisionContext,
  payment: OpenPayment,
): Decision {
  const cardRef = payment.cardRef;
  if (cardRef === undefined)
    return rejected(
      state,
      command,
      ctx,
      refuse('INVALID_STATE', 'the payment has no card reference (create-card-ref first)'),
    );
  const requestId = ctx.ids.next();
  return accepted(
    state,
    payment.paymentId,
    ctx,
    [{ type: 'card-info-requested', commandId: command.commandId, requestId, cardRef }],
    [
      {
        type: 'send-gateway-request',
        request: {
          operation: 'get-card-info',
          ...firstSend(payment, requestId, ctx),
          cardRefId: cardRef.refId,
        },
      },
    ],
  );
}

/** The result of a create-card-ref or get-card-info request. */
export function decideCardReferenceResult(
  result: GatewayResult,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  if (state.status === 'initial' || state.cardRefRequest === undefined)
    return ignored('NO_OPERATION_IN_FLIGHT');
  const pending = state.cardRefRequest;
  if (result.requestId !== pending.requestId) return ignored('STALE_REQUEST');
  const settled = settledEffects(pending);
  const failed = (reason: 'rejected' | 'not-sent', message: string, code?: string): Decision =>
    accepted(
      state,
      state.paymentId,
      ctx,
      [
        {
          type: 'card-reference-failed',
          commandId: pending.commandId,
          requestId: pending.requestId,
          operation: pending.operation,
          reason,
          message,
          ...(code === undefined ? {} : { code }),
        },
      ],
      settled,
    );
  const r = result.result;
  // An earlier attempt's outcome is unknown (it may have made the reference): a re-ask refused,
  // or answered without the reference, settles nothing; it stays unknown and is asked again.
  const stillUnknown = (): Decision | undefined =>
    pending.unknownSince === undefined
      ? undefined
      : ignored('NO_NEWS', askAgain(pending, result.attempt, ctx));
  switch (r.kind) {
    case 'accepted':
      return (
        answered(state, pending, r.cardReference, settled, ctx) ??
        stillUnknown() ??
        failed('rejected', 'the reply carried no card reference')
      );
    case 'rejected':
      return stillUnknown() ?? failed('rejected', r.message, r.code);
    case 'not-sent': {
      // Asked again after a lost reply and not sent this time: still unknown, asked again later.
      if (pending.unknownSince !== undefined)
        return ignored('NO_NEWS', askAgain(pending, result.attempt, ctx, r.retryAt));
      const policy = policyOf(ctx);
      const resend = resendAfterNotSent({
        attempt: result.attempt,
        retryAt: r.retryAt,
        requestedAt: pending.requestedAt,
        now: ctx.now,
        maxSendAttempts: policy.maxSendAttempts,
        ownLimitWaitMs: policy.ownLimitWaitMs,
      });
      if (resend === undefined) return failed('not-sent', r.reason);
      return ignored('NO_NEWS', [
        { type: 'resend-gateway-request', requestId: pending.requestId, ...resend },
      ]);
    }
    case 'unknown':
      return lostReply(state, pending, result.attempt, ctx);
    default:
      return unhandled(r, 'result');
  }
}

/** The card-reference request's alert timer, once its outcome is known. */
function settledEffects(pending: CardRefRequest): Effect[] {
  return pending.unknownSince === undefined
    ? []
    : [{ type: 'cancel-timer', timer: 'card-ref-alert' }];
}

/**
 * A lost reply: the outcome is unknown, not failed. The first one is reported
 * (card-reference-unknown) and arms the alert; every one asks again.
 */
function lostReply(
  state: OpenPayment,
  pending: CardRefRequest,
  attempt: number,
  ctx: DecisionContext,
): Decision {
  const again = askAgain(pending, attempt, ctx);
  if (pending.unknownSince !== undefined) return ignored('NO_NEWS', again);
  return accepted(
    state,
    state.paymentId,
    ctx,
    [cardReferenceUnknown(pending, ctx.now, false)],
    [
      ...again,
      {
        type: 'schedule-timer',
        timer: { kind: 'card-ref-alert', requestId: pending.requestId },
        at: addMs(ctx.now, policyOf(ctx).unknownAlertAfterMs),
      },
    ],
  );
}

/**
 * The same request once more (same request id and order, `attempt` bumped) on the status-poll
 * cadence, or when our own limits let it go (`retryAt`). Safe to repeat: the gateway keeps one
 * reference per order, so a create-card-ref asked again answers with the reference the lost reply
 * carried, and get-card-info only reads; so the adapter's ledger is told to let this attempt pass
 * (`afterNoTrace`) although an earlier one may have arrived.
 */
function askAgain(
  pending: CardRefRequest,
  attempt: number,
  ctx: DecisionContext,
  retryAt?: string,
): Effect[] {
  const next = attempt + 1;
  // Attempts from NEVER_RECEIVED_ATTEMPT on belong to the never-received resend; by then the
  // alert has long been raised and the request stays unknown for operators.
  if (next >= NEVER_RECEIVED_ATTEMPT) return [];
  const since = pending.unknownSince ?? ctx.now;
  const notBefore =
    retryAt !== undefined && Date.parse(retryAt) > Date.parse(ctx.now)
      ? retryAt
      : addMs(ctx.now, nextPollDelay(attempt - 1, msBetween(since, ctx.now)));
  return [
    {
      type: 'resend-gateway-request',
      requestId: pending.requestId,
      attempt: next,
      notBefore,
      afterNoTrace: true,
    },
  ];
}

/**
 * A card-reference request's result is overdue (the request or its result lost on the way): as a
 * lost reply, unknown and asked again, the alert armed; a re-ask's lost too: asked again (its
 * result would have dropped the deadline and asked again itself). Undefined: the timer is not
 * this request's (it is the payment operation's in flight, or obsolete).
 */
export function decideCardRefDeadline(
  timer: Extract<Timer, { kind: 'result-deadline' }>,
  state: PaymentState,
  ctx: DecisionContext,
): Decision | undefined {
  if (state.status === 'initial' || state.cardRefRequest?.requestId !== timer.requestId)
    return undefined;
  const pending = state.cardRefRequest;
  if (pending.unknownSince !== undefined)
    return ignored('NO_NEWS', askAgain(pending, timer.attempt, ctx));
  return lostReply(state, pending, timer.attempt, ctx);
}

/**
 * A refresh of the payment (`refresh-status`, an operator's refresh or resolve-unknown): a
 * card-reference request whose outcome is unknown is asked again now, the re-ask it was waiting
 * for brought forward; its reply settles it as any reply does. Undefined: no such request.
 */
export function cardRefRefresh(payment: OpenPayment): Effect | undefined {
  return refreshResend(payment.cardRefRequest);
}

/**
 * The alert timer of an unknown card-reference request: raised once the outcome has been unknown
 * for the payment's alert window (facts §4: one hour), as for an unknown payment outcome; it stays
 * unknown and keeps being asked.
 */
export function decideCardRefAlert(
  timer: Extract<Timer, { kind: 'card-ref-alert' }>,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  const pending = state.status === 'initial' ? undefined : state.cardRefRequest;
  if (
    state.status === 'initial' ||
    pending === undefined ||
    pending.requestId !== timer.requestId ||
    pending.unknownSince === undefined ||
    pending.alerted === true
  )
    return ignored('TIMER_OBSOLETE');
  const remaining = policyOf(ctx).unknownAlertAfterMs - msBetween(pending.unknownSince, ctx.now);
  if (remaining > 0)
    return ignored('NO_NEWS', [{ type: 'schedule-timer', timer, at: addMs(ctx.now, remaining) }]);
  return accepted(
    state,
    state.paymentId,
    ctx,
    [cardReferenceUnknown(pending, pending.unknownSince, true)],
    [],
  );
}

function answered(
  state: OpenPayment,
  pending: CardRefRequest,
  reference: { refId?: string; card?: OpenPayment['card'] } | undefined,
  settled: Effect[],
  ctx: DecisionContext,
): Decision | undefined {
  if (reference === undefined) return undefined;
  const base = { commandId: pending.commandId, requestId: pending.requestId };
  let draft: EventDraft;
  if (pending.operation === 'create-card-ref') {
    if (reference.refId === undefined) return undefined;
    const card = reference.card ?? state.card;
    draft = {
      type: 'card-ref-created',
      ...base,
      cardRef: { refId: reference.refId },
      ...(card === undefined ? {} : { card }),
      ...(pending.schedule === undefined ? {} : { schedule: pending.schedule }),
    };
  } else {
    if (reference.card === undefined || state.cardRef === undefined) return undefined;
    draft = { type: 'card-info-reported', ...base, cardRef: state.cardRef, card: reference.card };
  }
  return accepted(state, state.paymentId, ctx, [draft], settled);
}

/**
 * A deferred resend of a create-card-ref or get-card-info (not sent: our breaker or limits, the
 * gateway unreachable) still applies while that request is the one waiting for its answer.
 */
export function cardRefResendWanted(state: PaymentState, requestId: string): boolean {
  return state.status !== 'initial' && state.cardRefRequest?.requestId === requestId;
}

/** Folds a card-reference event into an existing payment. */
export function evolveCardReference(state: OpenPayment, event: CardReferenceEvent): PaymentState {
  const version = event.version;
  const { cardRefRequest: _done, ...rest } = state;
  switch (event.type) {
    case 'card-ref-requested':
    case 'card-info-requested':
      return {
        ...state,
        version,
        cardRefRequest: {
          operation: event.type === 'card-ref-requested' ? 'create-card-ref' : 'get-card-info',
          requestId: event.requestId,
          commandId: event.commandId,
          requestedAt: event.occurredAt,
          ...(event.type === 'card-ref-requested' && event.schedule !== undefined
            ? { schedule: event.schedule }
            : {}),
        },
      };
    case 'card-ref-created':
      return { ...rest, version, cardRef: event.cardRef };
    case 'card-reference-unknown': {
      const pending = state.cardRefRequest;
      if (pending === undefined || pending.requestId !== event.requestId)
        return { ...state, version };
      return {
        ...state,
        version,
        cardRefRequest: {
          ...pending,
          unknownSince: pending.unknownSince ?? event.since,
          ...(event.alert ? { alerted: true } : {}),
        },
      };
    }
    case 'card-info-reported':
    case 'card-reference-failed':
      return { ...rest, version };
    default:
      return unhandled(event, 'event');
  }
}

/** The card-reference request's outcome is unknown (since `since`; `alert` once raised). */
function cardReferenceUnknown(pending: CardRefRequest, since: string, alert: boolean): EventDraft {
  return {
    type: 'card-reference-unknown',
    commandId: pending.commandId,
    requestId: pending.requestId,
    operation: pending.operation,
    since,
    alert,
  };
}
