import { unhandled } from '../../../domain/decision';
import { type RejectionArgs, rejectionFields } from '../../../domain/rejection';
import { createHash } from 'node:crypto';
import type {
  MerchantRef,
  Money,
  PayoutBudgetAnswerCommand,
  PayoutBudgetEvent,
  ReleasePayoutBudgetCommand,
  ReservePayoutBudgetCommand,
} from '@payments/contracts';
import {
  DEFAULT_DAILY_LIMIT_MINOR,
  DEFAULT_PAYOUT_POLICY,
  limitsOf,
  type PayoutContext,
} from '../../payout/domain/model';
import { type BudgetRequest, type PublishHeldRequest, utcDay } from './requests';

/**
 * The per-endpoint daily payout budget: one saga per (endpoint, currency, UTC day). Every
 * money-out operation (a two-step payout's approval, a one-step payout, a payout form, a transfer)
 * reserves its amount here in the transaction that would send its gateway request, so concurrent
 * operations serialise on this saga's row lock and the sum of reservations never exceeds the
 * day's limit, whatever the interleaving. An operation that paid nothing (declined, failed)
 * releases its reservation; paid and unknown outcomes keep it (an unknown one may have paid), and
 * one the gateway reports paid at a larger amount than asked keeps that larger amount reserved.
 */
export interface OpenBudget {
  readonly status: 'open';
  readonly version: number;
  readonly budgetId: string;
  readonly merchant: { endpointId: string; merchantId?: string };
  readonly currency: string;
  readonly day: string;
  readonly reservedMinor: number;
  /** Payout id → reserved amount (a repeated reservation of one payout counts once). */
  readonly reservations: Readonly<Record<string, number>>;
}

export type BudgetState = { readonly status: 'initial'; readonly version: number } | OpenBudget;

export const initialBudgetState: BudgetState = { status: 'initial', version: 0 };

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
type BudgetEventDraft = DistributiveOmit<PayoutBudgetEvent, 'budgetId' | 'version' | 'occurredAt'>;

export type BudgetCommand = ReservePayoutBudgetCommand | ReleasePayoutBudgetCommand;

export type BudgetDecision =
  | { outcome: 'accepted'; events: PayoutBudgetEvent[]; effects: BudgetEffect[] }
  | { outcome: 'ignored'; reason: 'NOTHING_RESERVED'; events: []; effects: [] };

/** The answer to a reservation, addressed to the payout saga (start-saga in the same transaction). */
export type BudgetEffect = { type: 'answer'; command: PayoutBudgetAnswerCommand };

