import type { DayClosedEvent } from '@payments/contracts';
import type { OutcomeEvent } from './catalogue';
import { sagaIdOf } from './catalogue';

/** One type and currency where what a consumer received differs from the `day-closed` totals. */
export interface TallyDifference {
  readonly eventType: string;
  readonly currency: string;
  readonly expected: { readonly count: number; readonly sumMinor: string };
  readonly received: { readonly count: number; readonly sumMinor: string };
}

/** The check of a consumer's tally against one `day-closed` event. */
export interface DayTallyVerdict {
  /** Every type and currency agrees and no sequence number is missing. */
  readonly ok: boolean;
  readonly differences: readonly TallyDifference[];
  /**
   * The endpoint's `merchantSeq` numbers up to the day's `lastMerchantSeq` this consumer never
   * received, counted from the first it did receive (or from `firstSeq`).
   */
  readonly missingSeqs: readonly number[];
  /** A line per difference and gap, for a log or an alert; empty when ok. */
  readonly explanation: readonly string[];
}

interface Counted {
  count: number;
  sum: bigint;
}

interface MoneyEvent {
  type: string;
  occurredAt: string;
  merchantSeq: number;
  amount: { minor: number; currency: string };
}

function isMoneyEvent(event: object): event is MoneyEvent {
  const e = event as Partial<MoneyEvent>;
  return typeof e.merchantSeq === 'number' && e.amount !== undefined;
}

/**
 * A consumer's tally of money events, to prove against `day-closed` (issue #35) that it received
 * every one and that its totals equal the orchestrator's: feed it every event of
 * `payments.events.v1` you receive (`add`, duplicates included: each `merchantSeq` counts once),
 * then `check` each `day-closed`. A money event names its merchant only through its saga (the
 * first event of a payment, payout or transfer carries `merchant`), so the tally learns each
 * saga's endpoint from the events that carry one; `endpointOf` tells it for sagas it met before.
 */
export class DayTally {
  private readonly endpointOfSaga = new Map<string, string>();
  /** endpoint → seq → the event (each sequence number once). */
  private readonly byEndpoint = new Map<string, Map<number, MoneyEvent>>();
  /** Money events whose saga's endpoint is not known yet (kept until it is). */
  private readonly pending = new Map<string, MoneyEvent[]>();

  constructor(
    private readonly options: { readonly firstSeq?: Readonly<Record<string, number>> } = {},
  ) {}

  /** Tells the tally a saga's endpoint (one it met before this tally existed). */
  endpointOf(sagaId: string, endpointId: string): void {
    this.endpointOfSaga.set(sagaId, endpointId);
    const waiting = this.pending.get(sagaId);
    this.pending.delete(sagaId);
    for (const event of waiting ?? []) this.record(endpointId, event);
  }

  add(event: OutcomeEvent): void {
    if (event.type === 'day-closed') return;
    const sagaId = sagaIdOf(event);
    const merchant = (event as { merchant?: { endpointId?: string } }).merchant;
    if (sagaId !== undefined && merchant?.endpointId !== undefined)
      this.endpointOf(sagaId, merchant.endpointId);
    if (!isMoneyEvent(event) || sagaId === undefined) return;
    const endpointId = this.endpointOfSaga.get(sagaId);
    if (endpointId === undefined)
      this.pending.set(sagaId, [...(this.pending.get(sagaId) ?? []), event]);
    else this.record(endpointId, event);
  }

  private record(endpointId: string, event: MoneyEvent): void {
    const seen = this.byEndpoint.get(endpointId) ?? new Map<number, MoneyEvent>();
    seen.set(event.merchantSeq, event);
    this.byEndpoint.set(endpointId, seen);
  }

  check(closed: DayClosedEvent): DayTallyVerdict {
    const { endpointId } = closed.merchant;
    const from = Date.parse(closed.from);
    const to = Date.parse(closed.to);
    const seen = this.byEndpoint.get(endpointId) ?? new Map<number, MoneyEvent>();
    const received = new Map<string, Counted & { eventType: string; currency: string }>();
    for (const event of seen.values()) {
      const at = Date.parse(event.occurredAt);
      if (at < from || at >= to) continue;
      const key = `${event.type} ${event.amount.currency}`;
      const row = received.get(key) ?? {
        eventType: event.type,
        currency: event.amount.currency,
        count: 0,
        sum: 0n,
      };
      row.count += 1;
      row.sum += BigInt(event.amount.minor);
      received.set(key, row);
    }
    const differences: TallyDifference[] = [];
    const keys = new Set([
      ...received.keys(),
      ...closed.totals.map((t) => `${t.eventType} ${t.currency}`),
    ]);
    for (const key of [...keys].sort()) {
      const expected = closed.totals.find((t) => `${t.eventType} ${t.currency}` === key);
      const got = received.get(key);
      const [eventType = '', currency = ''] = key.split(' ');
      const exp = { count: expected?.count ?? 0, sumMinor: expected?.sumMinor ?? '0' };
      const rec = { count: got?.count ?? 0, sumMinor: (got?.sum ?? 0n).toString() };
      if (exp.count !== rec.count || BigInt(exp.sumMinor) !== BigInt(rec.sumMinor))
        differences.push({ eventType, currency, expected: exp, received: rec });
    }
    const seqs = [...seen.keys()];
    const first =
      this.options.firstSeq?.[endpointId] ?? (seqs.length === 0 ? 1 : Math.min(...seqs));
    const missingSeqs: number[] = [];
    for (let seq = first; seq <= closed.lastMerchantSeq; seq++)
      if (!seen.has(seq)) missingSeqs.push(seq);
    const explanation = [
      ...differences.map(
        (d) =>
          `${closed.day} ${endpointId} ${d.eventType} ${d.currency}: day-closed says ${d.expected.count} (${d.expected.sumMinor} minor), received ${d.received.count} (${d.received.sumMinor} minor)`,
      ),
      ...(missingSeqs.length === 0
        ? []
        : [`${endpointId}: merchantSeq never received: ${missingSeqs.join(', ')}`]),
    ];
    return { ok: explanation.length === 0, differences, missingSeqs, explanation };
  }
}
