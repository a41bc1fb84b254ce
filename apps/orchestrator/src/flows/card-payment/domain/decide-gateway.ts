import {
  isFinalGatewayStatus,
  type GatewayCallback,
  type GatewayResult,
  type GatewayStatusReport,
  type GatewayStatusRequest,
  type PayerAction,
  type PaymentOperation,
  type StatusCheckHint,
} from '@payments/contracts';
import { nextPollDelay } from '../../../domain/polling';
import { NEVER_RECEIVED_ATTEMPT, resendAfterNotSent } from '../../../domain/send-rules';
import {
  type Decision,
  type DecisionContext,
  DEFAULT_NEVER_RECEIVED_AFTER_MS,
  type IgnoreReason,
} from './decision';
import { accepted, addMs, ignored, msBetween, policyOf, type EventDraft } from './drafts';
import type { Effect } from './effects';
import {
  type InFlightOperation,
  isMainOperation,
  type OpenPayment,
  type PaymentState,
} from './state';

export function statusRequest(
  state: OpenPayment,
  op: InFlightOperation,
  ctx: DecisionContext,
): GatewayStatusRequest {
  return {
    operation: 'status',
    requestId: ctx.ids.next(),
    paymentId: state.paymentId,
    merchant: state.merchant,
    clientOrderId: state.clientOrderId,
    attempt: 1,
    requestedAt: ctx.now,
    subjectRequestId: op.requestId,
    subjectOperation: op.operation,
    ...(state.gatewayOrderId === undefined ? {} : { gatewayOrderId: state.gatewayOrderId }),
  };
}

const firstPoll = (op: InFlightOperation, ctx: DecisionContext): Effect => ({
  type: 'schedule-timer',
  timer: { kind: 'status-poll', requestId: op.requestId, attempt: 1 },
  at: addMs(ctx.now, nextPollDelay(0, 0)),
});

/** The operation in flight ended without money moving (not a decline): `failed`, timers dropped. */
function failedWith(
  state: OpenPayment,
  op: InFlightOperation,
  ctx: DecisionContext,
  why: { reason: 'rejected' | 'not-sent'; code?: string; message: string },
): Decision {
  return accepted(
    state,
    state.paymentId,
    ctx,
    [
      {
        type: 'failed',
        commandId: op.commandId,
        operation: op.operation,
        requestId: op.requestId,
        ...why,
      },
    ],
    settleTimers(),
  );
}

/** Timers to drop once the operation in flight has its outcome. */
function settleTimers(): Effect[] {
  return [
    { type: 'cancel-timer', timer: 'status-poll' },
    { type: 'cancel-timer', timer: 'unknown-alert' },
  ];
}

/** The open payment and its operation in flight, if any. */
export function inFlightOf(state: PaymentState): [OpenPayment, InFlightOperation] | undefined {
  return state.inFlight === undefined ? undefined : [state, state.inFlight];
}

/**
 * A send result or a status reply. `about` (status replies only) lists the operations the
 * reply's transaction type can name, normalised at the edge: a status query without a request
 * serial describes the order's LATEST operation, which may be the preauth or an earlier capture,
 * so a reply resolves a capture, void or return only when it names that operation.
 */
