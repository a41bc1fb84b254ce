import type { GatewayCallback } from '@payments/contracts';
import { derivedUuid } from '../../../domain';
import { unhandled } from '../../../domain/decision';
import {
  type OperationInFlight,
  type OperationTimer,
  refreshQuery,
  unknownAlertTimer,
} from '../../../domain/gateway-operation/gateway-operation';
import {
  askAboutDecidedCharge,
  chargeAnswerAfterDecision,
  decidedChargeAsked,
} from './gateway-charge-decision';
import {
  CHARGE_ALERT_TIMER_PREFIX,
  CHARGE_STATUS_TIMER_PREFIX,
  type GatewayCharge,
  type GatewayChargedState,
  MISSING_CHARGE_TIMER_PREFIX,
  REGISTRATION_ALERT_TIMER,
  REGISTRATION_STATUS_TIMER,
  type SchedulePolicy,
} from './state';
import {
  type GatewayContext,
  type GatewayEffect,
  type GatewayInput,
  type GatewayOutcome,
  type StatusTimer,
  chargeOp,
  chargeSubjectId,
  newChargeOp,
  registrationOp,
  registrationRequestId,
} from './gateway-charged-model';
import {
  EXPECTED_CHARGE_KINDS,
  type OperationKinds,
  REGISTRATION_KINDS,
  aboutCharge,
  chargeOrder,
  chargeStep,
  chargeTimerKinds,
  firstOf,
  operationRules,
  registrationOrder,
  registrationStep,
  reportOf,
  scheduleEffects,
  startConfirming,
} from './gateway-charged-rules';
import {
  expectedChargeAlert,
  expectedCycleAnswered,
  expectedCycleAsked,
  expectedCycleTimer,
  missingCycleTimer,
} from './gateway-charged-expected';

/**
 * Schedules registered with the gateway (create-recurring-payment v4), pure.
 *
 * The rule: a registered schedule is charged by the gateway, never also by us — no charge timer,
 * no rebill, ever. The registration and each charge's confirmation are operations in flight of
 * the shared gateway-operation rules (domain/gateway-operation/gateway-operation.ts: exact matching, the polling
 * cadence, the no-trace rule judged on the gateway's answer times, the one resend, the unknown
 * outcome and its alert, the amount check), named here as schedule events. What is the schedule's
 * own:
 *
 *  - a verified server callback naming `<schedule id>-<n>` (a charge the gateway made) records the
 *    charge as reported (`gateway-charge-reported`, cycle n − 1), its outcome unknown, and asks the
 *    gateway's status of that order; only a status reply about that very order (a sale or rebill)
 *    settles it: `gateway-cycle-charged` (approved, the schedule's amount) or
 *    `gateway-cycle-declined`. Another verified callback about it only brings a status query
 *    forward; one about a charge settled already changes nothing. The gateway made the charge, so
 *    it is never sent again: no trace of its order leaves it unknown with the alert raised;
 *  - callbacks can be lost: once registered, every cycle's charge is also asked for by its client
 *    order id (`<schedule id>-<n>`, n counted from the first registered cycle) when its time and
 *    the grace for the gateway's own time of day have passed; a charge found is recorded as if
 *    its callback had come (reported, and settled by that very status reply when final), once;
 *    it is asked about at the shared polling cadence (an operation in flight whose outcome is
 *    unknown from its time and the grace on, or from its first query when that came later);
 *    none found when the shared unknown-outcome alert falls due → `gateway-charge-alert`
 *    (not-found), and the next cycle is expected; the missing cycle is still asked for at the
 *    slow cadence of any operation alerted with no trace (and reconciliation covers it), so a
 *    charge the gateway makes late, its callbacks lost, is still found. Nothing is
 *    ever taken as charged without the gateway's answer about that very order;
 *  - a registration the gateway has charged under is never declared failed;
 *  - the registration's reply names its recurring-payment-id (a synchronous operation): that is
 *    its outcome; its unknown outcome is resolved by status queries by its client_orderid.
 */

export * from './gateway-charged-model';
export { chargeTimerKinds } from './gateway-charged-rules';
export { missingChargeTimerKind } from './gateway-charged-expected';

