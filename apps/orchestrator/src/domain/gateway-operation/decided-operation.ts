import type {
  GatewayCallback,
  GatewayResult,
  GatewayStatusReport,
  Money,
  RejectionCode,
} from '@payments/contracts';
import type { CaseDecision } from '@payments/contracts';
import { replySubject } from './operation-report';
import {
  type ContradictionFacts,
  type DecidedOperationFacts,
  type OperationDecisionFacts,
  type GatewayOrder,
  ignored,
  news,
  type OperationEffect,
  type OperationInFlight,
  type OperationContext,
  type OperationStep,
  settleTimers,
  statusRequest,
} from './operation-model';

/**
 * An operation settled by a decision of two people (a case, issue 33), the same way in every
 * flow: the ONE rule by which a flow's decider takes the case service's `settle-by-decision`, and
 * the one by which a later gateway answer that contradicts the decision reopens the case.
 *
 * Truth about money (DESIGN.md): a decision never sends the gateway anything and never publishes
 * an ordinary success (`approved`, `paid-out`, …): its event is the flow's `settled-by-decision`,
 * naming who proposed, who approved, why, and the case, so finance can tell evidence from
 * decision. Only an operation whose outcome is unknown can be decided (one still processing
 * settles itself by the gateway's answer); a decision about a request no longer in flight (it was
 * settled meanwhile by evidence) is refused.
 */
export interface OperationDecision extends OperationDecisionFacts {
  readonly decision: CaseDecision;
}

/**
 * The decision a flow's settle-by-decision command carries, as the shared rule takes it (an
 * amount and its reason only when the command names them).
 */
export function decisionOf(command: {
  readonly requestId: string;
  readonly caseId: string;
  readonly decision: CaseDecision;
  readonly amount?: Money | undefined;
  readonly amountWhy?: string | undefined;
  readonly decidedBy: string;
  readonly approvedBy: string;
  readonly reason: string;
}): OperationDecision {
  return {
    requestId: command.requestId,
    caseId: command.caseId,
    decision: command.decision,
    ...(command.amount === undefined ? {} : { amount: command.amount }),
    ...(command.amountWhy === undefined ? {} : { amountWhy: command.amountWhy }),
    decidedBy: command.decidedBy,
    approvedBy: command.approvedBy,
    reason: command.reason,
  };
}

/** What the saga keeps of an operation settled by decision (to recognise a contradiction later). */
export type DecidedOperation = DecidedOperationFacts;

/** How a flow names a decided settlement (its event) and what it does besides. */
export interface DecisionVocabulary<O extends OperationInFlight, Draft, Effect> {
  settledByDecision(op: O, decision: OperationDecision): Draft;
  /** Besides dropping the timers: a money-out flow releases its reservation when not done. */
  decidedEffects?(op: O, decision: OperationDecision): Effect[];
  /**
   * The decisions the flow takes (all when unset). A flow whose success is an answer only the
   * gateway can give (PAN eligibility: eligible or not) takes "not done" alone.
   */
  readonly takes?: readonly CaseDecision[];
  /**
   * The timers the decision drops, when not the operation's own (status poll, unknown alert): a
   * request beside the operation in flight (a payment's create-card-ref) drops its own alone.
   */
  timersOf?(op: O): Effect[];
}

/**
 * What the saga keeps once its operation was settled by decision (every flow's evolve of its
 * `settled-by-decision`): the request, the case, the decision and the decided amount.
 */
export function decidedOf(
  op: OperationInFlight,
  event: { readonly caseId: string; readonly decision: CaseDecision; readonly amount?: Money },
): DecidedOperation {
  return {
    operation: op.operation,
    requestId: op.requestId,
    caseId: event.caseId,
    decision: event.decision,
    ...(event.amount === undefined ? {} : { amount: event.amount }),
    ...(op.serial === undefined ? {} : { serial: op.serial }),
  };
}

/** The decision after `case-reopened` (once: a further contradiction says nothing new). */
export function reopenedOf<S extends { readonly decided?: DecidedOperation }>(state: S): S {
  return state.decided === undefined
    ? state
    : { ...state, decided: { ...state.decided, reopened: true } };
}

export type DecisionStep<Draft, Effect> =
  OperationStep<Draft, Effect> | { outcome: 'refused'; code: RejectionCode; message: string };

/**
 * The case service's approved decision about `op` (undefined: nothing in flight). Refused: the
 * request is not the one in flight or its outcome is not unknown, or the decision is incomplete
 * (`done` needs the gateway's amount; `not-done` names none). No gateway request, ever.
 */
export function settleByDecision<O extends OperationInFlight, D, E>(
  decision: OperationDecision,
  op: O | undefined,
  vocab: DecisionVocabulary<O, D, E>,
): DecisionStep<D, E> {
  if (op === undefined || op.requestId !== decision.requestId)
    return {
      outcome: 'refused',
      code: 'CASE_OPERATION_SETTLED',
      message: `request ${decision.requestId} is no longer in flight (settled by the gateway's answer meanwhile)`,
    };
  if (op.stage !== 'outcome-unknown')
    return {
      outcome: 'refused',
      code: 'CASE_OPERATION_SETTLED',
      message: `the ${op.operation}'s outcome is not unknown (${op.stage}): the gateway's answer settles it`,
    };
  if (vocab.takes !== undefined && !vocab.takes.includes(decision.decision))
    return {
      outcome: 'refused',
      code: 'CASE_DECISION_INVALID',
      message: `a ${op.operation} takes only ${vocab.takes.map((d) => `"${d}"`).join(', ')}: its answer is the gateway's alone`,
    };
  if ((decision.decision === 'done') !== (decision.amount !== undefined))
    return {
      outcome: 'refused',
      code: 'CASE_DECISION_INVALID',
      message:
        decision.decision === 'done'
          ? '"done" names the amount the gateway did it at'
          : '"not done" names no amount',
    };
  const effects: Array<E | OperationEffect> = [
    ...(vocab.timersOf?.(op) ?? settleTimers()),
    ...(vocab.decidedEffects?.(op, decision) ?? []),
  ];
  return news([vocab.settledByDecision(op, decision)], effects);
}

