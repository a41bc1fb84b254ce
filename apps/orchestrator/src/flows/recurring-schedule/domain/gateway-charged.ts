import type {
  CreateScheduleCommand,
  GatewayCallback,
  GatewayCreateRecurringPaymentRequest,
  GatewayResult,
  GatewayStatusRequest,
  ScheduleEvent,
} from '@payments/contracts';
import { derivedUuid } from '../../../domain';
import { addMs, type IgnoreReason } from '../../../domain/decision';
import {
  decideOperationInput,
  firstPoll,
  type GatewayOrder,
  type OperationEffect,
  type OperationInput,
  type OperationRules,
  type OperationStep,
  type OperationTimer,
  type OperationVocabulary,
  refreshQuery,
  statusRequest,
} from '../../../domain/gateway-operation';
import { cycleDate, cycleDueAt, cycleExists, firstCycleFrom, formatLocalDate } from './calendar';
import {
  CHARGE_ALERT_TIMER_PREFIX,
  CHARGE_STATUS_TIMER_PREFIX,
  type ChargeOp,
  DEFAULT_EXPECTED_CHARGE_GRACE_MS,
  DEFAULT_MAX_SEND_ATTEMPTS,
  DEFAULT_MAX_STATUS_POLLS,
  DEFAULT_STATUS_POLL_MS,
  DEFAULT_UNKNOWN_ALERT_AFTER_MS,
  EXPECTED_CHARGE_TIMER,
  type GatewayCharge,
  type GatewayChargedState,
  REGISTRATION_ALERT_TIMER,
  REGISTRATION_STATUS_TIMER,
  type Registration,
  type RegistrationOp,
  type SchedulePolicy,
  type ScheduleTerms,
} from './state';

/**
 * Schedules registered with the gateway (create-recurring-payment v4), pure.
 *
 * The rule: a registered schedule is charged by the gateway, never also by us — no charge timer,
 * no rebill, ever. The registration and each charge's confirmation are operations in flight of
 * the shared gateway-operation rules (domain/gateway-operation.ts: exact matching, the polling
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
 *    none found after `maxStatusPolls` queries → `gateway-charge-alert` (not-found);
 *  - a registration the gateway has charged under is never declared failed;
 *  - the registration's reply names its recurring-payment-id (a synchronous operation): that is
 *    its outcome; its unknown outcome is resolved by status queries by its client_orderid.
 */

export type GatewayInput =
  | { kind: 'gateway-result'; result: GatewayResult }
  | { kind: 'callback'; callback: GatewayCallback }
  /** `timerKind`: which timer fired (the registration's, a charge's, or the expected cycle's). */
  | { kind: 'status-timer'; timerKind: string; timer: StatusTimer };

/**
 * A status timer's payload: an operation timer of the registration or a charge, an expected
 * cycle's poll, or a poll of the registration or a charge written before the shared rules.
 */
export type StatusTimer =
  | OperationTimer
  | { readonly poll: number; readonly expectedCycle: number }
  | { readonly poll: number; readonly gatewayOrderId?: string };

export type GatewayEffect =
  | {
      type: 'send-gateway-request';
      request: GatewayCreateRecurringPaymentRequest | GatewayStatusRequest;
    }
  | {
      type: 'resend-registration';
      requestId: string;
      attempt: number;
      notBefore: string;
      afterNoTrace?: true;
    }
  | { type: 'set-status-timer'; kind: string; at: string; timer: StatusTimer }
  | { type: 'cancel-status-timer'; kind: string };

export type GatewayDraft = ScheduleEvent extends infer E
  ? E extends ScheduleEvent
    ? Omit<E, 'version' | 'occurredAt' | 'scheduleId' | 'commandId'>
    : never
  : never;

export type GatewayIgnoreReason =
  'NOT_A_CHARGE_OF_THIS_SCHEDULE' | 'CHARGE_ALREADY_RECORDED' | 'STALE_RESULT' | IgnoreReason;

export type GatewayOutcome =
  | { outcome: 'accepted'; drafts: GatewayDraft[]; effects: GatewayEffect[]; commandId: string }
  | { outcome: 'ignored'; reason: GatewayIgnoreReason };

