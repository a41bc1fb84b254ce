import {
  isFinalGatewayStatus,
  type GatewayCallback,
  type GatewayResult,
  type GatewayStatusReport,
  type PayoutOperation,
  type RejectionCode,
} from '@payments/contracts';
import { nextPollDelay } from '../../../domain/polling';
import { NEVER_RECEIVED_ATTEMPT, resendAfterNotSent } from '../../../domain/send-rules';
import {
  addMs,
  DEFAULT_APPROVAL_WINDOW_MS,
  DEFAULT_PAYOUT_POLICY,
  limitsOf,
  msBetween,
  type OpenPayout,
  type PayoutContext,
  type PayoutDecision,
  type PayoutDomainCommand,
  type PayoutEffect,
  type PayoutEventDraft,
  type PayoutIgnoreReason,
  type PayoutInFlight,
  type PayoutInput,
  type PayoutPolicy,
  type PayoutState,
  type PayoutTimer,
  utcDay,
} from './model';

/**
 * The two-step payout decider (pure). Rules:
 *  - payout-pay is sent only from `reserving` on a granted budget answer, and `reserving` is
 *    entered only from `registered` by an approval: at most one payout-pay per payout, and none
 *    after a rejection or expiry (both final).
 *  - an approval is refused with a reason code unless the payout is registered and within its
 *    approval deadline;
 *  - money moved only on a gateway answer about that very operation; payout-pay's callbacks are
 *    hints (the checksum does not bind the operation, and payout-check's approval callback on the
 *    same order would otherwise read as "paid"); an unknown outcome is resolved by status only.
 */
export function decidePayout(
  input: PayoutInput,
  state: PayoutState,
  ctx: PayoutContext,
): PayoutDecision {
  switch (input.kind) {
    case 'command':
      return decideCommand(input.command, state, ctx);
    case 'gateway-result':
      return decideResult(input.result, input.about, state, ctx);
    case 'callback':
      return decideCallback(input.callback, input.about, state, ctx);
    case 'status-check-hint': {
      const open = inFlightOf(state);
      return open ? pollSoon(open[1], ctx, 'NO_NEWS') : ignored('NO_OPERATION_IN_FLIGHT');
    }
    case 'timer-fired':
      return decideTimer(input.timer, state, ctx);
    default: {
      const never: never = input;
      throw new Error(`unhandled input ${JSON.stringify(never)}`);
    }
  }
}

// ---- helpers ----------------------------------------------------------------------------

function policyOf(ctx: PayoutContext): PayoutPolicy {
  return ctx.policy ?? DEFAULT_PAYOUT_POLICY;
}

function stamp(state: PayoutState, payoutId: string, now: string, drafts: PayoutEventDraft[]) {
  return drafts.map((d, i) => ({
    ...d,
    payoutId,
    version: state.version + i + 1,
    occurredAt: now,
  }));
}

function accepted(
  state: PayoutState,
  payoutId: string,
  ctx: PayoutContext,
  drafts: PayoutEventDraft[],
  effects: PayoutEffect[],
): PayoutDecision {
  return { outcome: 'accepted', events: stamp(state, payoutId, ctx.now, drafts), effects };
}

function ignored(reason: PayoutIgnoreReason, effects: PayoutEffect[] = []): PayoutDecision {
  return { outcome: 'ignored', reason, events: [], effects };
}

function rejected(
  state: PayoutState,
  command: PayoutDomainCommand,
  ctx: PayoutContext,
  code: RejectionCode,
  message: string,
): PayoutDecision {
  const events = stamp(state, command.payoutId, ctx.now, [
    {
      type: 'payout-command-rejected',
      commandId: command.commandId,
      commandType: command.type,
      reason: code,
      message,
    },
  ]);
  return { outcome: 'rejected', rejection: { code, message }, events, effects: [] };
}

function inFlightOf(state: PayoutState): [OpenPayout, PayoutInFlight] | undefined {
  return state.status !== 'initial' && state.inFlight ? [state, state.inFlight] : undefined;
}

const ref = (op: PayoutInFlight) =>
  ({ commandId: op.commandId, operation: op.operation, requestId: op.requestId }) as const;

