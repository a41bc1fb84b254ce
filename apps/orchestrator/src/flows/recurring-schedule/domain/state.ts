import type { CardRef, MerchantRef, Money, ScheduleRule } from '@payments/contracts';

/** What a schedule charges, whom and when: fixed at creation except the amount (update-schedule). */
export interface ScheduleTerms {
  readonly scheduleId: string;
  readonly merchant: MerchantRef;
  readonly cardRef: CardRef;
  readonly amount: Money;
  readonly description: string;
  readonly rule: ScheduleRule;
}

/** A cycle's rebill payment in flight (started, no final outcome yet). */
export interface Charge {
  readonly cycle: number;
  readonly attempt: number;
  readonly paymentId: string;
  readonly amount: Money;
}

/** A declined cycle being retried: `declines` so far, at the amount the cycle was first charged. */
export interface Dunning {
  readonly cycle: number;
  readonly amount: Money;
  readonly declines: number;
}

interface Base {
  readonly version: number;
  readonly terms: ScheduleTerms;
}

/**
 * The schedule saga's state. At most one charge is in flight at a time, so cycles are charged in
 * order and each at most once (a charge's ids derive from schedule, cycle and attempt).
 */
export type ScheduleState =
  | { readonly status: 'initial'; readonly version: number }
  /** `nextCycle`: the cycle its timer will start (or the one in flight, `charge`). */
  | (Base & {
      readonly status: 'active';
      readonly nextCycle: number;
      readonly charge: Charge | null;
    })
  /** A cycle was declined; dunning retries run (`charge`: the retry in flight). */
  | (Base & {
      readonly status: 'past-due';
      readonly dunning: Dunning;
      readonly charge: Charge | null;
    })
  /** No charges; resume-schedule goes on from `nextCycle` by the skip rule. */
  | (Base & { readonly status: 'paused' | 'suspended'; readonly nextCycle: number })
  /** No more charges; a charge in flight when it was cancelled is still recorded. */
  | (Base & { readonly status: 'cancelled'; readonly charge: Charge | null })
  | (Base & { readonly status: 'completed' });

export type ScheduleStatus = ScheduleState['status'];

export const initialScheduleState: ScheduleState = { status: 'initial', version: 0 };

/** A charge timer: start `cycle` (attempt 1) or its dunning retry (attempt > 1). */
export interface ChargeTimer {
  readonly cycle: number;
  readonly attempt: number;
}

export const CHARGE_TIMER = 'charge';

export interface SchedulePolicy {
  /** Delay before each dunning retry after a decline (e.g. 1, 3 and 7 days); then suspended. */
  readonly retryDelaysMs: readonly number[];
}

export const DEFAULT_SCHEDULE_POLICY: SchedulePolicy = {
  retryDelaysMs: [1, 3, 7].map((days) => days * 86_400_000),
};
