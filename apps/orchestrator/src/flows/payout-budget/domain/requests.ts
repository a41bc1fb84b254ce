import type { MerchantRef, Money } from '@payments/contracts';

/**
 * The money-out kit's vocabulary: what a money-out saga (a payout, a transfer) asks of its
 * endpoint's daily budget, and the day a budget belongs to. The budget itself is the
 * payout-budget flow (`budget.ts`).
 */

/**
 * A money-out saga's calls on its endpoint's daily budget (the flow binding turns them into
 * `reserve-payout-budget` / `release-payout-budget` child commands). `payoutId`: the asking saga.
 */
export type BudgetRequest =
  /** Ask the endpoint's budget of `day` for the amount (answered in the same transaction). */
  | {
      type: 'reserve-budget';
      payoutId: string;
      merchant: MerchantRef;
      amount: Money;
      day: string;
    }
  /** Give the reservation back: the operation paid nothing. */
  | {
      type: 'release-budget';
      payoutId: string;
      merchant: MerchantRef;
      currency: string;
      day: string;
    };

/** Publish the request a decision wrote held (the runtime's `publish-held-request`). */
export interface PublishHeldRequest {
  readonly type: 'publish-held-request';
  readonly requestId: string;
}

/** The UTC calendar day of an instant. */
export function utcDay(iso: string): string {
  return new Date(iso).toISOString().slice(0, 10);
}
