import type {
  CreateScheduleCommand,
  GatewayCallback,
  GatewayCreateRecurringPaymentRequest,
  GatewayResult,
  GatewayStatusRequest,
  ScheduleEvent,
} from '@payments/contracts';
import { derivedUuid } from '../../../domain';
import { type IgnoreReason, type KeepSooner } from '../../../domain/decision';
import { type OperationTimer } from '../../../domain/gateway-operation/gateway-operation';
import { cycleDate, cycleExists, formatLocalDate } from './calendar';
import { type ChargeOp, type GatewayCharge, type Registration, type RegistrationOp } from './state';

/** A registered schedule's operations, ids, requests and the decider's types (see gateway-charged.ts). */
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
  /** `askedSince`: when the first query went out (timers written before it: undefined). */
  | { readonly poll: number; readonly expectedCycle: number; readonly askedSince?: string }
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
  | {
      type: 'set-status-timer';
      kind: string;
      at: string;
      timer: StatusTimer;
      keepSooner?: KeepSooner;
    }
  | { type: 'cancel-status-timer'; kind: string }
  /** The status timer of this kind brought forward to `at`, when set for later. */
  | { type: 'advance-status-timer'; kind: string; at: string };

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
export const LEGACY_SINCE = '1970-01-01T00:00:00.000Z';

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

/**
 * The gateway's own rebill as an operation in flight whose outcome is unknown from `since` on:
 * we never sent it, so status queries (subject `requestId`) are all there is to ask.
 */
export function gatewaysRebill(requestId: string, since: string): ChargeOp {
  return {
    operation: 'rebill',
    requestId,
    commandId: requestId,
    requestedAt: since,
    stage: 'outcome-unknown',
    unknownSince: since,
  };
}

/** A charge's confirmation as the shared rules see it (a saga written before them: unknown). */
export function chargeOp(scheduleId: string, charge: GatewayCharge): ChargeOp {
  return (
    charge.op ?? gatewaysRebill(chargeSubjectId(scheduleId, charge.gatewayOrderId), LEGACY_SINCE)
  );
}

/** A reported charge's confirmation: its outcome unknown from the report on. */
export function newChargeOp(scheduleId: string, gatewayOrderId: string, at: string): ChargeOp {
  return gatewaysRebill(chargeSubjectId(scheduleId, gatewayOrderId), at);
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
