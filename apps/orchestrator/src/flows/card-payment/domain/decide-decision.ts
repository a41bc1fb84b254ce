import type {
  GatewayCallback,
  GatewayResult,
  PaymentOperation,
  SettleByDecisionCommand,
} from '@payments/contracts';
import {
  decisionOf,
  answerAfterDecision,
  askAboutDecided,
  settleByDecision,
} from '../../../domain/gateway-operation/decided-operation';
import { orderOf } from '../../../domain/gateway-operation/gateway-operation';
import type { Decision, DecisionContext } from './decision';
import { accepted, type EventDraft, ignored, rejected } from './drafts';
import type { Effect } from './effects';
import { existingPayment, isRejection } from './guards';
import {
  type CardRefRequest,
  type InFlightOperation,
  isMainOperation,
  type OpenPayment,
  type PaymentState,
} from './state';

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
  const decision = decisionOf(command);
  if (
    payment.cardRefRequest?.operation === 'create-card-ref' &&
    payment.cardRefRequest.requestId === command.requestId
  )
    return decideCardRefByDecision(command, decision, payment, payment.cardRefRequest, ctx);
  const step = settleByDecision<InFlightOperation, EventDraft, Effect>(decision, payment.inFlight, {
    settledByDecision: (op, d) => ({
      type: 'settled-by-decision' as const,
      commandId: command.commandId,
      operation: op.operation,
      ...d,
      requestedAmount: op.amount,
    }),
  });
  if (step.outcome === 'refused')
    return rejected(state, command, ctx, { code: step.code, message: step.message });
  if (step.outcome === 'ignored') return ignored(step.reason);
  return accepted(state, payment.paymentId, ctx, step.drafts, step.effects);
}

/**
 * The payment's create-card-ref whose outcome the gateway never cleared (its reply lost, every
 * re-ask answered without a reference, alerted), decided by the same shared rule: "not done" only
 * (the reference was not made; a reference id is the gateway's answer alone, nobody gives it in its
 * place), only while its outcome is unknown, nothing sent. The request stops waiting (its pending
 * re-ask is no longer wanted: `cardRefResendWanted`), its alert timer dropped, the payment's
 * operation in flight (if any) untouched; a new create-card-ref is taken again.
 */
function decideCardRefByDecision(
  command: SettleByDecisionCommand,
  decision: Parameters<typeof settleByDecision>[0],
  payment: OpenPayment,
  pending: CardRefRequest,
  ctx: DecisionContext,
): Decision {
  const op = {
    operation: 'create-card-ref' as const,
    requestId: pending.requestId,
    commandId: pending.commandId,
    requestedAt: pending.requestedAt,
    stage:
      pending.unknownSince === undefined ? ('processing' as const) : ('outcome-unknown' as const),
  };
  const step = settleByDecision<typeof op, EventDraft, Effect>(decision, op, {
    takes: ['not-done'],
    timersOf: () => [{ type: 'cancel-timer', timer: 'card-ref-alert' }],
    settledByDecision: (o, d) => ({
      type: 'settled-by-decision' as const,
      commandId: command.commandId,
      operation: o.operation,
      ...d,
    }),
  });
  if (step.outcome === 'refused')
    return rejected(payment, command, ctx, { code: step.code, message: step.message });
  if (step.outcome === 'ignored') return ignored(step.reason);
  return accepted(payment, payment.paymentId, ctx, step.drafts, step.effects);
}

/**
 * A create-card-ref result about the request settled "not done" by decision (a re-ask sent before
 * the decision, answered after it): a reference in it contradicts the decision, so the case is
 * reopened with an alert (once); the decision's event stands and the reference is not taken
 * (a person looks; a new create-card-ref gets it, the gateway keeps one per order).
 */
function cardRefAnswerAfterDecision(
  result: GatewayResult,
  state: OpenPayment,
  ctx: DecisionContext,
): Decision {
  const decided = state.decided;
  if (decided === undefined || decided.reopened === true) return ignored('NO_NEWS');
  const r = result.result;
  if (r.kind !== 'accepted' || r.cardReference?.refId === undefined) return ignored('NO_NEWS');
  return accepted(
    state,
    state.paymentId,
    ctx,
    [
      {
        type: 'case-reopened' as const,
        commandId: result.requestId,
        operation: 'create-card-ref' as const,
        requestId: decided.requestId,
        caseId: decided.caseId,
        decision: decided.decision,
        answer: 'succeeded' as const,
        alert: true as const,
      },
    ],
    [],
  );
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
  if (decided.operation === 'create-card-ref')
    return input.result.operation === 'create-card-ref'
      ? cardRefAnswerAfterDecision(input.result, state, ctx)
      : undefined;
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
  // A create-card-ref is asked again by itself, not by a status query: a callback (about the
  // order's money) says nothing of it.
  if (state.decided.operation === 'create-card-ref') return undefined;
  const query = askAboutDecided(
    input.callback,
    input.about,
    orderOf(state.paymentId, state),
    state.decided,
    ctx,
  );
  return query === undefined ? undefined : ignored('HINT_ONLY', [query]);
}
