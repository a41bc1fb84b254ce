import type {
  CreateScheduleCommand,
  GatewayCallback,
  GatewayCreateRecurringPaymentRequest,
  GatewayResult,
  GatewayStatusRequest,
  ScheduleEvent,
} from '@payments/contracts';
import { derivedUuid } from '../../../domain';
import { cycleDate, cycleDueAt, cycleExists, firstCycleFrom, formatLocalDate } from './calendar';
import {
  CHARGE_STATUS_TIMER_PREFIX,
  DEFAULT_EXPECTED_CHARGE_GRACE_MS,
  DEFAULT_MAX_SEND_ATTEMPTS,
  DEFAULT_MAX_STATUS_POLLS,
  DEFAULT_STATUS_POLL_MS,
  EXPECTED_CHARGE_TIMER,
  type GatewayCharge,
  type GatewayChargedState,
  REGISTRATION_STATUS_TIMER,
  type SchedulePolicy,
  type ScheduleTerms,
} from './state';

/**
 * Schedules registered with the gateway (issue #12, create-recurring-payment v4), pure.
 *
 * The rule: a registered schedule is charged by the gateway, never also by us — no charge timer,
 * no rebill, ever. What the gateway charges is recorded from its verified callbacks, and only a
 * status reply about that very order says money moved:
 *
 *  - a verified server callback naming `<schedule id>-<n>` (a charge the gateway made) records the
 *    charge as reported (`gateway-charge-reported`, cycle n − 1) and asks the gateway's status of
 *    that order; a callback about an order already recorded changes nothing, so each gateway
 *    charge gives one charge event however often its callback comes;
 *  - the status reply about that order (its order id, transaction type sale, an amount) makes
 *    `gateway-cycle-charged` (approved) or `gateway-cycle-declined` (declined, error, filtered);
 *    anything else (processing, unknown, not sent, no trace yet) is asked again by a timer,
 *    bounded by `maxStatusPolls`, then `gateway-charge-alert` (unconfirmed) for a person;
 *  - callbacks can be lost: once registered, every cycle's charge is also asked for by its client
 *    order id (`<schedule id>-<n>`, n counted from the first registered cycle) when its time and
 *    the grace for the gateway's own time of day have passed; a charge found is recorded as if
 *    its callback had come (reported, and settled by that very status reply when final), once;
 *    none found after `maxStatusPolls` queries → `gateway-charge-alert` (not-found);
 *  - a registration the gateway has charged under is never declared failed;
 *  - the registration's unknown outcome (timeout, 5xx) is resolved by status queries by its
 *    client_orderid: approved with a recurring-payment-id → registered; no trace → sent once more
 *    under the same client_orderid (DESIGN.md's stated rule), and no trace after that → failed.
 */

export type GatewayInput =
  | { kind: 'gateway-result'; result: GatewayResult }
  | { kind: 'callback'; callback: GatewayCallback }
  | { kind: 'status-timer'; timer: StatusTimer };

/** A status-query timer: of the registration, of a reported charge, or of an expected cycle. */
export interface StatusTimer {
  readonly poll: number;
  readonly gatewayOrderId?: string;
  readonly expectedCycle?: number;
}

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
  'NOT_A_CHARGE_OF_THIS_SCHEDULE' | 'CHARGE_ALREADY_RECORDED' | 'STALE_RESULT' | 'TIMER_OBSOLETE';

export type GatewayOutcome =
  | { outcome: 'accepted'; drafts: GatewayDraft[]; effects: GatewayEffect[]; commandId: string }
  | { outcome: 'ignored'; reason: GatewayIgnoreReason };

type RegistrationFailure = Omit<
  Extract<GatewayDraft, { type: 'schedule-registration-failed' }>,
  'type'
>;

/** The registration failed for good: reported once, its status polling stopped (if armed). */
function registrationFailed(
  commandId: string,
  failure: RegistrationFailure,
  polling = true,
): GatewayOutcome {
  return {
    outcome: 'accepted',
    drafts: [{ type: 'schedule-registration-failed', ...failure }],
    effects: polling ? [{ type: 'cancel-status-timer', kind: REGISTRATION_STATUS_TIMER }] : [],
    commandId,
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
      at: later(due, graceMs(policy)),
      timer: { poll: 1, expectedCycle: cycle },
    },
  ];
}

/** The schedule's first registered cycle (sagas older than the field: 0). */
const firstOf = (state: GatewayChargedState): number => state.firstCycle ?? 0;

const later = (now: string, ms: number): string => new Date(Date.parse(now) + ms).toISOString();