function firstPoll(op: PayoutInFlight, ctx: PayoutContext): PayoutEffect {
  return {
    type: 'schedule-timer',
    timer: { kind: 'status-poll', requestId: op.requestId, attempt: 1 },
    at: addMs(ctx.now, nextPollDelay(0, 0)),
  };
}

function pollSoon(
  op: PayoutInFlight,
  ctx: PayoutContext,
  reason: PayoutIgnoreReason = 'HINT_ONLY',
): PayoutDecision {
  return ignored(reason, [
    {
      type: 'schedule-timer',
      timer: { kind: 'status-poll', requestId: op.requestId, attempt: 1 },
      at: ctx.now,
    },
  ]);
}

const settleTimers = (): PayoutEffect[] => [
  { type: 'cancel-timer', timer: 'status-poll' },
  { type: 'cancel-timer', timer: 'unknown-alert' },
];

/** A payout-pay that ended without paying gives its budget reservation back. */
function releaseIfReserved(state: OpenPayout): PayoutEffect[] {
  return state.reserved && state.approval
    ? [
        {
          type: 'release-budget',
          payoutId: state.payoutId,
          merchant: state.merchant,
          currency: state.amount.currency,
          day: state.approval.day,
        },
      ]
    : [];
}

// ---- commands ---------------------------------------------------------------------------

function decideCommand(
  command: PayoutDomainCommand,
  state: PayoutState,
  ctx: PayoutContext,
): PayoutDecision {
  const refuse = (code: RejectionCode, message: string) =>
    rejected(state, command, ctx, code, message);
  if (command.type === 'payout-check') {
    if (state.status !== 'initial') return refuse('PAYOUT_ALREADY_EXISTS', 'payout exists');
    return payoutCheck(command, state, ctx, refuse);
  }
  if (state.status === 'initial') return refuse('PAYOUT_NOT_FOUND', 'no such payout');
  if (command.merchant.endpointId !== state.merchant.endpointId) {
    return refuse('MERCHANT_MISMATCH', 'the payout belongs to another endpoint');
  }
  switch (command.type) {
    case 'approve-payout': {
      const refusal = approvalRefusal(state, ctx.now);
      if (refusal) return refuse(refusal[0], refusal[1]);
      const day = utcDay(ctx.now);
      return accepted(
        state,
        state.payoutId,
        ctx,
        [
          {
            type: 'payout-approved',
            commandId: command.commandId,
            approvedBy: command.approvedBy,
            ...(command.reason === undefined ? {} : { reason: command.reason }),
          },
        ],
        [
          {
            type: 'reserve-budget',
            payoutId: state.payoutId,
            merchant: state.merchant,
            amount: state.amount,
            day,
          },
        ],
      );
    }
    case 'reject-payout': {
      const refusal = approvalRefusal(state, ctx.now);
      if (refusal) return refuse(refusal[0], refusal[1]);
      return accepted(
        state,
        state.payoutId,
        ctx,
        [
          {
            type: 'payout-rejected',
            commandId: command.commandId,
            rejectedBy: command.rejectedBy,
            reason: command.reason,
          },
        ],
        [{ type: 'cancel-timer', timer: 'approval-expiry' }],
      );
    }
    case 'payout-budget-answer':
      return budgetAnswer(command, state, ctx, refuse);
    default: {
      const never: never = command;
      throw new Error(`unhandled command ${JSON.stringify(never)}`);
    }
  }
}

