import type { GatewayResult } from '@payments/contracts';
import { derivedUuid } from '../../../domain';
import { addMs } from '../../../domain/decision';
import {
  decideOperationInput,
  heldPoll,
  type OperationTimer,
  statusPoll,
  unknownAlertTimer,
  unknownAlertVerdict,
} from '../../../domain/gateway-operation/gateway-operation';
import { firstCycleFrom } from './calendar';
import {
  type ChargeOp,
  EXPECTED_CHARGE_TIMER,
  type GatewayCharge,
  type GatewayChargedState,
  MISSING_CHARGE_TIMER_PREFIX,
  type SchedulePolicy,
} from './state';
import {
  type GatewayContext,
  type GatewayDraft,
  type GatewayEffect,
  type GatewayOutcome,
  type StatusTimer,
  chargeClientOrderId,
  expectedChargeSubjectId,
  newChargeOp,
} from './gateway-charged-model';
import {
  EXPECTED_CHARGE_KINDS,
  aboutCharge,
  chargeOrder,
  chargeTimerKinds,
  chargeVocabulary,
  expectCycle,
  expectedChargeOp,
  firstOf,
  graceMs,
  operationRules,
  reportOf,
  scheduleEffects,
  startConfirming,
} from './gateway-charged-rules';

/**
 * The expected cycles of a schedule registered with the gateway (see gateway-charged.ts), pure.
 * Callbacks can be lost: once registered, every cycle's charge is also asked for by its client
 * order id when its time and the grace have passed, at the shared polling cadence; none found
 * when the shared unknown-outcome alert falls due → alerted (not-found), the next cycle expected,
 * and the missing cycle still asked for at the slow cadence of an operation alerted with no trace.
 */

/**
 * The expected-cycle timer: recorded already → the next cycle; else the shared status poll (the
 * query by its client order id, the next at the shared cadence from when it was due, or first
 * asked if later) and the shared unknown-outcome alert, armed at the same instant by every poll
 * (the search's end).
 */
export function expectedCycleTimer(
  state: GatewayChargedState,
  timer: Extract<StatusTimer, { expectedCycle: number }>,
  policy: SchedulePolicy,
  ctx: GatewayContext,
): GatewayOutcome {
  const { expectedCycle: cycle, poll } = timer;
  if (state.status !== 'registered') return { outcome: 'ignored', reason: 'TIMER_OBSOLETE' };
  const id = state.terms.scheduleId;
  const commandId = derivedUuid(`recurring-schedule/${id}/expected-charge/${cycle}/${poll}`);
  if (state.charges.some((c) => c.cycle === cycle))
    return {
      outcome: 'accepted',
      drafts: [],
      effects: expectCycle(state, cycle + 1, policy),
      commandId,
    };
  // Timers written before `askedSince` carry on from the cycle's time and the grace.
  const askedSince = timer.askedSince ?? (poll === 1 ? ctx.now : undefined);
  const op = expectedChargeOp(state, cycle, policy, ctx.now, askedSince);
  return {
    outcome: 'accepted',
    drafts: [],
    effects: [
      ...askForCharge(state, op, cycle, poll, ctx, {
        kind: EXPECTED_CHARGE_TIMER,
        ...(askedSince === undefined ? {} : { askedSince }),
      }),
      ...scheduleEffects(
        [unknownAlertTimer(op, op.unknownSince ?? op.requestedAt, operationRules(policy, true))],
        EXPECTED_CHARGE_KINDS,
      ),
    ],
    commandId,
  };
}

/**
 * The expected cycle's alert (the shared rule: its outcome unknown from its time and the grace on
 * for the whole window): no charge found → a person is alerted (not-found) and the next cycle is
 * expected; the charge is never assumed made. Found meanwhile, or another cycle's: obsolete.
 */