/**
 * A refresh of a registered schedule: a status query now about each of its operations in flight —
 * the registration while it has no outcome, every charge still being confirmed — by the shared
 * refresh rule; each answer decides like a poll's. None in flight: nothing (the command is refused).
 */
export function refreshQueries(state: GatewayChargedState, ctx: GatewayContext): GatewayEffect[] {
  const { terms } = state;
  const registration =
    state.status === 'registering'
      ? refreshQuery(registrationOrder(terms), registrationOp(state.registration), ctx)
      : undefined;
  const charges = state.charges
    .filter((charge) => charge.outcome === 'confirming')
    .map((charge) =>
      refreshQuery(chargeOrder(terms, charge), chargeOp(terms.scheduleId, charge), ctx),
    );
  return [registration, ...charges].filter((query) => query !== undefined);
}

/**
 * The cycle a charge's client order id names: `<schedule id>-<n>` is the n-th registered cycle,
 * `firstCycle` + n − 1 (cycles whose time had passed at creation were never registered).
 */
export function chargeCycle(
  scheduleId: string,
  clientOrderId: string,
  firstCycle = 0,
): number | undefined {
  const prefix = `${scheduleId}-`;
  if (!clientOrderId.startsWith(prefix)) return undefined;
  const n = clientOrderId.slice(prefix.length);
  return /^[1-9]\d{0,5}$/.test(n) ? firstCycle + Number(n) - 1 : undefined;
}

export function decideGatewayCharged(
  input: GatewayInput,
  state: GatewayChargedState,
  policy: SchedulePolicy,
  ctx: GatewayContext,
): GatewayOutcome {
  const { terms } = state;
  const id = terms.scheduleId;
  switch (input.kind) {
    case 'callback':
      return reported(input.callback, state, policy, ctx);
    case 'status-timer':
      return statusTimer(input.timerKind, input.timer, state, policy, ctx);
    case 'gateway-result': {
      const { result } = input;
      if (
        result.operation === 'create-recurring-payment' ||
        (result.operation === 'status' && result.subjectRequestId === registrationRequestId(id))
      ) {
        if (state.status !== 'registering') return { outcome: 'ignored', reason: 'STALE_RESULT' };
        return registrationStep({ kind: 'gateway-result', result }, state, policy, ctx);
      }
      if (result.operation !== 'status') return { outcome: 'ignored', reason: 'STALE_RESULT' };
      const expected = expectedCycleAsked(state, result.subjectRequestId, policy, ctx.now);
      if (expected !== undefined)
        return expectedCycleAnswered(result, expected, state, policy, ctx);
      const charge = state.charges.find(
        (c) =>
          c.outcome === 'confirming' &&
          chargeSubjectId(id, c.gatewayOrderId) === result.subjectRequestId,
      );
      if (charge === undefined) {
        // A charge settled by decision: a contradicting answer reopens its case.
        const decided =
          result.subjectRequestId === undefined
            ? undefined
            : decidedChargeAsked(state, result.subjectRequestId);
        const about = decided === undefined ? undefined : reportOf(result).report;
        if (decided === undefined || (about !== undefined && !aboutCharge(about, decided)))
          return { outcome: 'ignored', reason: 'STALE_RESULT' };
        return chargeAnswerAfterDecision(result, decided);
      }
      const { report } = reportOf(result);
      if (report !== undefined && !aboutCharge(report, charge))
        return { outcome: 'ignored', reason: 'NOT_ABOUT_THIS_OPERATION' };
      return chargeStep({ kind: 'gateway-result', result }, state, charge, policy, ctx);
    }
    default:
      return unhandled(input, 'input');
  }
}

/**
 * A timer of the registration or of a charge (the shared poll and alert; a poll written before
 * the shared rules is read as the shared poll, and arms the alert it never had), or the expected
 * cycle's.
 */