/** What a decision about a registered schedule has: its time and fresh ids (status requests). */
export interface GatewayContext {
  readonly now: string;
  readonly ids: { next(): string };
}

/** When an operation written before the shared rules began: unknown, so long ago. */
const LEGACY_SINCE = '1970-01-01T00:00:00.000Z';

/** The registration as the shared rules see it (a saga written before them: its old fields). */
export function registrationOp(registration: Registration): RegistrationOp {
  if ('stage' in registration) return registration;
  return {
    operation: 'create-recurring-payment',
    requestId: registration.requestId,
    commandId: registration.requestId,
    requestedAt: LEGACY_SINCE,
    stage: registration.unknown ? 'outcome-unknown' : 'requested',
    ...(registration.unknown ? { unknownSince: LEGACY_SINCE } : {}),
    ...(registration.resent ? { resent: true } : {}),
  };
}

/** A charge's confirmation as the shared rules see it (a saga written before them: unknown). */
export function chargeOp(scheduleId: string, charge: GatewayCharge): ChargeOp {
  if (charge.op !== undefined) return charge.op;
  const requestId = chargeSubjectId(scheduleId, charge.gatewayOrderId);
  return {
    operation: 'rebill',
    requestId,
    commandId: requestId,
    requestedAt: LEGACY_SINCE,
    stage: 'outcome-unknown',
    unknownSince: LEGACY_SINCE,
  };
}

/** A reported charge's confirmation: its outcome unknown from the report on. */
export function newChargeOp(scheduleId: string, gatewayOrderId: string, at: string): ChargeOp {
  const requestId = chargeSubjectId(scheduleId, gatewayOrderId);
  return {
    operation: 'rebill',
    requestId,
    commandId: requestId,
    requestedAt: at,
    stage: 'outcome-unknown',
    unknownSince: at,
  };
}

/** The id of a schedule's create-recurring-payment request (stable: resends keep it). */
export function registrationRequestId(scheduleId: string): string {
  return derivedUuid(`recurring-schedule/${scheduleId}/registration`);
}

/** The subject id the status queries about one gateway charge name. */
export function chargeSubjectId(scheduleId: string, gatewayOrderId: string): string {
  return derivedUuid(`recurring-schedule/${scheduleId}/gateway-charge/${gatewayOrderId}`);
}

/** The subject id of the status queries asking for an expected cycle's charge. */
export function expectedChargeSubjectId(scheduleId: string, cycle: number): string {
  return derivedUuid(`recurring-schedule/${scheduleId}/expected-charge/${cycle}`);
}

/** The client order id the gateway gives its charge of `cycle`: `<schedule id>-<n>`, n from 1. */
export function chargeClientOrderId(scheduleId: string, cycle: number, firstCycle: number): string {
  return `${scheduleId}-${cycle - firstCycle + 1}`;
}

export function chargeTimerKind(gatewayOrderId: string): string {
  return `${CHARGE_STATUS_TIMER_PREFIX}${gatewayOrderId}`;
}

/** Does this endpoint register its schedules with the gateway? */
export function registersWithGateway(policy: SchedulePolicy, endpointId: string): boolean {
  return (policy.gatewayRegistrationEndpoints ?? []).includes(endpointId);
}

/**
 * The create-recurring-payment request of a new schedule whose first cycle is `first`, or why
 * the gateway's calendar cannot carry it (day, week and month periods, interval 1–999, 1–9999
 * charges; a year is 12 months).
 */
export function registrationRequest(
  command: CreateScheduleCommand,
  first: number,
  now: string,
): { ok: true; request: GatewayCreateRecurringPaymentRequest } | { ok: false; message: string } {
  const { rule } = command;
  const period = rule.period === 'year' ? 'month' : rule.period;
  const interval = rule.period === 'year' ? rule.interval * 12 : rule.interval;
  if (interval > 999)
    return { ok: false, message: 'the gateway takes an interval of at most 999 periods' };
  let repeats: number | undefined;
  if (rule.end.kind !== 'never') {
    let n = first;
    while (cycleExists(rule, n) && n - first <= 9999) n += 1;
    repeats = n - first;
    if (repeats > 9999) return { ok: false, message: 'the gateway takes at most 9999 charges' };
  }
  return {
    ok: true,
    request: {
      operation: 'create-recurring-payment',
      requestId: registrationRequestId(command.scheduleId),
      paymentId: command.scheduleId,
      merchant: command.merchant,
      clientOrderId: command.scheduleId,
      attempt: 1,
      requestedAt: now,
      cardRefId: command.cardRef.refId,
      amount: command.amount,
      period,
      interval,
      startDate: formatLocalDate(cycleDate(rule, first)),
      ...(repeats === undefined ? {} : { repeats }),
      orderDescription: command.description,
    },
  };
}