export function decideGatewayResult(
  result: GatewayResult,
  about: readonly PaymentOperation[] | undefined,
  current: PaymentState,
  ctx: DecisionContext,
): Decision {
  const open = inFlightOf(current);
  if (!open) return ignored('NO_OPERATION_IN_FLIGHT');
  const [state, op] = open;

  if (result.operation === 'status') {
    if (result.subjectRequestId !== op.requestId) return ignored('STALE_REQUEST');
    if (op.stage === 'outcome-unknown' && noTraceOf(op, result.result, about))
      return neverReceived(state, op, ctx);
    // A failed status query changes nothing: the poll timer asks again.
    if (result.result.kind !== 'accepted' || result.result.report === undefined)
      return ignored('NO_NEWS');
    if (!isMainOperation(op.operation) && !(about ?? []).includes(op.operation))
      return ignored('NOT_ABOUT_THIS_OPERATION');
    return applyReport(result.result.report, state, op, ctx);
  }

  if (result.requestId !== op.requestId) return ignored('STALE_REQUEST');
  // Only the first result of a send counts; a callback or status reply may already have moved on.
  if (op.stage !== 'requested') return ignored('DUPLICATE_RESULT');

  const r = result.result;
  switch (r.kind) {
    case 'accepted': {
      const drafts: EventDraft[] = [
        {
          type: 'accepted-by-gateway',
          commandId: op.commandId,
          operation: op.operation,
          requestId: op.requestId,
          ...(r.gatewayOrderId === undefined ? {} : { gatewayOrderId: r.gatewayOrderId }),
        },
      ];
      let progressed: InFlightOperation = { ...op, stage: 'processing' };
      if (r.redirectUrl !== undefined) {
        const action: PayerAction = { kind: 'redirect', url: r.redirectUrl };
        drafts.push(actionRequired(progressed, action));
        progressed = { ...progressed, action };
      }
      if (r.report !== undefined) {
        const more = reportDrafts(r.report, state, progressed, ctx);
        if (more.final)
          return accepted(state, state.paymentId, ctx, [...drafts, ...more.drafts], more.effects);
        drafts.push(...more.drafts);
      }
      return accepted(state, state.paymentId, ctx, drafts, [firstPoll(op, ctx)]);
    }
    case 'rejected':
      return failedWith(state, op, ctx, { reason: 'rejected', code: r.code, message: r.message });
    case 'not-sent': {
      const policy = policyOf(ctx);
      const resend = resendAfterNotSent({
        attempt: result.attempt,
        retryAt: r.retryAt,
        requestedAt: op.requestedAt,
        now: ctx.now,
        maxSendAttempts: policy.maxSendAttempts,
        ownLimitWaitMs: policy.ownLimitWaitMs,
      });
      if (resend === undefined)
        return failedWith(state, op, ctx, { reason: 'not-sent', message: r.reason });
      // Resend the same request: same requestId, same clientOrderId. No event; nothing happened.
      return ignored('NO_NEWS', [
        { type: 'resend-gateway-request', requestId: op.requestId, ...resend },
      ]);
    }
    case 'unknown':
      return accepted(
        state,
        state.paymentId,
        ctx,
        [outcomeUnknown(op, ctx.now, false)],
        [firstPoll(op, ctx), unknownAlertTimer(op, ctx.now, ctx)],
      );
    default: {
      const never: never = r;
      throw new Error(`unhandled result ${JSON.stringify(never)}`);
    }
  }
}

/**
 * The status reply says the gateway never got the operation: for the sale/preauth, the gateway
 * refuses to describe the order (it does not exist); for a follow-up, the order's latest operation
 * is another one, in a final status (had ours arrived, it would be the latest).
 */
function noTraceOf(
  op: InFlightOperation,
  reply: GatewayResult['result'],
  about: readonly PaymentOperation[] | undefined,
): boolean {
  if (isMainOperation(op.operation)) return reply.kind === 'rejected';
  return (
    reply.kind === 'accepted' &&
    reply.report !== undefined &&
    isFinalGatewayStatus(reply.report.status) &&
    about !== undefined &&
    !about.includes(op.operation)
  );
}

/**
 * DESIGN.md: an operation the gateway says it never received is resolved by a stated rule, never
 * left unknown for good and never sent twice. No trace for the whole safe window since the outcome
 * became unknown → the same request once more (same requestId and client_orderid, a fresh
 * attempt number no not-sent retry uses); no trace of that one either → failed, not-sent.
 */
function neverReceived(state: OpenPayment, op: InFlightOperation, ctx: DecisionContext): Decision {
  const policy = policyOf(ctx);
  const since = op.unknownSince ?? op.requestedAt;
  const windowMs = policy.neverReceivedAfterMs ?? DEFAULT_NEVER_RECEIVED_AFTER_MS;
  if (msBetween(since, ctx.now) < windowMs) return ignored('NO_NEWS');
  const ref = { commandId: op.commandId, operation: op.operation, requestId: op.requestId };
  if (op.resent) {
    return failedWith(state, op, ctx, {
      reason: 'not-sent',
      message: 'the gateway has no trace of it, also after it was sent once more',
    });
  }
  const attempt = NEVER_RECEIVED_ATTEMPT;
  return accepted(
    state,
    state.paymentId,
    ctx,
    [{ type: 'operation-resent', ...ref, attempt, unknownSince: since }],
    [
      {
        type: 'resend-gateway-request',
        requestId: op.requestId,
        attempt,
        notBefore: ctx.now,
        afterNoTrace: true,
      },
      { type: 'cancel-timer', timer: 'unknown-alert' },
    ],
  );
}

/**
 * A verified callback. `about` lists the operations the callback's transaction type can name,
 * normalised from the gateway's vocabulary at the edge (undefined: the callback names none).
 */