/**
 * A verified callback about the order after its operation was settled by decision (nothing in
 * flight): a hint that the gateway may have done it after all. The decided request is asked about
 * (one status query, urgent; its reply is judged by {@link answerAfterDecision}); undefined when
 * the callback cannot be about it, or the case was reopened already.
 */
export function askAboutDecided(
  callback: GatewayCallback,
  about: readonly string[] | undefined,
  order: GatewayOrder,
  decided: DecidedOperation,
  ctx: OperationContext,
): Extract<OperationEffect, { type: 'send-gateway-request' }> | undefined {
  if (decided.reopened === true || callback.clientOrderId !== order.clientOrderId) return undefined;
  if (about !== undefined && !about.includes(decided.operation)) return undefined;
  const op: OperationInFlight = {
    operation: decided.operation as OperationInFlight['operation'],
    requestId: decided.requestId,
    commandId: decided.caseId,
    requestedAt: ctx.now,
    stage: 'outcome-unknown',
    ...(decided.serial === undefined ? {} : { serial: decided.serial }),
  };
  return {
    type: 'send-gateway-request',
    request: statusRequest(order, op, ctx, 'urgent', ctx.now),
  };
}

/** What a decided operation's contradicting gateway answer said. */
export type Contradiction = ContradictionFacts;

/** A gateway report's outcome as a decision would name it (undefined: not final). */
function answerOf(report: GatewayStatusReport): Contradiction | undefined {
  switch (report.status) {
    case 'approved':
      return {
        answer: 'succeeded',
        ...(report.amount === undefined ? {} : { reportedAmount: report.amount }),
      };
    case 'declined':
      return { answer: 'declined' };
    case 'error':
    case 'filtered':
      return { answer: 'failed' };
    // Not final (or a chain of declines still going): says nothing about the decision yet.
    case 'processing':
    case 'unknown':
    case 'chain_declined':
      return undefined;
    default:
      return undefined;
  }
}

/**
 * Whether a gateway answer contradicts the decision: "done" and the gateway declined or failed
 * it, or did it at another amount; "not done" and the gateway did it.
 */
export function contradicts(decided: DecidedOperation, answer: Contradiction): boolean {
  if (decided.decision === 'not-done') return answer.answer === 'succeeded';
  if (answer.answer !== 'succeeded') return true;
  return (
    answer.reportedAmount !== undefined &&
    decided.amount !== undefined &&
    (answer.reportedAmount.minor !== decided.amount.minor ||
      answer.reportedAmount.currency !== decided.amount.currency)
  );
}

/**
 * A gateway result after the operation was settled by decision: a status reply or a late send
 * result about exactly that request. One that contradicts the decision reopens the case with an
 * alert (`reopened`: the flow's `case-reopened`, once); anything else is ignored. Never a new
 * settlement, never a changed published version: the decision's event stands.
 */
export function answerAfterDecision<D>(
  result: GatewayResult,
  about: readonly string[] | undefined,
  order: Pick<GatewayOrder, 'requestSerials'>,
  decided: DecidedOperation,
  opensOrder: (operation: string) => boolean,
  reopened: (decided: DecidedOperation, contradiction: Contradiction) => D,
): OperationStep<D, never> {
  if (decided.reopened === true) return ignored('NO_NEWS');
  let report: GatewayStatusReport | undefined;
  if (result.operation === 'status') {
    if (result.subjectRequestId !== decided.requestId) return ignored('STALE_REQUEST');
    if (result.result.kind !== 'accepted' || result.result.report === undefined)
      return ignored('NO_NEWS');
    const op: OperationInFlight = {
      operation: decided.operation as OperationInFlight['operation'],
      requestId: decided.requestId,
      commandId: decided.caseId,
      requestedAt: '',
      stage: 'outcome-unknown',
      ...(decided.serial === undefined ? {} : { serial: decided.serial }),
    };
    // Settled requests' serials include none of this one's own answer: only an answer about it.
    const earlier = (order.requestSerials ?? []).filter((s) => s !== decided.serial);
    const subject = replySubject(
      result.result.report,
      about,
      { requestSerials: earlier },
      op,
      opensOrder,
    );
    if (subject !== 'this') return ignored('NOT_ABOUT_THIS_OPERATION');
    if (about !== undefined && !about.includes(decided.operation))
      return ignored('NOT_ABOUT_THIS_OPERATION');
    report = result.result.report;
  } else {
    if (result.requestId !== decided.requestId) return ignored('STALE_REQUEST');
    if (result.result.kind !== 'accepted' || result.result.report === undefined)
      return ignored('NO_NEWS');
    report = result.result.report;
  }
  const answer = answerOf(report);
  if (answer === undefined || !contradicts(decided, answer)) return ignored('NO_NEWS');
  return news([reopened(decided, answer)], []);
}