function pollMs(policy: SchedulePolicy): number {
  return policy.statusPollMs ?? DEFAULT_STATUS_POLL_MS;
}

function maxPolls(policy: SchedulePolicy): number {
  return policy.maxStatusPolls ?? DEFAULT_MAX_STATUS_POLLS;
}

function graceMs(policy: SchedulePolicy): number {
  return policy.expectedChargeGraceMs ?? DEFAULT_EXPECTED_CHARGE_GRACE_MS;
}

/**
 * The shared rules for the registration and, with `gatewaysOwn`, for a charge: the gateway's own
 * request, never ours to send again (no trace of it leaves it unknown for a person).
 */
function operationRules(policy: SchedulePolicy, gatewaysOwn: boolean): OperationRules {
  const refuses = gatewaysOwn ? false : policy.gatewayRefusesReusedOrderId;
  return {
    maxSendAttempts: policy.maxSendAttempts ?? DEFAULT_MAX_SEND_ATTEMPTS,
    unknownAlertAfterMs: policy.unknownAlertAfterMs ?? DEFAULT_UNKNOWN_ALERT_AFTER_MS,
    ...(policy.neverReceivedAfterMs === undefined
      ? {}
      : { neverReceivedAfterMs: policy.neverReceivedAfterMs }),
    ...(policy.ownLimitWaitMs === undefined ? {} : { ownLimitWaitMs: policy.ownLimitWaitMs }),
    ...(refuses === undefined ? {} : { gatewayRefusesReusedOrderId: refuses }),
  };
}

/** Asks for `cycle`'s charge once its time and the grace have passed (none: the schedule ended). */
function expectCycle(
  state: GatewayChargedState,
  cycle: number,
  policy: SchedulePolicy,
): GatewayEffect[] {
  const due = cycleDueAt(state.terms.rule, cycle);
  if (due === undefined) return [{ type: 'cancel-status-timer', kind: EXPECTED_CHARGE_TIMER }];
  return [
    {
      type: 'set-status-timer',
      kind: EXPECTED_CHARGE_TIMER,
      at: addMs(due, graceMs(policy)),
      timer: { poll: 1, expectedCycle: cycle },
    },
  ];
}

/** The schedule's first registered cycle (sagas older than the field: 0). */
const firstOf = (state: GatewayChargedState): number => state.firstCycle ?? 0;

/** The timer kinds of one operation of the schedule (several charges may be confirmed at once). */
interface OperationKinds {
  readonly poll: string;
  readonly alert: string;
}

const REGISTRATION_KINDS: OperationKinds = {
  poll: REGISTRATION_STATUS_TIMER,
  alert: REGISTRATION_ALERT_TIMER,
};

export function chargeTimerKinds(gatewayOrderId: string): OperationKinds {
  return {
    poll: `${CHARGE_STATUS_TIMER_PREFIX}${gatewayOrderId}`,
    alert: `${CHARGE_ALERT_TIMER_PREFIX}${gatewayOrderId}`,
  };
}

type AnyEffect = GatewayEffect | OperationEffect;

/** The shared module's effects as the schedule's: its timers under the operation's own kinds. */
function scheduleEffects(effects: readonly AnyEffect[], kinds: OperationKinds): GatewayEffect[] {
  return effects.map((effect): GatewayEffect => {
    switch (effect.type) {
      case 'schedule-timer':
        return {
          type: 'set-status-timer',
          kind: effect.timer.kind === 'status-poll' ? kinds.poll : kinds.alert,
          at: effect.at,
          timer: effect.timer,
        };
      case 'cancel-timer':
        return {
          type: 'cancel-status-timer',
          kind: effect.timer === 'status-poll' ? kinds.poll : kinds.alert,
        };
      case 'resend-gateway-request':
        if (kinds !== REGISTRATION_KINDS)
          throw new Error('only the registration is ever sent again, never a gateway charge');
        return {
          type: 'resend-registration',
          requestId: effect.requestId,
          attempt: effect.attempt,
          notBefore: effect.notBefore,
          ...(effect.afterNoTrace ? { afterNoTrace: true as const } : {}),
        };
      case 'send-gateway-request':
      case 'set-status-timer':
      case 'cancel-status-timer':
      case 'resend-registration':
        return effect;
      default: {
        const never: never = effect;
        throw new Error(`unhandled effect ${JSON.stringify(never)}`);
      }
    }
  });
}