/** A status query of the schedule's saga: what it asks about, and the request id's key. */
function statusRequest(
  terms: ScheduleTerms,
  subject: Pick<
    GatewayStatusRequest,
    'clientOrderId' | 'subjectRequestId' | 'subjectOperation' | 'gatewayOrderId'
  >,
  key: string,
  now: string,
): GatewayStatusRequest {
  const id = terms.scheduleId;
  return {
    operation: 'status',
    requestId: derivedUuid(`recurring-schedule/${id}/${key}`),
    paymentId: id,
    merchant: terms.merchant,
    attempt: 1,
    requestedAt: now,
    ...subject,
  };
}

function registrationStatusRequest(
  terms: ScheduleTerms,
  resent: boolean,
  poll: number,
  now: string,
): GatewayStatusRequest {
  const id = terms.scheduleId;
  const subject = {
    clientOrderId: id,
    subjectRequestId: registrationRequestId(id),
    subjectOperation: 'create-recurring-payment' as const,
  };
  return statusRequest(
    terms,
    subject,
    `registration/${resent ? 'resent/' : ''}status/${poll}`,
    now,
  );
}

function chargeStatusRequest(
  terms: ScheduleTerms,
  charge: GatewayCharge,
  poll: number,
  now: string,
): GatewayStatusRequest {
  const id = terms.scheduleId;
  const subject = {
    clientOrderId: charge.clientOrderId,
    subjectRequestId: chargeSubjectId(id, charge.gatewayOrderId),
    // A charge of the card reference with the cardholder absent, made by the gateway.
    subjectOperation: 'rebill' as const,
    gatewayOrderId: charge.gatewayOrderId,
  };
  return statusRequest(
    terms,
    subject,
    `gateway-charge/${charge.gatewayOrderId}/status/${poll}`,
    now,
  );
}

/**
 * Status query `poll` now, and the next one armed in case this answer settles nothing. `last`:
 * the poll after the bound is armed too, so the timer says when asking is over (an alert).
 */
function pollEffects(
  policy: SchedulePolicy,
  now: string,
  kind: string,
  request: GatewayStatusRequest,
  poll: number,
  about: Omit<StatusTimer, 'poll'> = {},
  last = false,
): GatewayEffect[] {
  const next: StatusTimer = { poll: poll + 1, ...about };
  return [
    { type: 'send-gateway-request', request },
    ...(poll < maxPolls(policy) || (last && poll === maxPolls(policy))
      ? [{ type: 'set-status-timer' as const, kind, at: later(now, pollMs(policy)), timer: next }]
      : []),
  ];
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
  now: string,
): GatewayOutcome {
  const { terms } = state;
  const id = terms.scheduleId;
  switch (input.kind) {
    case 'callback':
      return reported(input.callback, state, policy, now);
    case 'status-timer': {
      const { timer } = input;
      if (timer.expectedCycle !== undefined)
        return expectedCycleTimer(state, timer.expectedCycle, timer.poll, policy, now);
      const charge =
        timer.gatewayOrderId === undefined
          ? undefined
          : state.charges.find((c) => c.gatewayOrderId === timer.gatewayOrderId);
      if (timer.poll > maxPolls(policy)) {
        // Asked as often as the bound allows and still not final: a person must look.
        if (timer.gatewayOrderId === undefined) {
          if (
            state.status !== 'registering' ||
            !state.registration.unknown ||
            timer.poll > maxPolls(policy) + 1
          )
            return { outcome: 'ignored', reason: 'TIMER_OBSOLETE' };
          return {
            outcome: 'accepted',
            drafts: [
              {
                type: 'schedule-registration-unknown',
                reason: `no answer after ${maxPolls(policy)} status queries`,
                alert: true,
              },
            ],
            effects: [],
            commandId: derivedUuid(`recurring-schedule/${id}/registration/alert`),
          };
        }
        if (charge?.outcome !== 'confirming' || timer.poll > maxPolls(policy) + 1)
          return { outcome: 'ignored', reason: 'TIMER_OBSOLETE' };
        return {
          outcome: 'accepted',
          drafts: [
            {
              type: 'gateway-charge-alert',
              cycle: charge.cycle,
              clientOrderId: charge.clientOrderId,
              gatewayOrderId: charge.gatewayOrderId,
              reason: 'unconfirmed',
            },
          ],
          effects: [],
          commandId: derivedUuid(`recurring-schedule/${id}/unconfirmed/${charge.gatewayOrderId}`),
        };
      }
      if (timer.gatewayOrderId === undefined) {
        if (state.status !== 'registering' || !state.registration.unknown)
          return { outcome: 'ignored', reason: 'TIMER_OBSOLETE' };
        const request = registrationStatusRequest(
          terms,
          state.registration.resent,
          timer.poll,
          now,
        );
        return {
          outcome: 'accepted',
          drafts: [],
          effects: pollEffects(
            policy,
            now,
            REGISTRATION_STATUS_TIMER,
            request,
            timer.poll,
            {},
            true,
          ),
          commandId: request.requestId,
        };
      }
      if (charge?.outcome !== 'confirming') return { outcome: 'ignored', reason: 'TIMER_OBSOLETE' };
      const request = chargeStatusRequest(terms, charge, timer.poll, now);
      return {
        outcome: 'accepted',
        drafts: [],
        effects: pollEffects(
          policy,
          now,
          chargeTimerKind(charge.gatewayOrderId),
          request,
          timer.poll,
          { gatewayOrderId: charge.gatewayOrderId },
          true,
        ),
        commandId: request.requestId,
      };
    }
    case 'gateway-result': {
      const { result } = input;
      const registration = state.status === 'registering' ? state.registration : undefined;
      if (result.operation === 'create-recurring-payment') {
        if (registration === undefined || result.requestId !== registration.requestId)
          return { outcome: 'ignored', reason: 'STALE_RESULT' };
        return registrationAnswered(result, registration, state, policy, now);
      }
      if (result.operation !== 'status') return { outcome: 'ignored', reason: 'STALE_RESULT' };
      if (result.subjectRequestId === registrationRequestId(id)) {
        if (registration === undefined || !registration.unknown)
          return { outcome: 'ignored', reason: 'STALE_RESULT' };
        return registrationStatusAnswered(result, registration, state, policy, now);
      }
      const expected = expectedCycleAsked(state, result.subjectRequestId, policy, now);
      if (expected !== undefined)
        return expectedCycleAnswered(result, expected, state, policy, now);
      const charge = state.charges.find(
        (c) =>
          c.outcome === 'confirming' &&
          chargeSubjectId(id, c.gatewayOrderId) === result.subjectRequestId,
      );
      if (charge === undefined) return { outcome: 'ignored', reason: 'STALE_RESULT' };
      return chargeStatusAnswered(result, charge);
    }
    default: {
      const never: never = input;
      throw new Error(`unhandled input ${JSON.stringify(never)}`);
    }
  }
}

