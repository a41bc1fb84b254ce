import type { GatewayStatusReport, PayoutEvent, RejectionCode } from '@payments/contracts';
import { addMs, type IgnoreReason, ignoredWith, unhandled } from '../../../domain/decision';
import {
  orderOf,
  refreshQuery,
  type OperationOutcome,
  type OperationVocabulary,
} from '../../../domain/gateway-operation/gateway-operation';
import {
  lifecycleVocabulary,
  operationSagaDecider,
  sagaDecisions,
  settlementDecision,
} from '../../../domain/gateway-operation/single-operation';
import {
  answerOfBudget,
  dailyAmountRefusal,
  keepLargerReserved,
  oneStepBudgetAnswer,
  releaseOnNoPayment,
  reserveBudget,
  sendWhenReserved,
} from '../../payout-budget/domain/budget';
import { approvalStep } from './four-eyes';
import {
  DEFAULT_APPROVAL_WINDOW_MS,
  DEFAULT_PAYOUT_POLICY,
  amountRefusal,
  limitsOf,
  type OpenPayout,
  type PayoutContext,
  type PayoutDecision,
  type PayoutDomainCommand,
  type PayoutEffect,
  type PayoutEventDraft,
  type PayoutInFlight,
  type PayoutInput,
  type PayoutPolicy,
  type PayoutState,
  type PayoutTimer,
  OPENING_OPERATIONS,
  opensPayoutOrder,
} from './model';

/**
 * The payout decider (pure). Rules:
 *  - every payout that pays draws on its endpoint's daily budget before its paying request goes
 *    out (budget.ts): a one-step payout or payout form on its command, a two-step one on approval;
 *  - payout-pay is sent only from `reserving` on a granted budget answer, and `reserving` is
 *    entered only from `registered` by an approval: at most one payout-pay per payout, and none
 *    after a rejection or expiry (both final).
 *  - an approval is refused with a reason code unless the payout is registered and within its
 *    approval deadline; above the endpoint's four-eyes threshold the first approval is only
 *    recorded and payout-pay follows a second one by another person with the approver role
 *    (four-eyes.ts);
 *  - money moved only on a gateway answer about that very operation; payout-pay's callbacks are
 *    hints (the checksum does not bind the operation, and payout-check's approval callback on the
 *    same order would otherwise read as "paid"); an unknown outcome is resolved by status only.
 */
export const decidePayout: (
  input: PayoutInput,
  state: PayoutState,
  ctx: PayoutContext,
) => PayoutDecision = operationSagaDecider({
  idField: 'payoutId',
  command: decideCommand,
  vocabulary: payoutVocabulary,
  rules: policyOf,
  ownTimer: approvalExpiry,
});

// ---- helpers ----------------------------------------------------------------------------

function policyOf(ctx: PayoutContext): PayoutPolicy {
  return ctx.policy ?? DEFAULT_PAYOUT_POLICY;
}

const decisions = sagaDecisions<PayoutEvent, 'payoutId'>('payoutId', 'payout-');

function accepted(
  state: PayoutState,
  payoutId: string,
  ctx: PayoutContext,
  drafts: PayoutEventDraft[],
  effects: PayoutEffect[],
): PayoutDecision {
  return decisions.accepted(state, payoutId, ctx.now, drafts, effects);
}

function ignored(reason: IgnoreReason, effects: PayoutEffect[] = []): PayoutDecision {
  return ignoredWith(reason, effects);
}

/** A payout that ended without paying gives its budget reservation back (when it holds one). */
function releaseIfReserved(state: OpenPayout): PayoutEffect[] {
  // A payout approved before `budgetDay` was recorded has its day in the approval only.
  const budgetDay = state.budgetDay ?? state.approval?.day;
  return releaseOnNoPayment(state.payoutId, {
    ...state,
    ...(budgetDay === undefined ? {} : { budgetDay }),
  });
}

// ---- commands ---------------------------------------------------------------------------

