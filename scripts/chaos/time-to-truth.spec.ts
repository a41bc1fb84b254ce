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

  it("reads a ledger time after the sandbox's clock moved back to the wall clock", () => {
    const advances = [{ wallAt: T0, seconds: 601 }];
    expect(wallTimeOf(T0 - 5_000, advances)).toBe(T0 - 5_000);
    expect(wallTimeOf(T0 + 601_000 + 2_000, advances)).toBe(T0 + 2_000);
  });
});

describe('status queries against the gateway budget', () => {
  const metrics = (n: number) =>
    [
      '# TYPE gateway_adapter_calls_total counter',
      `gateway_adapter_calls_total{operation="v2/status",outcome="accepted",endpoint="1110"} ${n}`,
      'gateway_adapter_calls_total{operation="v2/sale",outcome="accepted",endpoint="1110"} 99',
    ].join('\n');

  it('counts the status calls per endpoint', () => {
    expect(statusCallsOf(metrics(7))).toEqual(new Map([['1110', 7]]));
  });

  it('sums the replicas per window and fails a window above budget × seconds + burst', () => {
    const reading = (at: number, n: number) => ({ at, counts: statusCallsOf(metrics(n)) });
    const within = new Map([
      ['a#0', [reading(T0, 0), reading(T0 + 1_000, 2)]],
      ['a#1', [reading(T0, 0), reading(T0 + 1_000, 2)]],
    ]);
    expect(statusBudgetExceeded(within, 4, 1).problems).toEqual([]);
    const above = new Map([
      ['a#0', [reading(T0, 0), reading(T0 + 1_000, 4)]],
      ['a#1', [reading(T0, 10), reading(T0 + 1_000, 2)]], // restarted: its counter began again
    ]);
    const result = statusBudgetExceeded(above, 4, 1);
    expect(result.problems).toHaveLength(1);
    expect(result.maxPerSecond).toBe(6);
  });
});