function payoutCheck(
  command: Extract<PayoutDomainCommand, { type: 'payout-check' }>,
  state: PayoutState,
  ctx: PayoutContext,
  refuse: (code: RejectionCode, message: string) => PayoutDecision,
): PayoutDecision {
  const { amount } = command;
  const limits = limitsOf(policyOf(ctx), command.merchant.endpointId);
  if (amount.minor <= 0) return refuse('INVALID_AMOUNT', 'a payout needs an amount above zero');
  if (limits.currencies !== undefined && !limits.currencies.includes(amount.currency)) {
    return refuse('CURRENCY_NOT_ALLOWED', `${amount.currency} is not allowed on this endpoint`);
  }
  if (limits.minMinor !== undefined && amount.minor < limits.minMinor) {
    return refuse('AMOUNT_BELOW_MINIMUM', `the minimum payout is ${limits.minMinor}`);
  }
  if (limits.maxMinor !== undefined && amount.minor > limits.maxMinor) {
    return refuse('AMOUNT_ABOVE_MAXIMUM', `the maximum payout is ${limits.maxMinor}`);
  }
  const daily = limits.dailyLimitMinor;
  if (daily !== undefined && amount.minor > daily) {
    return refuse('DAILY_PAYOUT_LIMIT_EXCEEDED', `the daily payout limit is ${daily}`);
  }
  const requestId = ctx.ids.next();
  const payoutId = command.payoutId;
  return accepted(
    state,
    payoutId,
    ctx,
    [
      {
        type: 'payout-requested',
        commandId: command.commandId,
        operation: 'payout-check',
        requestId,
        amount,
        clientOrderId: payoutId,
        merchant: command.merchant,
      },
    ],
    [
      {
        type: 'send-gateway-request',
        request: {
          operation: 'payout-check',
          requestId,
          paymentId: payoutId,
          merchant: command.merchant,
          clientOrderId: payoutId,
          attempt: 1,
          requestedAt: ctx.now,
          amount,
          sealedCard: command.sealedCard,
          ...(command.order?.description === undefined
            ? {}
            : { orderDescription: command.order.description }),
          ...(command.order?.purpose === undefined ? {} : { purpose: command.order.purpose }),
        },
      },
    ],
  );
}

/** Why an approval or rejection cannot be taken now (undefined: it can). */
function approvalRefusal(state: OpenPayout, now: string): [RejectionCode, string] | undefined {
  switch (state.status) {
    case 'registered':
      return state.approvalDeadline !== undefined && now >= state.approvalDeadline
        ? ['PAYOUT_EXPIRED', `the approval window closed at ${state.approvalDeadline}`]
        : undefined;
    case 'checking':
      return ['PAYOUT_NOT_REGISTERED', 'the payout-check has no outcome yet'];
    case 'reserving':
    case 'paying':
    case 'paid':
      return ['PAYOUT_ALREADY_APPROVED', `the payout was approved (${state.status})`];
    case 'declined':
    case 'failed':
      return state.approval
        ? ['PAYOUT_ALREADY_APPROVED', `the payout was approved and ${state.status}`]
        : ['PAYOUT_NOT_REGISTERED', `the payout-check was ${state.status}`];
    case 'rejected':
      return ['PAYOUT_REJECTED', 'the payout was rejected'];
    case 'expired':
      return ['PAYOUT_EXPIRED', `the approval window closed at ${state.approvalDeadline ?? '?'}`];
    default: {
      const never: never = state.status;
      throw new Error(`unhandled status ${String(never)}`);
    }
  }
}

function budgetAnswer(
  answer: Extract<PayoutDomainCommand, { type: 'payout-budget-answer' }>,
  state: OpenPayout,
  ctx: PayoutContext,
  refuse: (code: RejectionCode, message: string) => PayoutDecision,
): PayoutDecision {
  const approval = state.approval;
  if (state.status !== 'reserving' || approval === undefined) {
    return refuse('INVALID_STATE', `no budget reservation is awaited (${state.status})`);
  }
  if (!answer.granted) {
    return accepted(
      state,
      state.payoutId,
      ctx,
      [
        {
          type: 'payout-approval-refused',
          commandId: approval.commandId,
          reason: 'DAILY_PAYOUT_LIMIT_EXCEEDED',
          message: `${approval.day}: ${answer.reservedMinor} of ${answer.limit.minor} already reserved, ${state.amount.minor} more would exceed the daily limit`,
          reservedToday: { minor: answer.reservedMinor, currency: state.amount.currency },
          dailyLimit: answer.limit,
        },
      ],
      [],
    );
  }
  const gatewayOrderId = state.gatewayOrderId;
  if (gatewayOrderId === undefined) {
    return refuse('INVALID_STATE', 'the payout-check reported no gateway order id');
  }
  const requestId = ctx.ids.next();
  return accepted(
    state,
    state.payoutId,
    ctx,
    [
      {
        type: 'payout-requested',
        commandId: approval.commandId,
        operation: 'payout-pay',
        requestId,
        amount: state.amount,
        clientOrderId: state.clientOrderId,
      },
    ],
    [
      { type: 'cancel-timer', timer: 'approval-expiry' },
      {
        type: 'send-gateway-request',
        request: {
          operation: 'payout-pay',
          requestId,
          paymentId: state.payoutId,
          merchant: state.merchant,
          clientOrderId: state.clientOrderId,
          attempt: 1,
          requestedAt: ctx.now,
          gatewayOrderId,
        },
      },
    ],
  );
}