/** A verified callback: a charge of this schedule not recorded yet is confirmed by a status query. */
function reported(
  callback: GatewayCallback,
  state: GatewayChargedState,
  policy: SchedulePolicy,
  now: string,
): GatewayOutcome {
  const id = state.terms.scheduleId;
  const cycle =
    callback.source === 'server-callback'
      ? chargeCycle(id, callback.clientOrderId, firstOf(state))
      : undefined;
  if (cycle === undefined) return { outcome: 'ignored', reason: 'NOT_A_CHARGE_OF_THIS_SCHEDULE' };
  const gatewayOrderId = callback.report.gatewayOrderId;
  if (state.charges.some((c) => c.gatewayOrderId === gatewayOrderId))
    return { outcome: 'ignored', reason: 'CHARGE_ALREADY_RECORDED' };
  const charge: GatewayCharge = {
    gatewayOrderId,
    clientOrderId: callback.clientOrderId,
    cycle,
    outcome: 'confirming',
  };
  const request = chargeStatusRequest(state.terms, charge, 1, now);
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
    effects: pollEffects(
      policy,
      now,
      chargeTimerKind(gatewayOrderId),
      request,
      1,
      { gatewayOrderId },
      true,
    ),
    commandId: derivedUuid(`callback/${callback.notificationId}`),
  };
}

/** The gateway has charged under the schedule: its registration exists, whatever else says so. */
const chargedUnder = (state: GatewayChargedState): boolean => state.charges.length > 0;