/** The budget saga's id: a name-based UUID (RFC 4122 version 5 layout) of endpoint, currency, day. */
export function payoutBudgetId(endpointId: string, currency: string, day: string): string {
  const hash = createHash('sha1').update(`payout-budget|${endpointId}|${currency}|${day}`).digest();
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50;
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function dailyLimitOf(ctx: PayoutContext, endpointId: string, currency: string): Money {
  const limits = limitsOf(ctx.policy ?? DEFAULT_PAYOUT_POLICY, endpointId);
  return { minor: limits.dailyLimitMinor ?? DEFAULT_DAILY_LIMIT_MINOR, currency };
}

/**
 * An amount no day's budget of the endpoint could take (a payout or a transfer), refused with the
 * command before anything is reserved or sent; undefined: the budget decides.
 */
export function dailyAmountRefusal(
  ctx: PayoutContext,
  endpointId: string,
  amount: Money,
): ['DAILY_PAYOUT_LIMIT_EXCEEDED', string] | undefined {
  const limit = dailyLimitOf(ctx, endpointId, amount.currency);
  return amount.minor > limit.minor
    ? ['DAILY_PAYOUT_LIMIT_EXCEEDED', `the daily payout limit is ${limit.minor}`]
    : undefined;
}

export function decideBudget(
  command: BudgetCommand,
  state: BudgetState,
  ctx: PayoutContext,
): BudgetDecision {
  const stamp = (e: BudgetEventDraft) => ({
    ...e,
    budgetId: command.budgetId,
    version: state.version + 1,
    occurredAt: ctx.now,
  });
  switch (command.type) {
    case 'reserve-payout-budget': {
      const { amount, payoutId, merchant, day } = command;
      const limit = dailyLimitOf(ctx, merchant.endpointId, amount.currency);
      const reservedMinor = state.status === 'open' ? state.reservedMinor : 0;
      const answer = (granted: boolean, before: number): BudgetEffect => ({
        type: 'answer',
        command: {
          type: 'payout-budget-answer',
          commandId: ctx.ids.next(),
          payoutId,
          merchant,
          occurredAt: ctx.now,
          budgetId: command.budgetId,
          granted,
          reservedMinor: before,
          limit,
        },
      });
      const m = (minor: number) => ({ minor, currency: amount.currency });
      const base = { commandId: command.commandId, merchant, day, payoutId, amount, limit };
      const held = state.status === 'open' ? state.reservations[payoutId] : undefined;
      if (held !== undefined && amount.minor > held) {
        // The gateway reported paying more than was reserved ({@link keepLargerReserved}): that
        // money may have left, so the reservation grows to it whatever the limit. The saga
        // awaits no answer.
        return {
          outcome: 'accepted',
          events: [
            stamp({
              type: 'payout-budget-reserved',
              ...base,
              reserved: m(reservedMinor - held + amount.minor),
            }),
          ],
          effects: [],
        };
      }
      if (held !== undefined) {
        // Asked again for a payout that holds a reservation: granted, counted once.
        return {
          outcome: 'accepted',
          events: [],
          effects: [answer(true, reservedMinor - held)],
        };
      }
      if (reservedMinor + amount.minor > limit.minor) {
        return {
          outcome: 'accepted',
          events: [stamp({ type: 'payout-budget-refused', ...base, reserved: m(reservedMinor) })],
          effects: [answer(false, reservedMinor)],
        };
      }
      return {
        outcome: 'accepted',
        events: [
          stamp({
            type: 'payout-budget-reserved',
            ...base,
            reserved: m(reservedMinor + amount.minor),
          }),
        ],
        effects: [answer(true, reservedMinor)],
      };
    }
    case 'release-payout-budget': {
      const held = state.status === 'open' ? state.reservations[command.payoutId] : undefined;
      if (state.status !== 'open' || held === undefined)
        return { outcome: 'ignored', reason: 'NOTHING_RESERVED', events: [], effects: [] };
      return {
        outcome: 'accepted',
        events: [
          stamp({
            type: 'payout-budget-released',
            commandId: command.commandId,
            payoutId: command.payoutId,
            amount: { minor: held, currency: state.currency },
            reserved: { minor: state.reservedMinor - held, currency: state.currency },
          }),
        ],
        effects: [],
      };
    }
    default:
      return unhandled(command, 'command');
  }
}

export function evolveBudget(state: BudgetState, event: PayoutBudgetEvent): BudgetState {
  const version = event.version;
  switch (event.type) {
    case 'payout-budget-reserved':
    case 'payout-budget-refused': {
      const base: OpenBudget =
        state.status === 'open'
          ? state
          : {
              status: 'open',
              version,
              budgetId: event.budgetId,
              merchant: event.merchant,
              currency: event.amount.currency,
              day: event.day,
              reservedMinor: 0,
              reservations: {},
            };
      if (event.type === 'payout-budget-refused') return { ...base, version };
      return {
        ...base,
        version,
        reservedMinor: event.reserved.minor,
        reservations: { ...base.reservations, [event.payoutId]: event.amount.minor },
      };
    }
    case 'payout-budget-released': {
      if (state.status !== 'open') return { ...state, version };
      const { [event.payoutId]: _gone, ...reservations } = state.reservations;
      return { ...state, version, reservedMinor: event.reserved.minor, reservations };
    }
    case 'payout-budget-command-rejected':
      return { ...state, version: Math.max(state.version, version) };
    default:
      return unhandled(event, 'event');
  }
}

/** The budget's rejection event (for commands the decider never saw). */
export function budgetRejection(args: RejectionArgs & { budgetId: string }): PayoutBudgetEvent {
  return {
    type: 'payout-budget-command-rejected',
    budgetId: args.budgetId,
    ...rejectionFields(args),
  };
}

// ---- the asking side: one rule for every money-out saga (payouts, transfers) ---------------

/** What a saga records of its reservation: held (from the request until paid), and on which day. */
export interface BudgetHold {
  readonly merchant: MerchantRef;
  readonly amount: Money;
  /** The reservation is held (until released on a final non-payment). */
  readonly reserved?: true;
  /** The UTC day whose budget it draws on. */
  readonly budgetDay?: string;
}

/** Reserve `amount` on today's (UTC) budget of the endpoint for saga `sagaId`. */
export function reserveBudget(
  sagaId: string,
  merchant: MerchantRef,
  amount: Money,
  now: string,
): Extract<BudgetRequest, { type: 'reserve-budget' }> {
  return { type: 'reserve-budget', payoutId: sagaId, merchant, amount, day: utcDay(now) };
}

/**
 * An operation that ended without paying (declined, failed: its final non-payment) gives its
 * reservation back; one that paid, or whose outcome is unknown (it may have paid), keeps it, so
 * this is called from the declined and failed outcomes only.
 */
export function releaseOnNoPayment(sagaId: string, hold: BudgetHold): BudgetRequest[] {
  return hold.reserved && hold.budgetDay !== undefined
    ? [
        {
          type: 'release-budget',
          payoutId: sagaId,
          merchant: hold.merchant,
          currency: hold.amount.currency,
          day: hold.budgetDay,
        },
      ]
    : [];
}

/**
 * The gateway reports the operation paid another amount than asked (`amount-mismatch`, alerted):
 * the reservation keeps the larger of the two, so a payout of 4,000 paid as 9,000 leaves the
 * day's budget 9,000 less, not 4,000. A smaller amount keeps the requested one reserved (until a
 * person settles it); another currency draws on another budget altogether and changes nothing
 * here.
 */
export function keepLargerReserved(
  sagaId: string,
  hold: BudgetHold,
  reported: Money,
): BudgetRequest[] {
  return hold.reserved &&
    hold.budgetDay !== undefined &&
    reported.currency === hold.amount.currency &&
    reported.minor > hold.amount.minor
    ? [
        {
          type: 'reserve-budget',
          payoutId: sagaId,
          merchant: hold.merchant,
          amount: reported,
          day: hold.budgetDay,
        },
      ]
    : [];
}

/**
 * The gateway request of an operation that must first reserve its amount: written held, then
 * published by the granted answer ({@link oneStepBudgetAnswer}); never published when refused.
 */
export function sendWhenReserved<Request extends { requestId: string }>(
  request: Request,
  sagaId: string,
  merchant: MerchantRef,
  amount: Money,
  now: string,
): [
  { type: 'send-gateway-request'; request: Request; held: true },
  Extract<BudgetRequest, { type: 'reserve-budget' }>,
] {
  return [
    { type: 'send-gateway-request', request, held: true },
    reserveBudget(sagaId, merchant, amount, now),
  ];
}

/** Why the budget refused (the fields of every event that reports a daily-limit refusal). */
export interface DailyLimitRefusal {
  readonly reason: 'DAILY_PAYOUT_LIMIT_EXCEEDED';
  readonly message: string;
  readonly reservedToday: Money;
  readonly dailyLimit: Money;
}

/** The budget's answer for an operation of `amount` on `day`: granted, or refused with why. */
export function answerOfBudget(
  answer: PayoutBudgetAnswerCommand,
  amount: Money,
  day: string,
): { granted: true } | { granted: false; refusal: DailyLimitRefusal } {
  if (answer.granted) return { granted: true };
  return {
    granted: false,
    refusal: {
      reason: 'DAILY_PAYOUT_LIMIT_EXCEEDED',
      message: `${day}: ${answer.reservedMinor} of ${answer.limit.minor} already reserved, ${amount.minor} more would exceed the daily limit`,
      reservedToday: { minor: answer.reservedMinor, currency: amount.currency },
      dailyLimit: answer.limit,
    },
  };
}

/**
 * A one-step operation's budget answer (a one-step payout, a payout form, a transfer: its request
 * written held with the reservation): granted → its held request is published, no event (the
 * requested event already said it); refused → `refused(refusal)`, final, nothing sent. Undefined
 * when `hold` awaits no answer (the caller refuses the command).
 */
export function oneStepBudgetAnswer<Draft>(
  answer: PayoutBudgetAnswerCommand,
  hold: BudgetHold & { readonly inFlight?: HeldOperation },
  refused: (refusal: DailyLimitRefusal, op: HeldOperation) => Draft,
): { drafts: Draft[]; effects: PublishHeldRequest[] } | undefined {
  const op = hold.inFlight;
  if (!hold.reserved || hold.budgetDay === undefined || op?.stage !== 'requested') return undefined;
  const outcome = answerOfBudget(answer, hold.amount, hold.budgetDay);
  return outcome.granted
    ? { drafts: [], effects: [{ type: 'publish-held-request', requestId: op.requestId }] }
    : { drafts: [refused(outcome.refusal, op)], effects: [] };
}

/** The operation whose request waits held: the command that caused it, its request id. */
interface HeldOperation {
  readonly commandId: string;
  readonly requestId: string;
  readonly stage: string;
}