/** A shared step as the schedule's outcome: news, or polls to keep (no event), or an ignore. */
function outcomeOf(
  step: OperationStep<GatewayDraft, AnyEffect>,
  kinds: OperationKinds,
  commandId: string,
  extra: { drafts?: GatewayDraft[]; effects?: GatewayEffect[] } = {},
): GatewayOutcome {
  const drafts = [...(extra.drafts ?? []), ...(step.outcome === 'news' ? step.drafts : [])];
  const effects = [...scheduleEffects(step.effects, kinds), ...(extra.effects ?? [])];
  if (drafts.length === 0 && effects.length === 0 && step.outcome === 'ignored')
    return { outcome: 'ignored', reason: step.reason };
  return { outcome: 'accepted', drafts, effects, commandId };
}

/** The registration's order: the schedule's id is its client_orderid. */
function registrationOrder(terms: ScheduleTerms): GatewayOrder {
  return { sagaId: terms.scheduleId, merchant: terms.merchant, clientOrderId: terms.scheduleId };
}

/** A charge's order: its own client_orderid and the gateway's order id. */
function chargeOrder(terms: ScheduleTerms, charge: GatewayCharge): GatewayOrder {
  return {
    sagaId: terms.scheduleId,
    merchant: terms.merchant,
    clientOrderId: charge.clientOrderId,
    gatewayOrderId: charge.gatewayOrderId,
  };
}

type RegistrationFailure = Omit<
  Extract<GatewayDraft, { type: 'schedule-registration-failed' }>,
  'type'
>;

/** How the registration's outcomes read as schedule events. */
function registrationVocabulary(
  state: GatewayChargedState,
  policy: SchedulePolicy,
  now: string,
): OperationVocabulary<RegistrationOp, GatewayDraft, AnyEffect> {
  const registered = (recurringPaymentId: string, resolvedBy: 'reply' | 'status') => ({
    drafts: [{ type: 'schedule-registered' as const, recurringPaymentId, resolvedBy }],
    effects: expectCycle(state, firstOf(state), policy),
  });
  // The gateway has charged under it: the registration exists, whatever else is said. A person
  // looks; the polls go on.
  const failed = (op: RegistrationOp, failure: RegistrationFailure) =>
    state.charges.length > 0
      ? {
          drafts: op.alerted
            ? []
            : [
                {
                  type: 'schedule-registration-unknown' as const,
                  reason: `${failure.reason}, but charged under: ${failure.message}`.slice(0, 256),
                  alert: true as const,
                  since: op.unknownSince ?? now,
                },
              ],
          effects: [firstPoll(op, now)],
        }
      : { drafts: [{ type: 'schedule-registration-failed' as const, ...failure }], effects: [] };
  return {
    opensOrder: () => true,
    acceptedByGateway: (_op, facts) => ({ type: 'schedule-registration-accepted', ...facts }),
    acknowledgedOutcome: (_op, facts) =>
      facts.recurringPaymentId === undefined
        ? undefined
        : registered(facts.recurringPaymentId, 'reply'),
    outcomeUnknown: (_op, facts) => ({
      type: 'schedule-registration-unknown',
      reason:
        facts.concern === 'no-trace'
          ? 'no trace at the gateway after its deadline, and sent once already'
          : facts.alert
            ? 'still unknown after the alert time'
            : 'the outcome is not known yet',
      ...(facts.alert ? { alert: true as const } : {}),
      since: facts.since,
      ...(facts.concern === undefined ? {} : { concern: facts.concern }),
      ...(facts.reportedAmount === undefined ? {} : { reportedAmount: facts.reportedAmount }),
    }),
    operationResent: (_op, attempt, unknownSince) => ({
      type: 'schedule-registration-resent',
      attempt,
      unknownSince,
    }),
    succeeded: (_report, op, reply) => {
      if (reply?.recurringPaymentId !== undefined)
        return registered(reply.recurringPaymentId, 'status');
      // Approved, yet no id to expect its charges by: asked on, a person told once.
      return {
        drafts: op.alerted
          ? []
          : [
              {
                type: 'schedule-registration-unknown',
                reason: 'approved, but the reply named no recurring-payment-id',
                alert: true,
                since: op.unknownSince ?? now,
              },
            ],
        effects: [firstPoll(op, now)],
      };
    },
    declined: (report, op) =>
      failed(op, {
        reason: 'rejected',
        ...(report.errorCode === undefined ? {} : { code: report.errorCode }),
        message: report.errorMessage ?? `the gateway reports it ${report.status}`,
      }),
    failed: (op, why) =>
      failed(op, {
        reason: why.reason === 'not-sent' ? 'not-sent' : 'rejected',
        ...(why.code === undefined ? {} : { code: why.code }),
        message: why.message ?? `the gateway reports it ${why.reason}`,
      }),
  };
}