function decideCommand(
  command: PayoutDomainCommand,
  state: PayoutState,
  ctx: PayoutContext,
): PayoutDecision {
  const refuse = (code: RejectionCode, message: string): PayoutDecision =>
    decisions.rejected(state, command.payoutId, ctx.now, command, { code, message });
  if (isOpeningCommand(command)) {
    if (state.status !== 'initial') return refuse('PAYOUT_ALREADY_EXISTS', 'payout exists');
    return startPayout(command, state, ctx, refuse);
  }
  if (state.status === 'initial') return refuse('PAYOUT_NOT_FOUND', 'no such payout');
  if (command.merchant.endpointId !== state.merchant.endpointId) {
    return refuse('MERCHANT_MISMATCH', 'the payout belongs to another endpoint');
  }
  // Asking the gateway applies to every payout, one-step or two-step.
  if (command.type === 'refresh-payout-status') {
    const query = refreshQuery(orderOf(state.payoutId, state), state.inFlight, ctx);
    if (query === undefined)
      return refuse('NOTHING_TO_REFRESH', `the payout is ${state.status} with nothing in flight`);
    return accepted(state, state.payoutId, ctx, [], [query]);
  }
  // A decision of two people (a case) about the operation in flight: the one shared rule.
  if (command.type === 'payout-settle-by-decision')
    return settlementDecision(
      command,
      state,
      state.payoutId,
      payoutVocabulary(state, ctx),
      decisions,
      ctx.now,
    );
  if (state.mode === 'one-step' && command.type !== 'payout-budget-answer') {
    return refuse('PAYOUT_NOT_TWO_STEP', `a one-step payout takes no ${command.type}`);
  }
  if (command.type === 'payout-budget-answer') return budgetAnswer(command, state, ctx, refuse);
  // An approval and a rejection are both taken only while the payout awaits one.
  const refusal = approvalRefusal(state, ctx.now);
  if (refusal) return refuse(...refusal);
  const decided = (draft: PayoutEventDraft, effect: PayoutEffect) =>
    accepted(state, state.payoutId, ctx, [draft], [effect]);
  switch (command.type) {
    case 'approve-payout': {
      const reason = command.reason === undefined ? {} : { reason: command.reason };
      const step = approvalStep(state, command, limitsOf(policyOf(ctx), state.merchant.endpointId));
      if (step.kind === 'refuse') return refuse(step.code, step.message);
      if (step.kind === 'record') {
        return accepted(
          state,
          state.payoutId,
          ctx,
          [
            {
              type: 'payout-approval-recorded',
              commandId: command.commandId,
              approvedBy: command.approvedBy,
              ...(command.approverRole === undefined ? {} : { approverRole: command.approverRole }),
              ...reason,
              fourEyesAboveMinor: step.fourEyesAboveMinor,
            },
          ],
          [],
        );
      }
      return decided(
        {
          type: 'payout-approved',
          commandId: command.commandId,
          approvedBy: command.approvedBy,
          ...reason,
          ...(step.firstApprovedBy === undefined ? {} : { firstApprovedBy: step.firstApprovedBy }),
        },
        reserveBudget(state.payoutId, state.merchant, state.amount, ctx.now),
      );
    }
    case 'reject-payout':
      return decided(
        {
          type: 'payout-rejected',
          commandId: command.commandId,
          rejectedBy: command.rejectedBy,
          reason: command.reason,
        },
        { type: 'cancel-timer', timer: 'approval-expiry' },
      );
    default:
      return unhandled(command, 'command');
  }
}

/**
 * payout-check (two-step) or a one-step payout (`payout`, `payout-v4`, `payout-form`): amount,
 * currency and limits checked before anything reaches the gateway, then the request. A one-step
 * payout pays at once, so its request is written held until the daily budget granted its amount
 * (same transaction); a payout-check pays nothing (its approval reserves).
 */
function startPayout(
  command: OpeningCommand,
  state: PayoutState,
  ctx: PayoutContext,
  refuse: (code: RejectionCode, message: string) => PayoutDecision,
): PayoutDecision {
  const { amount } = command;
  const limits = limitsOf(policyOf(ctx), command.merchant.endpointId);
  const refusal =
    amountRefusal(amount, limits, 'payout') ??
    dailyAmountRefusal(ctx, command.merchant.endpointId, amount);
  if (refusal) return refuse(...refusal);
  const requestId = ctx.ids.next();
  const payoutId = command.payoutId;
  const operation = OPENING_OPERATIONS[command.type];
  const request = openingRequest(command, requestId, ctx.now);
  return accepted(
    state,
    payoutId,
    ctx,
    [
      {
        type: 'payout-requested',
        commandId: command.commandId,
        operation,
        requestId,
        amount,
        clientOrderId: payoutId,
        merchant: command.merchant,
      },
    ],
    command.type === 'payout-check'
      ? [{ type: 'send-gateway-request', request }]
      : sendWhenReserved(request, payoutId, command.merchant, amount, ctx.now),
  );
}

type OpeningCommand = Extract<PayoutDomainCommand, { type: keyof typeof OPENING_OPERATIONS }>;

function isOpeningCommand(command: PayoutDomainCommand): command is OpeningCommand {
  return command.type in OPENING_OPERATIONS;
}

/** The gateway request of the command that opens a payout. */
function openingRequest(
  command: OpeningCommand,
  requestId: string,
  now: string,
): Extract<PayoutEffect, { type: 'send-gateway-request' }>['request'] {
  const common = {
    requestId,
    paymentId: command.payoutId,
    merchant: command.merchant,
    clientOrderId: command.payoutId,
    attempt: 1,
    requestedAt: now,
    amount: command.amount,
    ...(command.order?.description === undefined
      ? {}
      : { orderDescription: command.order.description }),
    ...(command.order?.purpose === undefined ? {} : { purpose: command.order.purpose }),
  };
  switch (command.type) {
    case 'payout-form':
      return { operation: 'payout-form', ...common, redirectUrl: command.redirectUrl };
    case 'payout-check':
      return { operation: 'payout-check', ...common, sealedCard: command.sealedCard };
    case 'payout':
    case 'payout-v4':
      return { operation: command.type, ...common, sealedCard: command.sealedCard };
    default:
      return unhandled(command, 'command');
  }
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
    case 'refused':
      return ['PAYOUT_NOT_REGISTERED', 'the payout was refused by the daily limit'];
    case 'expired':
      return ['PAYOUT_EXPIRED', `the approval window closed at ${state.approvalDeadline ?? '?'}`];
    default:
      return unhandled(state.status, 'status');
  }
}