function statusTimer(
  kind: string,
  timer: StatusTimer,
  state: GatewayChargedState,
  policy: SchedulePolicy,
  ctx: GatewayContext,
): GatewayOutcome {
  if (kind.startsWith(MISSING_CHARGE_TIMER_PREFIX) && 'expectedCycle' in timer)
    return missingCycleTimer(state, timer, policy, ctx);
  if ('expectedCycle' in timer) return expectedCycleTimer(state, timer, policy, ctx);
  const obsolete: GatewayOutcome = { outcome: 'ignored', reason: 'TIMER_OBSOLETE' };
  if (kind === EXPECTED_CHARGE_KINDS.alert)
    return 'kind' in timer && timer.kind === 'unknown-alert'
      ? expectedChargeAlert(state, timer, policy, ctx)
      : obsolete;
  const legacyAlert = (op: OperationInFlight, kinds: OperationKinds): GatewayEffect[] =>
    'kind' in timer || op.stage !== 'outcome-unknown' || op.alerted === true
      ? []
      : scheduleEffects([unknownAlertTimer(op, ctx.now, operationRules(policy, true))], kinds);
  const asOperationTimer = (requestId: string): OperationTimer =>
    'kind' in timer ? timer : { kind: 'status-poll', requestId, attempt: timer.poll };
  if (kind === REGISTRATION_STATUS_TIMER || kind === REGISTRATION_ALERT_TIMER) {
    if (state.status !== 'registering') return obsolete;
    const op = registrationOp(state.registration);
    return registrationStep(
      { kind: 'timer-fired', timer: asOperationTimer(op.requestId) },
      state,
      policy,
      ctx,
      { effects: legacyAlert(op, REGISTRATION_KINDS) },
    );
  }
  const orderId = kind.startsWith(CHARGE_STATUS_TIMER_PREFIX)
    ? kind.slice(CHARGE_STATUS_TIMER_PREFIX.length)
    : kind.startsWith(CHARGE_ALERT_TIMER_PREFIX)
      ? kind.slice(CHARGE_ALERT_TIMER_PREFIX.length)
      : undefined;
  const charge = state.charges.find(
    (c) => c.gatewayOrderId === orderId && c.outcome === 'confirming',
  );
  if (charge === undefined) return obsolete;
  const op = chargeOp(state.terms.scheduleId, charge);
  return chargeStep(
    { kind: 'timer-fired', timer: asOperationTimer(op.requestId) },
    state,
    charge,
    policy,
    ctx,
    { effects: legacyAlert(op, chargeTimerKinds(charge.gatewayOrderId)) },
  );
}

/**
 * A verified callback: a charge of this schedule not recorded yet is reported and its status
 * asked; one being confirmed has its status asked sooner (a callback never settles a charge).
 */
function reported(
  callback: GatewayCallback,
  state: GatewayChargedState,
  policy: SchedulePolicy,
  ctx: GatewayContext,
): GatewayOutcome {
  const id = state.terms.scheduleId;
  const cycle =
    callback.source === 'server-callback'
      ? chargeCycle(id, callback.clientOrderId, firstOf(state))
      : undefined;
  if (cycle === undefined) return { outcome: 'ignored', reason: 'NOT_A_CHARGE_OF_THIS_SCHEDULE' };
  const gatewayOrderId = callback.report.gatewayOrderId;
  const known = state.charges.find((c) => c.gatewayOrderId === gatewayOrderId);
  if (known !== undefined) {
    if (known.outcome !== 'confirming')
      return (
        askAboutDecidedCharge(callback, state, known, ctx) ?? {
          outcome: 'ignored',
          reason: 'CHARGE_ALREADY_RECORDED',
        }
      );
    return chargeStep({ kind: 'status-check-hint' }, state, known, policy, ctx);
  }
  const charge: GatewayCharge = {
    gatewayOrderId,
    clientOrderId: callback.clientOrderId,
    cycle,
    outcome: 'confirming',
  };
  const op = newChargeOp(id, gatewayOrderId, ctx.now);
  return {
    outcome: 'accepted',
    drafts: [
      {
        type: 'gateway-charge-reported',
        cycle,
        gatewayOrderId,
        clientOrderId: callback.clientOrderId,
        reportedStatus: callback.report.status,
      },
    ],
    effects: startConfirming(state, charge, op, policy, ctx),
    commandId: derivedUuid(`callback/${callback.notificationId}`),
  };
}