function registrationAnswered(
  result: GatewayResult,
  registration: { requestId: string; unknown: boolean; resent: boolean },
  state: GatewayChargedState,
  policy: SchedulePolicy,
  now: string,
): GatewayOutcome {
  const commandId = registration.requestId;
  const unknown = (reason: string): GatewayOutcome => ({
    outcome: 'accepted',
    drafts: registration.unknown ? [] : [{ type: 'schedule-registration-unknown', reason }],
    effects: [
      {
        type: 'set-status-timer',
        kind: REGISTRATION_STATUS_TIMER,
        at: later(now, pollMs(policy)),
        timer: { poll: 1 },
      },
    ],
    commandId,
  });
  const r = result.result;
  switch (r.kind) {
    case 'accepted':
      if (r.recurringPaymentId === undefined)
        return unknown('the reply named no recurring-payment-id');
      return {
        outcome: 'accepted',
        drafts: [
          {
            type: 'schedule-registered',
            recurringPaymentId: r.recurringPaymentId,
            resolvedBy: 'reply',
          },
        ],
        effects: [
          { type: 'cancel-status-timer', kind: REGISTRATION_STATUS_TIMER },
          ...expectCycle(state, firstOf(state), policy),
        ],
        commandId,
      };
    case 'rejected':
      if (chargedUnder(state)) return unknown(`refused, but charged under: ${r.message}`);
      return registrationFailed(commandId, {
        reason: 'rejected',
        code: r.code,
        message: r.message,
      });
    case 'not-sent': {
      if (chargedUnder(state)) return unknown(`not sent, but charged under: ${r.reason}`);
      const max = policy.maxSendAttempts ?? DEFAULT_MAX_SEND_ATTEMPTS;
      if (result.attempt >= max && !registration.resent) {
        return registrationFailed(
          commandId,
          { reason: 'not-sent', message: `not sent after ${result.attempt} attempts: ${r.reason}` },
          false,
        );
      }
      if (registration.resent) {
        // The one resend after no trace was not sent: the gateway never had it.
        return registrationFailed(commandId, {
          reason: 'no-trace',
          message: `no trace at the gateway and the resend was not sent: ${r.reason}`,
        });
      }
      return {
        outcome: 'accepted',
        drafts: [],
        effects: [
          {
            type: 'resend-registration',
            requestId: registration.requestId,
            attempt: result.attempt + 1,
            notBefore: r.retryAt ?? later(now, pollMs(policy)),
          },
        ],
        commandId,
      };
    }
    case 'unknown':
      return unknown(r.reason);
    default: {
      const never: never = r;
      throw new Error(`unhandled classification ${JSON.stringify(never)}`);
    }
  }
}

function registrationStatusAnswered(
  result: GatewayResult,
  registration: { requestId: string; unknown: boolean; resent: boolean },
  state: GatewayChargedState,
  policy: SchedulePolicy,
  now: string,
): GatewayOutcome {
  const commandId = result.requestId;
  const r = result.result;
  if (r.kind === 'accepted' && r.report?.status === 'approved' && r.recurringPaymentId) {
    return {
      outcome: 'accepted',
      drafts: [
        {
          type: 'schedule-registered',
          recurringPaymentId: r.recurringPaymentId,
          resolvedBy: 'status',
        },
      ],
      effects: [
        { type: 'cancel-status-timer', kind: REGISTRATION_STATUS_TIMER },
        ...expectCycle(state, firstOf(state), policy),
      ],
      commandId,
    };
  }
  // Charged under it: whatever this answer says, the registration exists (the next poll asks).
  if (chargedUnder(state)) return { outcome: 'accepted', drafts: [], effects: [], commandId };
  // The gateway processed it and refused it: nothing to send again.
  if (r.kind === 'accepted' && r.report !== undefined && isRefused(r.report.status)) {
    return registrationFailed(commandId, {
      reason: 'rejected',
      ...(r.report.errorCode === undefined ? {} : { code: r.report.errorCode }),
      message: r.report.errorMessage ?? `the gateway reports it ${r.report.status}`,
    });
  }
  // Only "no such order" is no trace; a refused query (credentials, endpoint) says nothing.
  if (r.kind === 'rejected' && r.orderUnknown === true) {
    // The gateway has no trace of it (a synchronous operation: had it been processed, the status
    // query would find it). Sent once more under the same client_orderid, which the gateway
    // refuses as a duplicate if the first arrived after all; no trace again: failed.
    if (registration.resent) {
      return registrationFailed(commandId, { reason: 'no-trace', message: r.message });
    }
    return {
      outcome: 'accepted',
      drafts: [{ type: 'schedule-registration-resent' }],
      effects: [
        { type: 'cancel-status-timer', kind: REGISTRATION_STATUS_TIMER },
        {
          type: 'resend-registration',
          requestId: registration.requestId,
          // Beyond every not-sent resend (those stop at maxSendAttempts): a new inbox key.
          attempt: (policy.maxSendAttempts ?? DEFAULT_MAX_SEND_ATTEMPTS) + 1,
          notBefore: now,
          afterNoTrace: true,
        },
      ],
      commandId,
    };
  }
  // Processing, unknown, not sent: the next poll is already armed.
  return { outcome: 'accepted', drafts: [], effects: [], commandId };
}

