import { z } from 'zod';
import { CurrencyCode, Instant, MerchantRef, Uuid } from './primitives';

/**
 * Control totals that prove completeness (issue #35 item 2). Every money event (a flow's
 * `moneyEvents`: approved, captured, returned, paid-out, transferred) carries `merchantSeq`, a
 * per-merchant-endpoint sequence number assigned in the transaction that writes it: 1, 2, 3, …
 * without gaps across all of that endpoint's money events. Once a merchant's day is over (in its
 * time zone, `MERCHANT_TIME_ZONES`), `day-closed` states the count and sum of that day's money
 * events per type and currency and the highest sequence number among them: a consumer that tallies
 * what it received compares (the SDK's `checkDayTally`) and checks its sequence numbers have no gap.
 */
export const MerchantSeq = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/** A sum of minor units as decimal digits: a day's total may pass 2^53, and is never a float. */
export const MinorSum = z.string().regex(/^\d{1,30}$/, 'minor units as decimal digits');

export const DayClosedTotal = z.strictObject({
  eventType: z.string().min(1).max(64),
  currency: CurrencyCode,
  count: z.number().int().min(0),
  sumMinor: MinorSum,
});
export type DayClosedTotal = z.infer<typeof DayClosedTotal>;

export const DayClosedEvent = z.strictObject({
  type: z.literal('day-closed'),
  /** The close's id (one per endpoint and day: a repeated close re-sends the same). */
  closeId: Uuid,
  merchant: MerchantRef,
  /** The merchant's calendar day (YYYY-MM-DD) in `timeZone`. */
  day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  /** IANA time zone of the day boundary (`UTC` unless MERCHANT_TIME_ZONES names another). */
  timeZone: z.string().min(1).max(64),
  /** The day as instants: [from, to). */
  from: Instant,
  to: Instant,
  /** Money events of the day per type and currency (types with none are left out). */
  totals: z.array(DayClosedTotal),
  /** The number of the day's money events (the totals' counts summed). */
  count: z.number().int().min(0),
  /** The highest `merchantSeq` among the day's money events (0: none yet, ever). */
  lastMerchantSeq: z.number().int().min(0),
  occurredAt: Instant,
});
export type DayClosedEvent = z.infer<typeof DayClosedEvent>;

/**
 * Events of `payments.events.v1` that belong to no flow family (no saga): the day's control
 * totals. The SDK's catalogue and the AsyncAPI document include them with the families' events.
 */
export const CONTROL_EVENT_SCHEMAS = { 'day-closed': DayClosedEvent } as const;
