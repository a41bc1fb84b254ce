import type { GatewayCallback, GatewayResult } from '@payments/contracts';
import { derivedUuid } from '../../../domain';
import { addMs, unhandled } from '../../../domain/decision';
import {
  decideOperationInput,
  firstPoll,
  heldPoll,
  type OperationInFlight,
  type OperationTimer,
  refreshQuery,
  statusPoll,
  statusRequest,
  unknownAlertTimer,
  unknownAlertVerdict,
} from '../../../domain/gateway-operation/gateway-operation';
import { firstCycleFrom } from './calendar';
import {
  askAboutDecidedCharge,
  chargeAnswerAfterDecision,
  decidedChargeAsked,
} from './gateway-charge-decision';
import {
  CHARGE_ALERT_TIMER_PREFIX,
  CHARGE_STATUS_TIMER_PREFIX,
  type ChargeOp,
  EXPECTED_CHARGE_TIMER,
  type GatewayCharge,
  type GatewayChargedState,
  MISSING_CHARGE_TIMER_PREFIX,
  REGISTRATION_ALERT_TIMER,
  REGISTRATION_STATUS_TIMER,
  type SchedulePolicy,
} from './state';
import {
  type GatewayContext,
  type GatewayDraft,
  type GatewayEffect,
  type GatewayInput,
  type GatewayOutcome,
  type StatusTimer,
  chargeClientOrderId,
  chargeOp,
  chargeSubjectId,
  expectedChargeSubjectId,
  newChargeOp,
  registrationOp,
  registrationRequestId,
} from './gateway-charged-model';
import {
  EXPECTED_CHARGE_KINDS,
  type OperationKinds,
  REGISTRATION_KINDS,
  chargeOrder,
  chargeStep,
  chargeTimerKinds,
  chargeVocabulary,
  expectCycle,
  expectedChargeOp,
  firstOf,
  graceMs,
  operationRules,
  registrationOrder,
  registrationStep,
  scheduleEffects,
} from './gateway-charged-rules';

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

/**
 * A charge just reported: its status asked at once, polled at the shared cadence, and its alert
 * armed for when it stays unknown.
 */
function startConfirming(
  state: GatewayChargedState,
  charge: GatewayCharge,
  op: ChargeOp,
  policy: SchedulePolicy,
  ctx: GatewayContext,
  askNow = true,
): GatewayEffect[] {
  return scheduleEffects(
    [
      ...(askNow
        ? [
            {
              type: 'send-gateway-request' as const,
              request: statusRequest(chargeOrder(state.terms, charge), op, ctx),
            },
          ]
        : []),
      firstPoll(op, ctx.now),
      unknownAlertTimer(op, ctx.now, operationRules(policy, true)),
    ],
    chargeTimerKinds(charge.gatewayOrderId),
  );
}

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

/** The report of a status reply, and the gateway order it names. */
function reportOf(result: GatewayResult) {
  const r = result.result;
  const report = r.kind === 'accepted' ? r.report : undefined;
  const orderId = report?.gatewayOrderId ?? (r.kind === 'accepted' ? r.gatewayOrderId : undefined);
  return { report, orderId };
}

/**
 * A status reply about a charge's order speaks of the charge only when it names that order (or
 * none) and a charge's transaction type (a sale or rebill, or none): a later refund of the order
 * is not its outcome.
 */
function aboutCharge(
  report: NonNullable<ReturnType<typeof reportOf>['report']>,
  charge: Pick<GatewayCharge, 'gatewayOrderId'>,
): boolean {
  const type = report.transactionType;
  return (
    (report.gatewayOrderId === undefined || report.gatewayOrderId === charge.gatewayOrderId) &&
    (type === undefined || type === 'sale' || type === 'rebill')
  );
}

/**
 * The expected-cycle timer: recorded already → the next cycle; else the shared status poll (the
 * query by its client order id, the next at the shared cadence from when it was due, or first
 * asked if later) and the shared unknown-outcome alert, armed at the same instant by every poll
 * (the search's end).
 */
function expectedCycleTimer(
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
function expectedChargeAlert(
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
function missingCycleTimer(
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
function expectedCycleAsked(
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
function expectedCycleAnswered(
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