const isRefused = (status: string): boolean =>
  status === 'declined' || status === 'error' || status === 'filtered';

/** The report of a status reply, and the gateway order it names. */
function reportOf(result: GatewayResult) {
  const r = result.result;
  const report = r.kind === 'accepted' ? r.report : undefined;
  const orderId = report?.gatewayOrderId ?? (r.kind === 'accepted' ? r.gatewayOrderId : undefined);
  return { report, orderId };
}

/**
 * What a status reply about a charge's very order settles: charged (approved, with the gateway's
 * amount) or declined; undefined while it is not final (or not about a charge).
 */
function chargeSettlement(
  report: NonNullable<ReturnType<typeof reportOf>['report']>,
  charge: Pick<GatewayCharge, 'cycle' | 'gatewayOrderId' | 'clientOrderId'>,
): GatewayDraft | undefined {
  const isCharge =
    report.transactionType === undefined ||
    report.transactionType === 'sale' ||
    report.transactionType === 'rebill';
  if (!isCharge) return undefined;
  const ref = {
    cycle: charge.cycle,
    gatewayOrderId: charge.gatewayOrderId,
    clientOrderId: charge.clientOrderId,
  };
  if (report.status === 'approved' && report.amount !== undefined) {
    return {
      type: 'gateway-cycle-charged',
      ...ref,
      amount: report.amount,
      ...(report.approvalCode === undefined ? {} : { approvalCode: report.approvalCode }),
    };
  }
  if (isRefused(report.status)) {
    return {
      type: 'gateway-cycle-declined',
      ...ref,
      outcome: report.status as 'declined' | 'error' | 'filtered',
      ...(report.errorCode === undefined ? {} : { code: report.errorCode }),
    };
  }
  return undefined;
}

/** The status reply about a reported charge: only an answer about that very order settles it. */
function chargeStatusAnswered(result: GatewayResult, charge: GatewayCharge): GatewayOutcome {
  const commandId = result.requestId;
  const { report, orderId } = reportOf(result);
  const settled =
    report !== undefined && orderId === charge.gatewayOrderId
      ? chargeSettlement(report, charge)
      : undefined;
  if (settled !== undefined) {
    return {
      outcome: 'accepted',
      drafts: [settled],
      effects: [{ type: 'cancel-status-timer', kind: chargeTimerKind(charge.gatewayOrderId) }],
      commandId,
    };
  }
  // Not (yet) an answer about that order: the next poll is armed.
  return { outcome: 'accepted', drafts: [], effects: [], commandId };
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
  const request = statusRequest(
    state.terms,
    {
      clientOrderId,
      subjectRequestId: expectedChargeSubjectId(id, cycle),
      subjectOperation: 'rebill',
    },
    `expected-charge/${cycle}/status/${poll}`,
    now,
  );
  return {
    outcome: 'accepted',
    drafts: [],
    effects: pollEffects(
      policy,
      now,
      EXPECTED_CHARGE_TIMER,
      request,
      poll,
      { expectedCycle: cycle },
      true,
    ),
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
  const upTo = firstCycleFrom(rule, first, later(now, -graceMs(policy))) ?? first + 10_000;
  for (let c = upTo; c >= first && upTo - c <= 10_000; c -= 1)
    if (expectedChargeSubjectId(scheduleId, c) === subjectRequestId) return c;
  return undefined;
}

/**
 * A status reply about an expected cycle's order: a charge found is recorded as its callback
 * would have (reported), settled by this very reply when final, else confirmed by polling; the
 * next cycle is then expected. No order yet: the next poll is armed.
 */
function expectedCycleAnswered(
  result: GatewayResult,
  cycle: number,
  state: GatewayChargedState,
  policy: SchedulePolicy,
  now: string,
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
  const reported: GatewayDraft = {
    type: 'gateway-charge-reported',
    cycle,
    gatewayOrderId: orderId,
    clientOrderId: charge.clientOrderId,
    reportedStatus: report.status,
  };
  const settled = chargeSettlement(report, charge);
  const next = expectCycle(state, cycle + 1, policy);
  if (settled !== undefined)
    return { outcome: 'accepted', drafts: [reported, settled], effects: next, commandId };
  const request = chargeStatusRequest(state.terms, charge, 1, now);
  return {
    outcome: 'accepted',
    drafts: [reported],
    effects: [
      ...pollEffects(
        policy,
        now,
        chargeTimerKind(orderId),
        request,
        1,
        { gatewayOrderId: orderId },
        true,
      ),
      ...next,
    ],
    commandId,
  };
}
