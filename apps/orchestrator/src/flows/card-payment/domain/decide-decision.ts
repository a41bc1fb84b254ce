import type {
  GatewayCallback,
  GatewayResult,
  PaymentOperation,
  SettleByDecisionCommand,
} from '@payments/contracts';
import {
  answerAfterDecision,
  askAboutDecided,
  settleByDecision,
} from '../../../domain/gateway-operation/decided-operation';
import { orderOf } from '../../../domain/gateway-operation/gateway-operation';
import type { Decision, DecisionContext } from './decision';
import { accepted, type EventDraft, ignored, rejected } from './drafts';
import type { Effect } from './effects';
import { existingPayment, isRejection } from './guards';
import { type InFlightOperation, isMainOperation, type PaymentState } from './state';

/**
 * The case service's approved decision about the payment's operation in flight (issue 33), by the
 * shared rule (domain/gateway-operation/decided-operation.ts): `settled-by-decision`, the timers
 * dropped, nothing sent to the gateway.
 */
export function decideByDecision(
  command: SettleByDecisionCommand,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  const payment = existingPayment(command, state);
  if (isRejection(payment)) return rejected(state, command, ctx, payment);
  const step = settleByDecision<InFlightOperation, EventDraft, Effect>(
    {
      requestId: command.requestId,
      caseId: command.caseId,
      decision: command.decision,
      ...(command.amount === undefined ? {} : { amount: command.amount }),
      ...(command.amountWhy === undefined ? {} : { amountWhy: command.amountWhy }),
      decidedBy: command.decidedBy,
      approvedBy: command.approvedBy,
      reason: command.reason,
    },
    payment.inFlight,
    {
      settledByDecision: (op, d) => ({
        type: 'settled-by-decision' as const,
        commandId: command.commandId,
        operation: op.operation,
        ...d,
        requestedAmount: op.amount,
      }),
    },
  );
  if (step.outcome === 'refused')
    return rejected(state, command, ctx, { code: step.code, message: step.message });
  if (step.outcome === 'ignored') return ignored(step.reason);
  return accepted(state, payment.paymentId, ctx, step.drafts, step.effects);
}

/**
 * A gateway result about the request last settled by decision, once nothing of it is in flight:
 * `case-reopened` when it contradicts the decision; undefined when it is not about that request
 * (the ordinary rules decide it).
 */
export function answerAfterPaymentDecision(
  input: { result: GatewayResult; about?: readonly PaymentOperation[] },
  state: PaymentState,
  ctx: DecisionContext,
): Decision | undefined {
  if (state.status === 'initial' || state.decided === undefined) return undefined;
  const decided = state.decided;
  const subject =
    input.result.operation === 'status' ? input.result.subjectRequestId : input.result.requestId;
  if (subject !== decided.requestId || state.inFlight?.requestId === decided.requestId)
    return undefined;
  const step = answerAfterDecision(
    input.result,
    input.about,
    state,
    decided,
    (operation) => isMainOperation(operation as PaymentOperation),
    (d, contradiction) => ({
      type: 'case-reopened' as const,
      commandId: input.result.requestId,
      operation: d.operation as PaymentOperation,
      requestId: d.requestId,
      caseId: d.caseId,
      decision: d.decision,
      answer: contradiction.answer,
      ...(contradiction.reportedAmount === undefined
        ? {}
        : { reportedAmount: contradiction.reportedAmount }),
      alert: true as const,
    }),
  );
  if (step.outcome === 'ignored') return ignored(step.reason);
  return accepted(state, state.paymentId, ctx, step.drafts, []);
}

/**
 * A verified callback about the order while nothing is in flight and an operation was settled by
 * decision: the decided request is asked about (its reply may reopen the case); undefined when the
 * ordinary rules decide it.
 */
export function askAfterPaymentDecision(
  input: { callback: GatewayCallback; about?: readonly PaymentOperation[] },
  state: PaymentState,
  ctx: DecisionContext,
): Decision | undefined {
  if (state.status === 'initial' || state.decided === undefined || state.inFlight !== undefined)
    return undefined;
  const query = askAboutDecided(
    input.callback,
    input.about,
    orderOf(state.paymentId, state),
    state.decided,
    ctx,
  );
  return query === undefined ? undefined : ignored('HINT_ONLY', [query]);
}