function budgetAnswer(
  answer: Extract<PayoutDomainCommand, { type: 'payout-budget-answer' }>,
  state: OpenPayout,
  ctx: PayoutContext,
  refuse: (code: RejectionCode, message: string) => PayoutDecision,
): PayoutDecision {
  const awaited = () =>
    refuse('INVALID_STATE', `no budget reservation is awaited (${state.status})`);
  if (state.mode === 'one-step') {
    const outcome = oneStepBudgetAnswer<PayoutEventDraft>(answer, state, (refusal, op) => ({
      type: 'payout-refused',
      commandId: op.commandId,
      ...refusal,
    }));
    if (outcome === undefined) return awaited();
    return accepted(state, state.payoutId, ctx, outcome.drafts, outcome.effects);
  }
  const approval = state.approval;
  if (state.status !== 'reserving' || approval === undefined) return awaited();
  const outcome = answerOfBudget(answer, state.amount, approval.day);
  if (!outcome.granted) {
    return accepted(
      state,
      state.payoutId,
      ctx,
      [{ type: 'payout-approval-refused', commandId: approval.commandId, ...outcome.refusal }],
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

// ---- gateway results, callbacks, poll and alert timers (the shared operation module) -------

/**
 * How the two-step payout names what happens to payout-check and payout-pay. Only payout-check
 * opens the order: payout-pay's callbacks are hints (the checksum does not bind the operation, and
 * payout-check's approval callback on the same order would otherwise read as "paid"), and a
 * status reply resolves it only when it names the payout.
 */
function payoutVocabulary(
  state: OpenPayout,
  ctx: PayoutContext,
): OperationVocabulary<PayoutInFlight, PayoutEventDraft, PayoutEffect> {
  return {
    ...lifecycleVocabulary<PayoutInFlight, PayoutEventDraft, PayoutEffect>('payout-', {
      ended: releaseIfReserved(state),
      payerAction: true,
    }),
    opensOrder: opensPayoutOrder,
    // A repeated payout-pay returns the payout already made, never a second one.
    refusesRepeat: (operation) => operation === 'payout-pay',
    // The payee enters the destination card on the gateway's page.
    hostedForm: (op) => op.operation === 'payout-form',
    expectedAmount: (op) => (opensPayoutOrder(op.operation) ? state.amount : undefined),
    amountMismatch: (_op, reported) => {
      // A payout approved before `budgetDay` was recorded has its day in the approval only.
      const budgetDay = state.budgetDay ?? state.approval?.day;
      return keepLargerReserved(
        state.payoutId,
        { ...state, ...(budgetDay === undefined ? {} : { budgetDay }) },
        reported,
      );
    },
    succeeded: (report, op) =>
      op.operation === 'payout-check'
        ? registered(report, state, op, ctx)
        : paidOut(report, state, op),
  };
}

/** payout-check approved: registered, awaiting approval until the endpoint's window passes. */
function registered(
  report: GatewayStatusReport,
  state: OpenPayout,
  op: PayoutInFlight,
  ctx: PayoutContext,
): OperationOutcome<PayoutEventDraft, PayoutEffect> {
  const window =
    limitsOf(policyOf(ctx), state.merchant.endpointId).approvalWindowMs ??
    DEFAULT_APPROVAL_WINDOW_MS;
  const approvalDeadline = addMs(ctx.now, window);
  const gatewayOrderId = report.gatewayOrderId ?? state.gatewayOrderId;
  return {
    drafts: [
      {
        type: 'payout-registered',
        commandId: op.commandId,
        requestId: op.requestId,
        amount: state.amount,
        recipient: { kind: 'card', ...(report.card === undefined ? {} : { card: report.card }) },
        ...(gatewayOrderId === undefined ? {} : { gatewayOrderId }),
        approvalDeadline,
      },
    ],
    effects: [{ type: 'schedule-timer', timer: { kind: 'approval-expiry' }, at: approvalDeadline }],
  };
}

/** payout-pay approved: the money left. */
function paidOut(
  report: GatewayStatusReport,
  state: OpenPayout,
  op: PayoutInFlight,
): OperationOutcome<PayoutEventDraft, PayoutEffect> {
  return {
    drafts: [
      {
        type: 'paid-out',
        commandId: op.commandId,
        requestId: op.requestId,
        amount: state.amount,
        ...(report.gatewayOrderId === undefined ? {} : { gatewayOrderId: report.gatewayOrderId }),
        ...(report.approvalCode === undefined ? {} : { approvalCode: report.approvalCode }),
      },
    ],
    effects: [],
  };
}

// ---- timers -----------------------------------------------------------------------------

/** The approval window of a registered payout closed: expired, nothing paid. */
function approvalExpiry(
  timer: Extract<PayoutTimer, { kind: 'approval-expiry' }>,
  state: PayoutState,
  ctx: PayoutContext,
): PayoutDecision {
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