export function expectedChargeAlert(
  state: GatewayChargedState,
  timer: Extract<OperationTimer, { kind: 'unknown-alert' }>,
  policy: SchedulePolicy,
  ctx: GatewayContext,
): GatewayOutcome {
  const obsolete: GatewayOutcome = { outcome: 'ignored', reason: 'TIMER_OBSOLETE' };
  const cycle = expectedCycleAsked(state, timer.requestId, policy, ctx.now);
  if (cycle === undefined || state.charges.some((c) => c.cycle === cycle)) return obsolete;
  const op = expectedChargeOp(state, cycle, policy, ctx.now);
  const alert = unknownAlertVerdict(timer, op, operationRules(policy, true), ctx.now);
  if (alert.verdict === 'obsolete') return obsolete;
  const id = state.terms.scheduleId;
  const commandId = derivedUuid(`recurring-schedule/${id}/expected-charge/${cycle}/alert`);
  if (alert.verdict === 'later')
    return {
      outcome: 'accepted',
      drafts: [],
      effects: scheduleEffects([alert.rearm], EXPECTED_CHARGE_KINDS),
      commandId,
    };
  const clientOrderId = chargeClientOrderId(id, cycle, firstOf(state));
  return {
    outcome: 'accepted',
    drafts: [{ type: 'gateway-charge-alert', cycle, clientOrderId, reason: 'not-found' }],
    effects: [
      ...expectCycle(state, cycle + 1, policy),
      // Still asked for, slowly (the first query now, the next at the slow cadence).
      {
        type: 'set-status-timer',
        kind: missingChargeTimerKind(cycle),
        at: ctx.now,
        timer: { poll: 1, expectedCycle: cycle },
      },
    ],
    commandId,
  };
}

/** The slow search's timer kind of a cycle alerted not-found. */
export const missingChargeTimerKind = (cycle: number): string =>
  `${MISSING_CHARGE_TIMER_PREFIX}${cycle}`;

/**
 * A cycle alerted `not-found`, its charge still not seen: asked for again by its client order id
 * at the slow cadence the shared rule gives an operation alerted for a person with no trace of it
 * (gateway-operation.ts `statusPoll`), for as long as it stays missing — a gateway that charges
 * late, its callbacks lost, is still found (and the answer is taken as any expected cycle's).
 * Seen meanwhile (a callback, reconciliation, an answer): obsolete.
 */
export function missingCycleTimer(
  state: GatewayChargedState,
  timer: Extract<StatusTimer, { expectedCycle: number }>,
  policy: SchedulePolicy,
  ctx: GatewayContext,
): GatewayOutcome {
  const { expectedCycle: cycle, poll } = timer;
  if (
    state.status !== 'registered' ||
    state.missingCycles?.includes(cycle) !== true ||
    state.charges.some((c) => c.cycle === cycle)
  )
    return { outcome: 'ignored', reason: 'TIMER_OBSOLETE' };
  const id = state.terms.scheduleId;
  const op: ChargeOp = {
    ...expectedChargeOp(state, cycle, policy, ctx.now),
    alerted: true,
    concern: 'no-trace',
  };
  return {
    outcome: 'accepted',
    drafts: [],
    effects: askForCharge(state, op, cycle, poll, ctx, { kind: missingChargeTimerKind(cycle) }),
    commandId: derivedUuid(`recurring-schedule/${id}/missing-charge/${cycle}/${poll}`),
  };
}

/**
 * Ask the gateway for a cycle's charge by its client order id (the shared status poll) and set
 * the search's timer of `kind` for the next poll at the shared cadence.
 */
function askForCharge(
  state: Extract<GatewayChargedState, { status: 'registered' }>,
  op: ChargeOp,
  cycle: number,
  poll: number,
  ctx: GatewayContext,
  next: { kind: string; askedSince?: string },
): GatewayEffect[] {
  const id = state.terms.scheduleId;
  const [query, again] = statusPoll(
    {
      sagaId: id,
      merchant: state.terms.merchant,
      clientOrderId: chargeClientOrderId(id, cycle, firstOf(state)),
    },
    op,
    poll,
    ctx,
  );
  const { kind, askedSince } = next;
  return [
    query,
    {
      type: 'set-status-timer',
      kind,
      at: again.at,
      timer: {
        poll: poll + 1,
        expectedCycle: cycle,
        ...(askedSince === undefined ? {} : { askedSince }),
      },
    },
  ];
}

/**
 * The cycle an expected-charge status reply asked about: one whose time and grace have passed
 * by now and that is not recorded (searched back from the latest such cycle).
 */