export function decideCallback(
  callback: GatewayCallback,
  about: readonly PaymentOperation[] | undefined,
  current: PaymentState,
  ctx: DecisionContext,
): Decision {
  const open = inFlightOf(current);
  // A final state is never moved backwards: duplicates and late callbacks fold in here.
  if (!open) return ignored('NO_OPERATION_IN_FLIGHT');
  const [state, op] = open;
  if (callback.clientOrderId !== state.clientOrderId) return ignored('UNKNOWN_ORDER');
  // The control covers the orderid: one that is not this payment's order is about another order.
  if (
    state.gatewayOrderId !== undefined &&
    callback.report.gatewayOrderId !== undefined &&
    callback.report.gatewayOrderId !== state.gatewayOrderId
  )
    return ignored('UNKNOWN_ORDER');
  if (about !== undefined && !about.includes(op.operation))
    return ignored('NOT_ABOUT_THIS_OPERATION');
  // Truth about money (DESIGN.md): a payer's browser return, a callback that names no operation,
  // and any callback about a capture, void or return are hints. The return URL's control is the
  // same for every approved operation on the order and the server checksum binds neither the
  // operation nor the amount, so a genuine control can be replayed for another operation. Such a
  // callback only asks for a status query; the status reply, matched to the operation, decides.
  if (callback.source === 'browser-return' || about === undefined || !isMainOperation(op.operation))
    return statusQuerySoon(op, ctx);
  return applyReport(callback.report, state, op, ctx);
}

/** Nothing changes; a status query is made at once (the poll timer is an upsert per saga). */
function statusQuerySoon(
  op: InFlightOperation,
  ctx: DecisionContext,
  reason: IgnoreReason = 'HINT_ONLY',
): Decision {
  return ignored(reason, [
    {
      type: 'schedule-timer',
      timer: { kind: 'status-poll', requestId: op.requestId, attempt: 1 },
      at: ctx.now,
    },
  ]);
}

export function decideStatusCheckHint(
  _hint: StatusCheckHint,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  const op = state.inFlight;
  if (!op) return ignored('NO_OPERATION_IN_FLIGHT');
  // Unverified: it changes nothing, but is worth a status query soon. The runtime rate-limits.
  return statusQuerySoon(op, ctx, 'NO_NEWS');
}

function applyReport(
  report: GatewayStatusReport,
  state: OpenPayment,
  op: InFlightOperation,
  ctx: DecisionContext,
): Decision {
  const { drafts, effects } = reportDrafts(report, state, op, ctx);
  if (drafts.length === 0 && effects.length === 0) return ignored('NO_NEWS');
  return accepted(state, state.paymentId, ctx, drafts, effects);
}

function actionRequired(op: InFlightOperation, action: PayerAction): EventDraft {
  return {
    type: 'action-required',
    commandId: op.commandId,
    operation: op.operation,
    requestId: op.requestId,
    action,
  };
}

function outcomeUnknown(op: InFlightOperation, since: string, alert: boolean): EventDraft {
  return {
    type: 'outcome-unknown',
    commandId: op.commandId,
    operation: op.operation,
    requestId: op.requestId,
    since,
    alert,
  };
}

function unknownAlertTimer(op: InFlightOperation, since: string, ctx: DecisionContext): Effect {
  return {
    type: 'schedule-timer',
    timer: { kind: 'unknown-alert', requestId: op.requestId },
    at: addMs(since, policyOf(ctx).unknownAlertAfterMs),
  };
}

function samePayerAction(a: PayerAction | undefined, b: PayerAction): boolean {
  if (a === undefined || a.kind !== b.kind) return false;
  return a.kind === 'redirect'
    ? b.kind === 'redirect' && a.url === b.url
    : b.kind === 'html' && a.html === b.html;
}

/**
 * The events a gateway status (from a reply, a status query or a verified callback) causes for the
 * operation in flight. `final` when the operation has its outcome.
 */
