import type { GatewayResult } from '@payments/contracts';
import { addMs, unhandled } from '../../../domain/decision';
import {
  decideOperationInput,
  firstPoll,
  statusRequest,
  unknownAlertTimer,
  type GatewayOrder,
  type OperationEffect,
  type OperationInput,
  type OperationRules,
  type OperationStep,
  type OperationVocabulary,
} from '../../../domain/gateway-operation/gateway-operation';
import { cycleDueAt } from './calendar';
import {
  CHARGE_ALERT_TIMER_PREFIX,
  CHARGE_STATUS_TIMER_PREFIX,
  type ChargeOp,
  DEFAULT_EXPECTED_CHARGE_GRACE_MS,
  DEFAULT_MAX_SEND_ATTEMPTS,
  DEFAULT_UNKNOWN_ALERT_AFTER_MS,
  EXPECTED_CHARGE_ALERT_TIMER,
  EXPECTED_CHARGE_TIMER,
  type GatewayCharge,
  type GatewayChargedState,
  REGISTRATION_ALERT_TIMER,
  REGISTRATION_STATUS_TIMER,
  type RegistrationOp,
  type SchedulePolicy,
  type ScheduleTerms,
} from './state';
import {
  type GatewayContext,
  type GatewayDraft,
  type GatewayEffect,
  type GatewayOutcome,
  chargeOp,
  expectedChargeSubjectId,
  gatewaysRebill,
  registrationOp,
} from './gateway-charged-model';

/**
 * A registered schedule's operations on the shared gateway-operation rules: their timing from the
 * schedule's policy, their timers under the operation's own kinds, their orders, and how their
 * outcomes read as schedule events (see gateway-charged.ts).
 */
export function graceMs(policy: SchedulePolicy): number {
  return policy.expectedChargeGraceMs ?? DEFAULT_EXPECTED_CHARGE_GRACE_MS;
}

/**
 * The shared rules for the registration and, with `gatewaysOwn`, for a charge: the gateway's own
 * request, never ours to send again (no trace of it leaves it unknown for a person).
 */
export function operationRules(policy: SchedulePolicy, gatewaysOwn: boolean): OperationRules {
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
export function expectCycle(
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

/**
 * The gateway's charge of `cycle`, expected and not seen yet, as an operation in flight: unknown
 * from the cycle's time and the grace on (`now` for a cycle the calendar no longer has), or from
 * `askedSince`, the first query, when that came later (asked late, e.g. after an outage: the
 * search still gets the whole alert window and the fast polls).
 */
export function expectedChargeOp(
  state: GatewayChargedState,
  cycle: number,
  policy: SchedulePolicy,
  now: string,
  askedSince?: string,
): ChargeOp {
  const due = cycleDueAt(state.terms.rule, cycle);
  const since = due === undefined ? now : addMs(due, graceMs(policy));
  return gatewaysRebill(
    expectedChargeSubjectId(state.terms.scheduleId, cycle),
    askedSince !== undefined && askedSince > since ? askedSince : since,
  );
}

/** The schedule's first registered cycle (sagas older than the field: 0). */
export const firstOf = (state: GatewayChargedState): number => state.firstCycle ?? 0;

/** The timer kinds of one operation of the schedule (several charges may be confirmed at once). */
export interface OperationKinds {
  readonly poll: string;
  readonly alert: string;
}

export const REGISTRATION_KINDS: OperationKinds = {
  poll: REGISTRATION_STATUS_TIMER,
  alert: REGISTRATION_ALERT_TIMER,
};

/** The search for an expected cycle's charge: the shared status poll (the cycle in its payload) and alert. */
export const EXPECTED_CHARGE_KINDS: OperationKinds = {
  poll: EXPECTED_CHARGE_TIMER,
  alert: EXPECTED_CHARGE_ALERT_TIMER,
};

export function chargeTimerKinds(gatewayOrderId: string): OperationKinds {
  return {
    poll: `${CHARGE_STATUS_TIMER_PREFIX}${gatewayOrderId}`,
    alert: `${CHARGE_ALERT_TIMER_PREFIX}${gatewayOrderId}`,
  };
}

export type AnyEffect = GatewayEffect | OperationEffect;

/** The shared module's effects as the schedule's: its timers under the operation's own kinds. */
export function scheduleEffects(
  effects: readonly AnyEffect[],
  kinds: OperationKinds,
): GatewayEffect[] {
  return effects.map((effect): GatewayEffect => {
    switch (effect.type) {
      case 'schedule-timer':
        return {
          type: 'set-status-timer',
          kind: effect.timer.kind === 'status-poll' ? kinds.poll : kinds.alert,
          at: effect.at,
          timer: effect.timer,
          ...(effect.keepSooner === undefined ? {} : { keepSooner: effect.keepSooner }),
        };
      case 'cancel-timer':
        return {
          type: 'cancel-status-timer',
          kind: effect.timer === 'status-poll' ? kinds.poll : kinds.alert,
        };
      case 'resend-gateway-request':
        if (kinds !== REGISTRATION_KINDS)
          throw new Error('only the registration is ever sent again, never a gateway charge');
        return { ...effect, type: 'resend-registration' };
      case 'send-gateway-request':
      case 'set-status-timer':
      case 'cancel-status-timer':
      case 'advance-status-timer':
      case 'resend-registration':
        return effect;
      default:
        return unhandled(effect, 'effect');
    }
  });
}

/** A shared step as the schedule's outcome: news, or polls to keep (no event), or an ignore. */
export function outcomeOf(
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
export function registrationOrder(terms: ScheduleTerms): GatewayOrder {
  return { sagaId: terms.scheduleId, merchant: terms.merchant, clientOrderId: terms.scheduleId };
}

/** A charge's order: its own client_orderid and the gateway's order id. */
export function chargeOrder(terms: ScheduleTerms, charge: GatewayCharge): GatewayOrder {
  return {
    sagaId: terms.scheduleId,
    merchant: terms.merchant,
    clientOrderId: charge.clientOrderId,
    gatewayOrderId: charge.gatewayOrderId,
  };
}

export type RegistrationFailure = Omit<
  Extract<GatewayDraft, { type: 'schedule-registration-failed' }>,
  'type'
>;

/** How the registration's outcomes read as schedule events. */
export function registrationVocabulary(
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
export function chargeVocabulary(
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
export function registrationStep(
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
export function chargeStep(
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
export function startConfirming(
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

/** The report of a status reply, and the gateway order it names. */
export function reportOf(result: GatewayResult) {
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
export function aboutCharge(
  report: NonNullable<ReturnType<typeof reportOf>['report']>,
  charge: Pick<GatewayCharge, 'gatewayOrderId'>,
): boolean {
  const type = report.transactionType;
  return (
    (report.gatewayOrderId === undefined || report.gatewayOrderId === charge.gatewayOrderId) &&
    (type === undefined || type === 'sale' || type === 'rebill')
  );
}
