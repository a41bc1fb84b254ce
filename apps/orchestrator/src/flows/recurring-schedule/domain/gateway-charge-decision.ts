import type {
  GatewayCallback,
  GatewayResult,
  RejectionCode,
  SettleScheduleChargeByDecisionCommand,
} from '@payments/contracts';
import { derivedUuid } from '../../../domain';
import {
  decisionOf,
  answerAfterDecision,
  askAboutDecided,
  type OperationDecision,
  settleByDecision,
} from '../../../domain/gateway-operation/decided-operation';
import { chargeOp, chargeSubjectId, expectedChargeSubjectId } from './gateway-charged-model';
import type {
  GatewayContext,
  GatewayDraft,
  GatewayEffect,
  GatewayOutcome,
} from './gateway-charged-model';
import { chargeOrder, chargeTimerKinds, scheduleEffects } from './gateway-charged-rules';
import type { ChargeOp, GatewayCharge, GatewayChargedState } from './state';

/**
 * A gateway charge of a registered schedule decided in a case (issue 33), by the ONE shared rule
 * (decided-operation.ts), as every flow's operation is: the charge being confirmed whose outcome
 * the gateway never cleared (reported by a verified callback, every status query since unknown,
 * alerted) settles "done at X" (the cycle counts as charged at X, the gateway's amount) or "not
 * done" (the cycle counts as not charged), as `schedule-charge-settled-by-decision` — never a
 * `gateway-cycle-charged`, never a gateway request. Its status poll and alert are dropped.
 *
 * Not decided here: the registration (whether the gateway registered the schedule is its answer
 * alone; "refresh and wait"), and a cycle alerted not-found (no gateway order to decide about; it
 * is still asked for, and a charge found is reported and confirmed as any other).
 */
export type ChargeDecisionOutcome =
  GatewayOutcome | { outcome: 'refused'; code: RejectionCode; message: string };

export function decideChargeByDecision(
  command: SettleScheduleChargeByDecisionCommand,
  state: GatewayChargedState,
): ChargeDecisionOutcome {
  const id = state.terms.scheduleId;
  const charge = state.charges.find(
    (c) =>
      c.outcome === 'confirming' && chargeSubjectId(id, c.gatewayOrderId) === command.requestId,
  );
  if (charge === undefined && missingCycleOf(state, command.requestId) !== undefined)
    return {
      outcome: 'refused',
      code: 'CASE_DECISION_INVALID',
      message:
        'a cycle alerted not-found names no gateway order to decide about: it is still asked for ("refresh and wait"); a charge found is confirmed by the gateway',
    };
  const decision: OperationDecision = decisionOf(command);
  const op: ChargeOp | undefined = charge === undefined ? undefined : chargeOp(id, charge);
  const step = settleByDecision<ChargeOp, GatewayDraft, GatewayEffect>(decision, op, {
    settledByDecision: (o, d) => ({
      type: 'schedule-charge-settled-by-decision' as const,
      operation: o.operation,
      cycle: (charge as GatewayCharge).cycle,
      gatewayOrderId: (charge as GatewayCharge).gatewayOrderId,
      clientOrderId: (charge as GatewayCharge).clientOrderId,
      ...d,
      requestedAmount: state.terms.amount,
    }),
  });
  if (step.outcome === 'refused') return step;
  if (step.outcome === 'ignored') return { outcome: 'ignored', reason: step.reason };
  return {
    outcome: 'accepted',
    drafts: step.drafts,
    effects: scheduleEffects(
      step.effects,
      chargeTimerKinds((charge as GatewayCharge).gatewayOrderId),
    ),
    commandId: command.commandId,
  };
}

/** The cycle alerted not-found whose search `requestId` is (undefined: none). */
function missingCycleOf(state: GatewayChargedState, requestId: string): number | undefined {
  return state.missingCycles?.find(
    (cycle) => expectedChargeSubjectId(state.terms.scheduleId, cycle) === requestId,
  );
}

/** The charge settled by decision that a status reply (its subject) is about, if any. */
export function decidedChargeAsked(
  state: GatewayChargedState,
  subjectRequestId: string,
): GatewayCharge | undefined {
  return state.charges.find((c) => c.decided?.requestId === subjectRequestId);
}

/**
 * A status reply about a charge settled by decision: one that contradicts the decision (the
 * gateway declined or failed a charge decided "done", charged another amount, or charged one
 * decided "not done") → `schedule-charge-case-reopened` with an alert, once; anything else is
 * ignored. The decision's event stands; the cycle's outcome is not rewritten.
 */
export function chargeAnswerAfterDecision(
  result: GatewayResult,
  charge: GatewayCharge,
): GatewayOutcome {
  const decided = charge.decided;
  if (decided === undefined) return { outcome: 'ignored', reason: 'STALE_RESULT' };
  const step = answerAfterDecision<GatewayDraft>(
    result,
    undefined,
    { requestSerials: [] },
    decided,
    () => true,
    (d, contradiction) => ({
      type: 'schedule-charge-case-reopened' as const,
      operation: 'rebill' as const,
      requestId: d.requestId,
      caseId: d.caseId,
      decision: d.decision,
      cycle: charge.cycle,
      gatewayOrderId: charge.gatewayOrderId,
      clientOrderId: charge.clientOrderId,
      ...contradiction,
      alert: true as const,
    }),
  );
  if (step.outcome !== 'news') return { outcome: 'ignored', reason: step.reason };
  const commandId = result.requestId;
  return { outcome: 'accepted', drafts: step.drafts, effects: [], commandId };
}

/**
 * A verified callback about a charge settled by decision (not reopened): a hint the gateway may
 * have an answer about it after all; its order is asked about once (urgent), and the reply is
 * judged by {@link chargeAnswerAfterDecision}. Undefined: nothing to ask.
 */
export function askAboutDecidedCharge(
  callback: GatewayCallback,
  state: GatewayChargedState,
  charge: GatewayCharge,
  ctx: GatewayContext,
): GatewayOutcome | undefined {
  if (charge.decided === undefined) return undefined;
  const query = askAboutDecided(
    callback,
    undefined,
    chargeOrder(state.terms, charge),
    charge.decided,
    { now: ctx.now, ids: ctx.ids },
  );
  if (query === undefined) return undefined;
  return {
    outcome: 'accepted',
    drafts: [],
    effects: [query],
    commandId: derivedUuid(`callback/${callback.notificationId}`),
  };
}
