import type {
  CreateScheduleCommand,
  GatewayCallback,
  GatewayCreateRecurringPaymentRequest,
  GatewayResult,
  GatewayStatusRequest,
  ScheduleEvent,
} from '@payments/contracts';
import { derivedUuid } from '../../../domain';
import { cycleDate, cycleExists, formatLocalDate } from './calendar';
import {
  CHARGE_STATUS_TIMER_PREFIX,
  DEFAULT_MAX_SEND_ATTEMPTS,
  DEFAULT_MAX_STATUS_POLLS,
  DEFAULT_STATUS_POLL_MS,
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
 *    bounded by `maxStatusPolls`, then left confirming for operators;
 *  - the registration's unknown outcome (timeout, 5xx) is resolved by status queries by its
 *    client_orderid: approved with a recurring-payment-id → registered; no trace → sent once more
 *    under the same client_orderid (DESIGN.md's stated rule), and no trace after that → failed.
 */

export type GatewayInput =
  | { kind: 'gateway-result'; result: GatewayResult }
  | { kind: 'callback'; callback: GatewayCallback }
  | { kind: 'status-timer'; timer: StatusTimer };

/** A status-query timer: of the registration (no order id) or of a charge. */
export interface StatusTimer {
  readonly poll: number;
  readonly gatewayOrderId?: string;
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

/** Status query `poll` now, and the next one armed in case this answer settles nothing. */
function pollEffects(
  policy: SchedulePolicy,
  now: string,
  kind: string,
  request: GatewayStatusRequest,
  poll: number,
  gatewayOrderId?: string,
): GatewayEffect[] {
  const next: StatusTimer = {
    poll: poll + 1,
    ...(gatewayOrderId === undefined ? {} : { gatewayOrderId }),
  };
  return [
    { type: 'send-gateway-request', request },
    ...(poll < maxPolls(policy)
      ? [{ type: 'set-status-timer' as const, kind, at: later(now, pollMs(policy)), timer: next }]
      : []),
  ];
}

/** The cycle a charge's client order id names: `<schedule id>-<n>` is cycle n − 1. */
export function chargeCycle(scheduleId: string, clientOrderId: string): number | undefined {
  const prefix = `${scheduleId}-`;
  if (!clientOrderId.startsWith(prefix)) return undefined;
  const n = clientOrderId.slice(prefix.length);
  return /^[1-9]\d{0,5}$/.test(n) ? Number(n) - 1 : undefined;
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
      if (timer.poll > maxPolls(policy)) return { outcome: 'ignored', reason: 'TIMER_OBSOLETE' };
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
          effects: pollEffects(policy, now, REGISTRATION_STATUS_TIMER, request, timer.poll),
          commandId: request.requestId,
        };
      }
      const charge = state.charges.find((c) => c.gatewayOrderId === timer.gatewayOrderId);
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
          charge.gatewayOrderId,
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
        return registrationAnswered(result, registration, policy, now);
      }
      if (result.operation !== 'status') return { outcome: 'ignored', reason: 'STALE_RESULT' };
      if (result.subjectRequestId === registrationRequestId(id)) {
        if (registration === undefined || !registration.unknown)
          return { outcome: 'ignored', reason: 'STALE_RESULT' };
        return registrationStatusAnswered(result, registration, policy, now);
      }
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
    callback.source === 'server-callback' ? chargeCycle(id, callback.clientOrderId) : undefined;
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
    effects: pollEffects(policy, now, chargeTimerKind(gatewayOrderId), request, 1, gatewayOrderId),
    commandId: derivedUuid(`callback/${callback.notificationId}`),
  };
}

function registrationAnswered(
  result: GatewayResult,
  registration: { requestId: string; unknown: boolean; resent: boolean },
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
        effects: [{ type: 'cancel-status-timer', kind: REGISTRATION_STATUS_TIMER }],
        commandId,
      };
    case 'rejected':
      return registrationFailed(commandId, {
        reason: 'rejected',
        code: r.code,
        message: r.message,
      });
    case 'not-sent': {
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
      effects: [{ type: 'cancel-status-timer', kind: REGISTRATION_STATUS_TIMER }],
      commandId,
    };
  }
  if (r.kind === 'rejected' || (r.kind === 'accepted' && r.report && isRefused(r.report.status))) {
    // The gateway has no trace of it (a synchronous operation: had it been processed, the status
    // query would find it). Sent once more under the same client_orderid; no trace again: failed.
    if (registration.resent) {
      return registrationFailed(commandId, {
        reason: 'no-trace',
        message: r.kind === 'rejected' ? r.message : 'the gateway reports it refused',
      });
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

/** The status reply about a reported charge: only an answer about that very order settles it. */
function chargeStatusAnswered(result: GatewayResult, charge: GatewayCharge): GatewayOutcome {
  const commandId = result.requestId;
  const r = result.result;
  const report = r.kind === 'accepted' ? r.report : undefined;
  const orderId = report?.gatewayOrderId ?? (r.kind === 'accepted' ? r.gatewayOrderId : undefined);
  const sameOrder = orderId === charge.gatewayOrderId;
  const isCharge =
    report?.transactionType === undefined ||
    report.transactionType === 'sale' ||
    report.transactionType === 'rebill';
  const ref = {
    cycle: charge.cycle,
    gatewayOrderId: charge.gatewayOrderId,
    clientOrderId: charge.clientOrderId,
  };
  const settled = (draft: GatewayDraft): GatewayOutcome => ({
    outcome: 'accepted',
    drafts: [draft],
    effects: [{ type: 'cancel-status-timer', kind: chargeTimerKind(charge.gatewayOrderId) }],
    commandId,
  });
  if (report !== undefined && sameOrder && isCharge) {
    if (report.status === 'approved' && report.amount !== undefined) {
      return settled({
        type: 'gateway-cycle-charged',
        ...ref,
        amount: report.amount,
        ...(report.approvalCode === undefined ? {} : { approvalCode: report.approvalCode }),
      });
    }
    if (report.status === 'declined' || report.status === 'error' || report.status === 'filtered') {
      return settled({
        type: 'gateway-cycle-declined',
        ...ref,
        outcome: report.status,
        ...(report.errorCode === undefined ? {} : { code: report.errorCode }),
      });
    }
  }
  // Not (yet) an answer about that order: the next poll is armed.
  return { outcome: 'accepted', drafts: [], effects: [], commandId };
}