// ---- gateway results, callbacks ---------------------------------------------------------

function decideResult(
  result: GatewayResult,
  about: readonly PayoutOperation[] | undefined,
  current: PayoutState,
  ctx: PayoutContext,
): PayoutDecision {
  const open = inFlightOf(current);
  if (!open) return ignored('NO_OPERATION_IN_FLIGHT');
  const [state, op] = open;
  if (result.operation === 'status') {
    if (result.subjectRequestId !== op.requestId) return ignored('STALE_REQUEST');
    if (op.stage === 'outcome-unknown' && noTraceOf(op, result.result, about))
      return neverReceived(state, op, ctx);
    if (result.result.kind !== 'accepted' || result.result.report === undefined)
      return ignored('NO_NEWS');
    // A status reply describes the order's latest operation: payout-pay is resolved only by a
    // reply naming it (the order's payout-check is approved too).
    if (op.operation === 'payout-pay' && !(about ?? []).includes('payout-pay'))
      return ignored('NOT_ABOUT_THIS_OPERATION');
    return applyReport(result.result.report, state, op, ctx);
  }
  if (result.requestId !== op.requestId) return ignored('STALE_REQUEST');
  if (op.stage !== 'requested') return ignored('DUPLICATE_RESULT');
  const r = result.result;
  switch (r.kind) {
    case 'accepted': {
      const drafts: PayoutEventDraft[] = [
        {
          type: 'payout-accepted-by-gateway',
          ...ref(op),
          ...(r.gatewayOrderId === undefined ? {} : { gatewayOrderId: r.gatewayOrderId }),
        },
      ];
      if (r.report !== undefined) {
        const more = reportOutcome(
          r.gatewayOrderId === undefined
            ? r.report
            : { gatewayOrderId: r.gatewayOrderId, ...r.report },
          state,
          { ...op, stage: 'processing' },
          ctx,
        );
        if (more.final)
          return accepted(state, state.payoutId, ctx, [...drafts, ...more.drafts], more.effects);
      }
      return accepted(state, state.payoutId, ctx, drafts, [firstPoll(op, ctx)]);
    }
    case 'rejected':
      return failed(state, op, ctx, { reason: 'rejected', code: r.code, message: r.message });
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
        return failed(state, op, ctx, { reason: 'not-sent', message: r.reason });
      return ignored('NO_NEWS', [
        { type: 'resend-gateway-request', requestId: op.requestId, ...resend },
      ]);
    }
    case 'unknown':
      return accepted(
        state,
        state.payoutId,
        ctx,
        [{ type: 'payout-outcome-unknown', ...ref(op), since: ctx.now, alert: false }],
        [firstPoll(op, ctx), alertTimer(op, ctx.now, ctx)],
      );
    default: {
      const never: never = r;
      throw new Error(`unhandled result ${JSON.stringify(never)}`);
    }
  }
}

/**
 * No trace at the gateway: for payout-check the gateway refuses to describe the order (it does
 * not exist); for payout-pay the order's latest operation is still the payout-check, final.
 */
function noTraceOf(
  op: PayoutInFlight,
  reply: GatewayResult['result'],
  about: readonly PayoutOperation[] | undefined,
): boolean {
  if (op.operation === 'payout-check') return reply.kind === 'rejected';
  return (
    reply.kind === 'accepted' &&
    reply.report !== undefined &&
    isFinalGatewayStatus(reply.report.status) &&
    about !== undefined &&
    !about.includes('payout-pay')
  );
}

