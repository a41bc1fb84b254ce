import { type RejectionArgs, rejectionFields } from '../../../domain/rejection';
import { createHash } from 'node:crypto';
import type {
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
} from './model';

/**
 * The per-endpoint daily payout budget: one saga per (endpoint, currency, UTC day). Every
 * approval reserves its amount here in the transaction that approves it, so concurrent approvals
 * serialise on this saga's row lock and the sum of reservations never exceeds the day's limit,
 * whatever the interleaving. A payout that paid nothing (declined, failed) releases its
 * reservation; paid and unknown outcomes keep it (an unknown one may have paid).
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
      const held = state.status === 'open' ? state.reservations[payoutId] : undefined;
      if (held !== undefined) {
        // Asked again for a payout that holds a reservation: granted, counted once.
        return {
          outcome: 'accepted',
          events: [],
          effects: [answer(true, reservedMinor - held)],
        };
      }
      const m = (minor: number) => ({ minor, currency: amount.currency });
      const base = { commandId: command.commandId, merchant, day, payoutId, amount, limit };
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
    default: {
      const never: never = command;
      throw new Error(`unhandled command ${JSON.stringify(never)}`);
    }
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
    default: {
      const never: never = event;
      throw new Error(`unhandled event ${JSON.stringify(never)}`);
    }
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