/** How a charge's outcomes read as schedule events: only the schedule's amount is a charge. */
function chargeVocabulary(
  state: GatewayChargedState,
  charge: GatewayCharge,
): OperationVocabulary<ChargeOp, GatewayDraft, AnyEffect> {
  const ref = {
    cycle: charge.cycle,
    gatewayOrderId: charge.gatewayOrderId,
    clientOrderId: charge.clientOrderId,
  };
  return {
    opensOrder: () => true,
    expectedAmount: () => state.terms.amount,
    acceptedByGateway: (_op, facts) => ({
      type: 'gateway-charge-accepted',
      ...ref,
      ...(facts.serialNumber === undefined ? {} : { serialNumber: facts.serialNumber }),
    }),
    outcomeUnknown: (_op, facts) => ({ type: 'gateway-charge-outcome-unknown', ...ref, ...facts }),
    operationResent: () => {
      throw new Error("a gateway charge is the gateway's own request: never sent again");
    },
    succeeded: (report) => ({
      drafts: [
        {
          type: 'gateway-cycle-charged',
          ...ref,
          // The amount check passed: the gateway's amount is the schedule's.
          amount: state.terms.amount,
          ...(report.approvalCode === undefined ? {} : { approvalCode: report.approvalCode }),
        },
      ],
      effects: [],
    }),
    declined: (report) => ({
      drafts: [
        {
          type: 'gateway-cycle-declined',
          ...ref,
          outcome: 'declined',
          ...(report.errorCode === undefined ? {} : { code: report.errorCode }),
        },
      ],
      effects: [],
    }),
    failed: (_op, why) => ({
      drafts: [
        {
          type: 'gateway-cycle-declined',
          ...ref,
          outcome: why.reason === 'filtered' ? 'filtered' : 'error',
          ...(why.code === undefined ? {} : { code: why.code }),
        },
      ],
      effects: [],
    }),
  };
}

/** An input about the registration in flight, decided by the shared rules. */
function registrationStep(
  input: OperationInput<'create-recurring-payment'>,
  state: Extract<GatewayChargedState, { status: 'registering' }>,
  policy: SchedulePolicy,
  ctx: GatewayContext,
  extra: { effects?: GatewayEffect[] } = {},
): GatewayOutcome {
  const op = registrationOp(state.registration);
  const step = decideOperationInput(input, {
    order: registrationOrder(state.terms),
    op,
    vocab: registrationVocabulary(state, policy, ctx.now),
    rules: operationRules(policy, false),
    ctx,
  });
  return outcomeOf(step, REGISTRATION_KINDS, op.commandId, extra);
}

