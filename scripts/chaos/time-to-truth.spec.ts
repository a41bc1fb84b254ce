import type { LedgerEntry } from '../stack/sandbox-controls';
import type { SagaEvent } from './flows/companion';
import {
  statusBudgetExceeded,
  statusCallsOf,
  type TimedEvent,
  timeToTruth,
  wallTimeOf,
} from './time-to-truth';

/** The population phase's checks on hand-made timings: each must be able to say "too late". */
const T0 = Date.parse('2026-11-29T03:00:00.000Z');
const saga = '6f1c7d0e-3c1a-4a57-9d0b-2f5c0b6f8e11';
const USD = (minor: number) => ({ minor, currency: 'USD' });
const charged = (at: number): LedgerEntry => ({
  seq: 1,
  at,
  login: 'm',
  clientOrderId: saga,
  orderId: '1',
  movement: 'charged',
  amountMinor: 500,
  currency: 'USD',
});
const approvedAt = (at: number): TimedEvent[] => [
  { event: { type: 'operation-requested', version: 1 } as unknown as SagaEvent, ceId: 'a', at: T0 },
  {
    event: { type: 'approved', version: 2, amount: USD(500) } as unknown as SagaEvent,
    ceId: 'b',
    at,
  },
];
const bounds = { callbackP99Ms: 10_000, lostBoundMs: 45_000 };
const families = { 'operation-requested': 'card-payment', approved: 'card-payment' };

describe('timeToTruth', () => {
  it('times a movement to the event reporting it, by whether a callback arrived', () => {
    const result = timeToTruth({
      ledger: [charged(T0 + 1_000)],
      events: new Map([[saga, approvedAt(T0 + 3_000)]]),
      callbacksDelivered: new Map([[saga, [T0 + 2_000]]]),
      advances: [],
      bounds,
      families,
    });
    expect(result.byFamily['card-payment'].arrived).toMatchObject({ count: 1, maxMs: 2_000 });
    expect(result.problems).toEqual([]);
  });

  it('fails a p99 over the bound when callbacks arrive, and a late movement when all were lost', () => {
    const late = { ledger: [charged(T0)], events: new Map([[saga, approvedAt(T0 + 50_000)]]) };
    expect(
      timeToTruth({
        ...late,
        callbacksDelivered: new Map([[saga, [T0 + 2_000]]]),
        advances: [],
        bounds,
        families,
      }).problems,
    ).toMatchObject([{ paymentId: 'card-payment', detail: expect.stringContaining('p99 50.0 s') }]);
    expect(
      timeToTruth({
        ...late,
        // A callback delivered before the movement is not about it.
        callbacksDelivered: new Map([[saga, [T0 - 1_000]]]),
        advances: [],
        bounds,
        families,
      }).problems,
    ).toMatchObject([{ paymentId: saga, detail: expect.stringContaining('every callback lost') }]);
  });

  it('times a movement made during a disruption (or its grace) apart, not held to the bounds', () => {
    const late = {
      ledger: [charged(T0)],
      events: new Map([[saga, approvedAt(T0 + 50_000)]]),
      callbacksDelivered: new Map([[saga, [T0 + 2_000]]]),
      advances: [],
      bounds,
      families,
    };
    // The broker restarted from T0 - 20 s to T0 - 5 s: T0 is inside its 30 s grace.
    const during = timeToTruth({ ...late, disruptions: [{ from: T0 - 20_000, to: T0 - 5_000 }] });
    expect(during.problems).toEqual([]);
    expect(during.byFamily['card-payment']).toEqual({});
    expect(during.disrupted).toMatchObject({ count: 1, maxMs: 50_000 });
    expect(during.slowest).toEqual([]);
    expect(during.slowestDisrupted).toEqual([{ paymentId: saga, detail: 'charged 500 50.0 s' }]);
    expect(during).toMatchObject({ judged: 0, judgedWithCallback: 0 });
    // Past the grace the same movement is judged again.
    const after = timeToTruth({ ...late, disruptions: [{ from: T0 - 60_000, to: T0 - 31_000 }] });
    expect(after.problems).toHaveLength(1);
    expect(after.disrupted).toBeUndefined();
    expect(after.slowestDisrupted).toBeUndefined();
    expect(after.slowest).toEqual([{ paymentId: saga, detail: 'charged 500 50.0 s' }]);
    // Judged, but a disruption began while it waited for its report: the slowest line says so.
    const before = timeToTruth({ ...late, disruptions: [{ from: T0 + 14_000, to: T0 + 26_000 }] });
    expect(before).toMatchObject({ judged: 1, judgedWithCallback: 1 });
    expect(before.slowest).toEqual([
      { paymentId: saga, detail: 'charged 500 50.0 s, a disruption began 14.0 s after it' },
    ]);
    expect(after).toMatchObject({ judged: 1, judgedWithCallback: 1 });
  });

  it('a movement whose every callback was lost is timed apart when a disruption begins within its own bound (the lost-callback one), not only within the callback bound', () => {
    const lost = {
      ledger: [charged(T0)],
      events: new Map([[saga, approvedAt(T0 + 200_000)]]),
      callbacksDelivered: new Map<string, number[]>(),
      advances: [],
      bounds,
      families,
    };
    // A failover 20 s after it: within the lost-callback bound, so not held to it.
    const soon = timeToTruth({ ...lost, disruptions: [{ from: T0 + 20_000, to: T0 + 30_000 }] });
    expect(soon).toMatchObject({ judged: 0, problems: [] });
    expect(soon.disrupted).toMatchObject({ count: 1 });
    // Past that bound: judged, and late.
    const later = T0 + bounds.lostBoundMs + 1_000;
    const past = timeToTruth({ ...lost, disruptions: [{ from: later, to: later + 10_000 }] });
    expect(past).toMatchObject({ judged: 1 });
    expect(past.problems).toHaveLength(1);
    // With a callback the lead stays the callback bound: 20 s before, judged.
    const arrived = timeToTruth({
      ...lost,
      callbacksDelivered: new Map([[saga, [T0 + 1_000]]]),
      disruptions: [{ from: T0 + 20_000, to: T0 + 30_000 }],
    });
    expect(arrived).toMatchObject({ judged: 1, judgedWithCallback: 1 });
  });

  it("reads a ledger time after the sandbox's clock moved back to the wall clock", () => {
    const advances = [{ wallAt: T0, seconds: 601 }];
    expect(wallTimeOf(T0 - 5_000, advances)).toBe(T0 - 5_000);
    expect(wallTimeOf(T0 + 601_000 + 2_000, advances)).toBe(T0 + 2_000);
  });
});