/** The never-received rule (DESIGN.md), as for card payments: resend once, then fail not-sent. */
function neverReceived(state: OpenPayout, op: PayoutInFlight, ctx: PayoutContext): PayoutDecision {
  const since = op.unknownSince ?? op.requestedAt;
  if (msBetween(since, ctx.now) < policyOf(ctx).neverReceivedAfterMs) return ignored('NO_NEWS');
  if (op.resent) {
    return failed(state, op, ctx, {
      reason: 'not-sent',
      message: 'the gateway has no trace of it, also after it was sent once more',
    });
  }
  return accepted(
    state,
    state.payoutId,
    ctx,
    [
      {
        type: 'payout-operation-resent',
        ...ref(op),
        attempt: NEVER_RECEIVED_ATTEMPT,
        unknownSince: since,
      },
    ],
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

function decideCallback(
  callback: GatewayCallback,
  about: readonly PayoutOperation[] | undefined,
  current: PayoutState,
  ctx: PayoutContext,
): PayoutDecision {
  const open = inFlightOf(current);
  if (!open) return ignored('NO_OPERATION_IN_FLIGHT');
  const [state, op] = open;
  if (callback.clientOrderId !== state.clientOrderId) return ignored('UNKNOWN_ORDER');
  if (state.gatewayOrderId !== undefined && callback.report.gatewayOrderId !== state.gatewayOrderId)
    return ignored('UNKNOWN_ORDER');
  if (about !== undefined && !about.includes(op.operation))
    return ignored('NOT_ABOUT_THIS_OPERATION');
  if (callback.source === 'browser-return' || about === undefined || op.operation === 'payout-pay')
    return pollSoon(op, ctx);
  return applyReport(callback.report, state, op, ctx);
}

function applyReport(
  report: GatewayStatusReport,
  state: OpenPayout,
  op: PayoutInFlight,
  ctx: PayoutContext,
): PayoutDecision {
  const { drafts, effects } = reportOutcome(report, state, op, ctx);
  if (drafts.length === 0 && effects.length === 0) return ignored('NO_NEWS');
  return accepted(state, state.payoutId, ctx, drafts, effects);
}

function failed(
  state: OpenPayout,
  op: PayoutInFlight,
  ctx: PayoutContext,
  why: { reason: 'rejected' | 'not-sent'; code?: string; message: string },
): PayoutDecision {
  return accepted(
    state,
    state.payoutId,
    ctx,
    [{ type: 'payout-failed', ...ref(op), ...why }],
    [...settleTimers(), ...(op.operation === 'payout-pay' ? releaseIfReserved(state) : [])],
  );
}

function reportOutcome(
  report: GatewayStatusReport,
  state: OpenPayout,
  op: PayoutInFlight,
  ctx: PayoutContext,
): { drafts: PayoutEventDraft[]; effects: PayoutEffect[]; final: boolean } {
  const error = {
    ...(report.errorCode === undefined ? {} : { code: report.errorCode }),
    ...(report.errorMessage === undefined ? {} : { message: report.errorMessage }),
  };
  if (isFinalGatewayStatus(report.status)) {
    const effects = settleTimers();
    const release = op.operation === 'payout-pay' ? releaseIfReserved(state) : [];
    switch (report.status) {
      case 'approved': {
        if (op.operation === 'payout-check') {
          const window =
            limitsOf(policyOf(ctx), state.merchant.endpointId).approvalWindowMs ??
            DEFAULT_APPROVAL_WINDOW_MS;
          const approvalDeadline = addMs(ctx.now, window);
          effects.push({
            type: 'schedule-timer',
            timer: { kind: 'approval-expiry' },
            at: approvalDeadline,
          });
          const gatewayOrderId = report.gatewayOrderId ?? state.gatewayOrderId;
          return {
            drafts: [
              {
                type: 'payout-registered',
                commandId: op.commandId,
                requestId: op.requestId,
                amount: state.amount,
                recipient: {
                  kind: 'card',
                  ...(report.card === undefined ? {} : { card: report.card }),
                },
                ...(gatewayOrderId === undefined ? {} : { gatewayOrderId }),
                approvalDeadline,
              },
            ],
            effects,
            final: true,
          };
        }
        return {
          drafts: [
            {
              type: 'paid-out',
              commandId: op.commandId,
              requestId: op.requestId,
              amount: state.amount,
              ...(report.gatewayOrderId === undefined
                ? {}
                : { gatewayOrderId: report.gatewayOrderId }),
              ...(report.approvalCode === undefined ? {} : { approvalCode: report.approvalCode }),
            },
          ],
          effects,
          final: true,
        };
      }
      case 'declined':
        return {
          drafts: [{ type: 'payout-declined', ...ref(op), ...error }],
          effects: [...effects, ...release],
          final: true,
        };
      case 'error':
      case 'filtered':
        return {
          drafts: [{ type: 'payout-failed', ...ref(op), reason: report.status, ...error }],
          effects: [...effects, ...release],
          final: true,
        };
      default: {
        const never: never = report.status;
        throw new Error(`unhandled final status ${String(never)}`);
      }
    }
  }
  const drafts: PayoutEventDraft[] = [];
  const effects: PayoutEffect[] = op.stage === 'requested' ? [firstPoll(op, ctx)] : [];
  if (report.status === 'unknown') {
    if (op.stage !== 'outcome-unknown') {
      drafts.push({ type: 'payout-outcome-unknown', ...ref(op), since: ctx.now, alert: false });
      effects.push(alertTimer(op, ctx.now, ctx));
    }
    return { drafts, effects, final: false };
  }
  if (op.stage === 'requested' || op.stage === 'outcome-unknown') {
    drafts.push({
      type: 'payout-accepted-by-gateway',
      ...ref(op),
      ...(report.gatewayOrderId === undefined ? {} : { gatewayOrderId: report.gatewayOrderId }),
    });
    if (op.stage === 'outcome-unknown')
      effects.push({ type: 'cancel-timer', timer: 'unknown-alert' });
  }
  return { drafts, effects, final: false };
}

function alertTimer(op: PayoutInFlight, since: string, ctx: PayoutContext): PayoutEffect {
  return {
    type: 'schedule-timer',
    timer: { kind: 'unknown-alert', requestId: op.requestId },
    at: addMs(since, policyOf(ctx).unknownAlertAfterMs),
  };
}

// ---- timers -----------------------------------------------------------------------------

function decideTimer(timer: PayoutTimer, state: PayoutState, ctx: PayoutContext): PayoutDecision {
  switch (timer.kind) {
    case 'status-poll': {
      const open = inFlightOf(state);
      if (!open || open[1].requestId !== timer.requestId) return ignored('TIMER_OBSOLETE');
      const [payout, op] = open;
      return ignored('NO_NEWS', [
        {
          type: 'send-gateway-request',
          request: {
            operation: 'status',
            requestId: ctx.ids.next(),
            paymentId: payout.payoutId,
            merchant: payout.merchant,
            clientOrderId: payout.clientOrderId,
            attempt: 1,
            requestedAt: ctx.now,
            subjectRequestId: op.requestId,
            subjectOperation: op.operation,
            ...(payout.gatewayOrderId === undefined
              ? {}
              : { gatewayOrderId: payout.gatewayOrderId }),
          },
        },
        {
          type: 'schedule-timer',
          timer: { kind: 'status-poll', requestId: op.requestId, attempt: timer.attempt + 1 },
          at: addMs(ctx.now, nextPollDelay(timer.attempt, msBetween(op.requestedAt, ctx.now))),
        },
      ]);
    }
    case 'unknown-alert': {
      const open = inFlightOf(state);
      if (
        !open ||
        open[1].requestId !== timer.requestId ||
        open[1].stage !== 'outcome-unknown' ||
        open[1].alerted
      )
        return ignored('TIMER_OBSOLETE');
      const [payout, op] = open;
      const since = op.unknownSince ?? op.requestedAt;
      const remaining = policyOf(ctx).unknownAlertAfterMs - msBetween(since, ctx.now);
      if (remaining > 0)
        return ignored('NO_NEWS', [
          { type: 'schedule-timer', timer, at: addMs(ctx.now, remaining) },
        ]);
      return accepted(
        payout,
        payout.payoutId,
        ctx,
        [{ type: 'payout-outcome-unknown', ...ref(op), since, alert: true }],
        [],
      );
    }
    case 'approval-expiry': {
      if (state.status !== 'registered' || state.approvalDeadline === undefined)
        return ignored('TIMER_OBSOLETE');
      if (ctx.now < state.approvalDeadline)
        return ignored('NO_NEWS', [{ type: 'schedule-timer', timer, at: state.approvalDeadline }]);
      return accepted(
        state,
        state.payoutId,
        ctx,
        [
          {
            type: 'payout-expired',
            commandId: ctx.ids.next(),
            approvalDeadline: state.approvalDeadline,
          },
        ],
        [],
      );
    }
    default: {
      const never: never = timer;
      throw new Error(`unhandled timer ${JSON.stringify(never)}`);
    }
  }
}