export function expectedCycleAsked(
  state: GatewayChargedState,
  subjectRequestId: string | undefined,
  policy: SchedulePolicy,
  now: string,
): number | undefined {
  if (subjectRequestId === undefined || state.status !== 'registered') return undefined;
  const { rule, scheduleId } = state.terms;
  const first = firstOf(state);
  const upTo = firstCycleFrom(rule, first, addMs(now, -graceMs(policy))) ?? first + 10_000;
  for (let c = upTo; c >= first && upTo - c <= 10_000; c -= 1)
    if (expectedChargeSubjectId(scheduleId, c) === subjectRequestId) return c;
  return undefined;
}

/**
 * A status reply about an expected cycle's order: a charge found is recorded as its callback
 * would have (reported), and this very reply is then its first status answer (the shared rules
 * settle it when final, amount checked); else it is confirmed by polling. The next cycle is then
 * expected. No order yet: the next poll is armed.
 */
export function expectedCycleAnswered(
  result: GatewayResult,
  cycle: number,
  state: GatewayChargedState,
  policy: SchedulePolicy,
  ctx: GatewayContext,
): GatewayOutcome {
  const commandId = result.requestId;
  if (state.charges.some((c) => c.cycle === cycle))
    return { outcome: 'ignored', reason: 'CHARGE_ALREADY_RECORDED' };
  const { report, orderId } = reportOf(result);
  if (result.result.kind === 'not-sent' && result.result.retryAt !== undefined) {
    // Held back by the adapter's status budget: asked again at retryAt (plus the shared jitter),
    // not at the search's next cadence, which for a missing cycle is an hour away (issue #38).
    const kind =
      state.missingCycles?.includes(cycle) === true
        ? missingChargeTimerKind(cycle)
        : EXPECTED_CHARGE_TIMER;
    const { at } = heldPoll(
      { requestId: expectedChargeSubjectId(state.terms.scheduleId, cycle) },
      result.requestId,
      result.result.retryAt,
      ctx.now,
    );
    return {
      outcome: 'accepted',
      drafts: [],
      effects: [{ type: 'advance-status-timer', kind, at }],
      commandId,
    };
  }
  if (report === undefined || orderId === undefined)
    return { outcome: 'accepted', drafts: [], effects: [], commandId };
  if (state.charges.some((c) => c.gatewayOrderId === orderId))
    return { outcome: 'ignored', reason: 'CHARGE_ALREADY_RECORDED' };
  const charge: GatewayCharge = {
    gatewayOrderId: orderId,
    clientOrderId: chargeClientOrderId(state.terms.scheduleId, cycle, firstOf(state)),
    cycle,
    outcome: 'confirming',
  };
  const reportedDraft: GatewayDraft = {
    type: 'gateway-charge-reported',
    cycle,
    gatewayOrderId: orderId,
    clientOrderId: charge.clientOrderId,
    reportedStatus: report.status,
  };
  // A missing cycle found late: its slow search ends (the search of later cycles goes on as it is).
  const next: GatewayEffect[] =
    state.missingCycles?.includes(cycle) === true
      ? [{ type: 'cancel-status-timer', kind: missingChargeTimerKind(cycle) }]
      : expectCycle(state, cycle + 1, policy);
  const op = newChargeOp(state.terms.scheduleId, orderId, ctx.now);
  if (!aboutCharge(report, charge)) {
    return {
      outcome: 'accepted',
      drafts: [reportedDraft],
      effects: [...startConfirming(state, charge, op, policy, ctx, false), ...next],
      commandId,
    };
  }
  const step = decideOperationInput(
    { kind: 'gateway-result', result: { ...result, subjectRequestId: op.requestId } },
    {
      order: chargeOrder(state.terms, charge),
      op,
      vocab: chargeVocabulary(state, charge),
      rules: operationRules(policy, true),
      ctx,
    },
  );
  // Settled by this reply (the shared rules drop the operation's timers): nothing to poll.
  const settled = step.effects.some((e) => e.type === 'cancel-timer' && e.timer === 'status-poll');
  const kinds = chargeTimerKinds(orderId);
  return {
    outcome: 'accepted',
    drafts: [reportedDraft, ...(step.outcome === 'news' ? step.drafts : [])],
    effects: [
      // Not settled: polled from now on (this reply was its first answer: the next query waits
      // for the first poll), and what the reply says of its timers comes after (an alert
      // dropped). Settled: none was ever armed.
      ...(settled
        ? []
        : [
            ...startConfirming(state, charge, op, policy, ctx, false),
            ...scheduleEffects(step.effects, kinds),
          ]),
      ...next,
    ],
    commandId,
  };
}