describe('status queries against the gateway budget', () => {
  const metrics = (n: number) =>
    [
      '# TYPE gateway_adapter_status_admissions_total counter',
      `gateway_adapter_status_admissions_total{endpoint="1110",priority="urgent",outcome="admitted"} ${n - 1}`,
      'gateway_adapter_status_admissions_total{endpoint="1110",priority="routine",outcome="admitted"} 1',
      'gateway_adapter_status_admissions_total{endpoint="1110",priority="urgent",outcome="held"} 50',
      // Counted when a call ends (a slow answer lands in a later window): not read.
      'gateway_adapter_calls_total{operation="v2/status",outcome="accepted",endpoint="1110"} 99',
    ].join('\n');
  const reading = (at: number, n: number, until = at + 100) => ({
    at,
    until,
    counts: statusCallsOf(metrics(n)),
  });

  it('counts the status queries admitted to the gateway per endpoint, every class', () => {
    expect(statusCallsOf(metrics(7))).toEqual(new Map([['1110', 7]]));
  });

  it('judges each replica against its share: budget and burst over the replicas, over the longest its window can be', () => {
    // Budget 4/s, burst 2, two replicas: 2/s + 1 each.
    const within = new Map([
      ['a#0', [reading(T0, 0), reading(T0 + 1_000, 3)]],
      ['a#1', [reading(T0, 0), reading(T0 + 1_000, 3)]],
    ]);
    expect(statusBudgetExceeded(within, 4, 2)).toEqual({ problems: [], maxPerSecond: 6 });
    const above = new Map([
      ['a#0', [reading(T0, 0), reading(T0 + 1_000, 4)]],
      ['a#1', [reading(T0, 10), reading(T0 + 1_000, 2)]], // restarted: its counter began again
    ]);
    const result = statusBudgetExceeded(above, 4, 2);
    expect(result.problems).toEqual([
      expect.objectContaining({ paymentId: '1110', detail: expect.stringMatching(/^a#0: 4 /) }),
    ]);
  });

  it('a reading answered late or not at all is no window: a slow /metrics under load is not a burst of queries', () => {
    // One replica, budget 2/s + 1. The second round's read answered 900 ms after it began: 4 queries in ≤ 1.9 s is
    // within 2/s + 1; a stale reading (no answer) is skipped and the next one judged over both.
    const late = new Map([['a#0', [reading(T0, 0), reading(T0 + 1_000, 4, T0 + 1_900)]]]);
    expect(statusBudgetExceeded(late, 2, 1).problems).toEqual([]);
    const stale = new Map([
      [
        'a#0',
        [
          reading(T0, 0),
          { at: T0 + 1_000, stale: true, counts: statusCallsOf(metrics(1)) },
          reading(T0 + 2_000, 5),
        ],
      ],
    ]);
    expect(statusBudgetExceeded(stale, 2, 1).problems).toEqual([]);
    // Without the stale mark the 4 queries of two seconds count in one.
    const unmarked = new Map([
      ['a#0', [reading(T0, 0), reading(T0 + 1_000, 1), reading(T0 + 2_000, 5)]],
    ]);
    expect(statusBudgetExceeded(unmarked, 2, 1).problems).toHaveLength(1);
  });
});