/** An input about a charge being confirmed, decided by the shared rules. */
function chargeStep(
  input: OperationInput<'rebill'>,
  state: GatewayChargedState,
  charge: GatewayCharge,
  policy: SchedulePolicy,
  ctx: GatewayContext,
  extra: { drafts?: GatewayDraft[]; effects?: GatewayEffect[] } = {},
  op: ChargeOp = chargeOp(state.terms.scheduleId, charge),
): GatewayOutcome {
  const step = decideOperationInput(input, {
    order: chargeOrder(state.terms, charge),
    op,
    vocab: chargeVocabulary(state, charge),
    rules: operationRules(policy, true),
    ctx,
  });
  return outcomeOf(step, chargeTimerKinds(charge.gatewayOrderId), op.commandId, extra);
}

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
  const alertAfter = policy.unknownAlertAfterMs ?? DEFAULT_UNKNOWN_ALERT_AFTER_MS;
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
      {
        type: 'schedule-timer',
        timer: { kind: 'unknown-alert', requestId: op.requestId },
        at: addMs(ctx.now, alertAfter),
      },
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
      if (charge === undefined) return { outcome: 'ignored', reason: 'STALE_RESULT' };
      const { report } = reportOf(result);
      if (report !== undefined && !aboutCharge(report, charge))
        return { outcome: 'ignored', reason: 'NOT_ABOUT_THIS_OPERATION' };
      return chargeStep({ kind: 'gateway-result', result }, state, charge, policy, ctx);
    }
    default: {
      const never: never = input;
      throw new Error(`unhandled input ${JSON.stringify(never)}`);
    }
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
  if ('expectedCycle' in timer)
    return expectedCycleTimer(state, timer.expectedCycle, timer.poll, policy, ctx.now);
  const obsolete: GatewayOutcome = { outcome: 'ignored', reason: 'TIMER_OBSOLETE' };
  const legacyAlert = (
    op: { requestId: string; stage: string; alerted?: boolean },
    kinds: OperationKinds,
  ): GatewayEffect[] =>
    'kind' in timer || op.stage !== 'outcome-unknown' || op.alerted === true
      ? []
      : [
          {
            type: 'set-status-timer',
            kind: kinds.alert,
            at: addMs(ctx.now, policy.unknownAlertAfterMs ?? DEFAULT_UNKNOWN_ALERT_AFTER_MS),
            timer: { kind: 'unknown-alert', requestId: op.requestId },
          },
        ];
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
      return { outcome: 'ignored', reason: 'CHARGE_ALREADY_RECORDED' };
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

/** A status query asking for an expected cycle's order by its client order id. */
function expectedStatusRequest(
  terms: ScheduleTerms,
  cycle: number,
  clientOrderId: string,
  poll: number,
  now: string,
): GatewayStatusRequest {
  const id = terms.scheduleId;
  return {
    operation: 'status',
    requestId: derivedUuid(`recurring-schedule/${id}/expected-charge/${cycle}/status/${poll}`),
    paymentId: id,
    merchant: terms.merchant,
    attempt: 1,
    requestedAt: now,
    clientOrderId,
    subjectRequestId: expectedChargeSubjectId(id, cycle),
    subjectOperation: 'rebill',
  };
}

/** The expected-cycle timer: recorded already → the next cycle; asked enough → alert; else ask. */
function expectedCycleTimer(
  state: GatewayChargedState,
  cycle: number,
  poll: number,
  policy: SchedulePolicy,
  now: string,
): GatewayOutcome {
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
  const clientOrderId = chargeClientOrderId(id, cycle, firstOf(state));
  if (poll > maxPolls(policy)) {
    return {
      outcome: 'accepted',
      drafts: [{ type: 'gateway-charge-alert', cycle, clientOrderId, reason: 'not-found' }],
      effects: expectCycle(state, cycle + 1, policy),
      commandId,
    };
  }
  // Searching for an order by its client order id is the schedule's own (no operation in flight
  // yet): a fixed pace, bounded, then the not-found alert. The next poll is armed past the bound
  // too, so the timer says when asking is over.
  return {
    outcome: 'accepted',
    drafts: [],
    effects: [
      {
        type: 'send-gateway-request',
        request: expectedStatusRequest(state.terms, cycle, clientOrderId, poll, now),
      },
      {
        type: 'set-status-timer',
        kind: EXPECTED_CHARGE_TIMER,
        at: addMs(now, pollMs(policy)),
        timer: { poll: poll + 1, expectedCycle: cycle },
      },
    ],
    commandId,
  };
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
  const next = expectCycle(state, cycle + 1, policy);
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