function reportDrafts(
  report: GatewayStatusReport,
  state: OpenPayment,
  op: InFlightOperation,
  ctx: DecisionContext,
): { drafts: EventDraft[]; effects: Effect[]; final: boolean } {
  const ref = {
    commandId: op.commandId,
    operation: op.operation,
    requestId: op.requestId,
  } as const;
  const gatewayError = {
    ...(report.errorCode === undefined ? {} : { code: report.errorCode }),
    ...(report.errorMessage === undefined ? {} : { message: report.errorMessage }),
  };

  if (isFinalGatewayStatus(report.status)) {
    const effects = settleTimers();
    switch (report.status) {
      case 'approved':
        return { drafts: [successDraft(report, state, op, effects, ctx)], effects, final: true };
      case 'declined':
        return {
          drafts: [
            {
              type: 'declined',
              ...ref,
              ...gatewayError,
              ...(report.card === undefined ? {} : { card: report.card }),
            },
          ],
          effects,
          final: true,
        };
      case 'error':
      case 'filtered':
        return {
          drafts: [{ type: 'failed', ...ref, reason: report.status, ...gatewayError }],
          effects,
          final: true,
        };
      default: {
        const never: never = report.status;
        throw new Error(`unhandled final status ${String(never)}`);
      }
    }
  }

  // Non-final: processing, unknown, chain_declined.
  const drafts: EventDraft[] = [];
  // A callback or status reply overtook the send result (which will then be ignored): poll from here.
  const effects: Effect[] = op.stage === 'requested' ? [firstPoll(op, ctx)] : [];
  if (report.status === 'unknown') {
    if (op.stage !== 'outcome-unknown') {
      drafts.push(outcomeUnknown(op, ctx.now, false));
      effects.push(unknownAlertTimer(op, ctx.now, ctx));
    }
    return { drafts, effects, final: false };
  }
  // The gateway has the transaction: it is no longer unknown (or not yet acknowledged).
  if (op.stage === 'requested' || op.stage === 'outcome-unknown') {
    drafts.push({
      type: 'accepted-by-gateway',
      ...ref,
      ...(report.gatewayOrderId === undefined ? {} : { gatewayOrderId: report.gatewayOrderId }),
    });
    if (op.stage === 'outcome-unknown')
      effects.push({ type: 'cancel-timer', timer: 'unknown-alert' });
  }
  const action: PayerAction | undefined =
    report.redirectUrl !== undefined
      ? { kind: 'redirect', url: report.redirectUrl }
      : report.html !== undefined
        ? { kind: 'html', html: report.html }
        : undefined;
  if (action !== undefined && !samePayerAction(op.action, action)) {
    drafts.push(actionRequired(op, action));
  }
  return { drafts, effects, final: false };
}

function successDraft(
  report: GatewayStatusReport,
  state: OpenPayment,
  op: InFlightOperation,
  effects: Effect[],
  ctx: DecisionContext,
): EventDraft {
  const currency = op.amount.currency;
  const m = (minor: number) => ({ minor, currency });
  const extras = {
    ...(report.gatewayOrderId === undefined ? {} : { gatewayOrderId: report.gatewayOrderId }),
    ...(report.approvalCode === undefined ? {} : { approvalCode: report.approvalCode }),
    ...(report.card === undefined ? {} : { card: report.card }),
  };
  switch (op.operation) {
    case 'sale':
      return {
        type: 'approved',
        commandId: op.commandId,
        requestId: op.requestId,
        amount: op.amount,
        ...extras,
      };
    case 'preauth': {
      const hold = policyOf(ctx).holdExpiry;
      if (hold) {
        effects.push({
          type: 'schedule-timer',
          timer: { kind: 'hold-expiry', action: hold.action },
          at: addMs(ctx.now, hold.afterMs),
        });
      }
      return {
        type: 'authorized',
        commandId: op.commandId,
        requestId: op.requestId,
        amount: op.amount,
        ...extras,
      };
    }
    case 'capture': {
      // One capture per authorization: the rest of the hold is released with it.
      const total = state.captured + op.amount.minor;
      effects.push({ type: 'cancel-timer', timer: 'hold-expiry' });
      return {
        type: 'captured',
        commandId: op.commandId,
        requestId: op.requestId,
        amount: op.amount,
        totalCaptured: m(total),
        remainingAuthorized: m(0),
        released: m(state.authorized - total),
      };
    }
    case 'void':
      effects.push({ type: 'cancel-timer', timer: 'hold-expiry' });
      return {
        type: 'voided',
        commandId: op.commandId,
        requestId: op.requestId,
        amount: op.amount,
      };
    case 'return': {
      const holdReleased = state.status === 'authorized';
      if (holdReleased) {
        effects.push({ type: 'cancel-timer', timer: 'hold-expiry' });
        return {
          type: 'returned',
          commandId: op.commandId,
          requestId: op.requestId,
          amount: op.amount,
          totalReturned: op.amount,
          remainingBalance: m(0),
          holdReleased,
        };
      }
      const total = state.returned + op.amount.minor;
      return {
        type: 'returned',
        commandId: op.commandId,
        requestId: op.requestId,
        amount: op.amount,
        totalReturned: m(total),
        remainingBalance: m(state.captured - total),
        holdReleased,
      };
    }
    default: {
      const never: never = op.operation;
      throw new Error(`unhandled operation ${String(never)}`);
    }
  }
}
