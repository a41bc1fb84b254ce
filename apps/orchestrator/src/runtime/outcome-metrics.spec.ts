import { register } from 'prom-client';
import type { SagaEvent } from './flow';
import { countCommitted, moneyMoved, OUTCOME_METRIC, outcomeMetrics } from './outcome-metrics';
import { FLOW_MODULES } from '../flows/registered-flows';

/** Every flow module's money events, by flow. */
const moneyEventsOf = (flow: string) =>
  FLOW_MODULES.find((module) => module.name === flow)?.moneyEvents ?? [];
const MONEY_MOVED_EVENT_TYPES = [...new Set(FLOW_MODULES.flatMap((module) => module.moneyEvents))];
const ANY_MONEY: readonly string[] = MONEY_MOVED_EVENT_TYPES;

const base = { version: 1, commandId: 'c', occurredAt: '2026-01-01T00:00:00.000Z' };
const event = (type: string, extra: object = {}): SagaEvent => ({ ...base, type, ...extra });
const money = (minor: number, currency: string) => ({ amount: { minor, currency } });

/** The counters' series as { 'label=value,…': value }. */
async function series(name: string): Promise<Record<string, number>> {
  const metric = register.getSingleMetric(name);
  if (!metric) throw new Error(`${name} not registered`);
  const { values } = await metric.get();
  return Object.fromEntries(
    values.map((v) => [
      Object.entries(v.labels)
        .map(([k, l]) => `${k}=${String(l)}`)
        .join(','),
      v.value,
    ]),
  );
}

describe('outcome metrics', () => {
  beforeEach(() => register.resetMetrics());

  it('says money moved for approved, captured, returned, paid-out and transferred only', () => {
    expect([...MONEY_MOVED_EVENT_TYPES].sort()).toEqual(
      ['approved', 'captured', 'paid-out', 'returned', 'transferred'].sort(),
    );
    for (const type of MONEY_MOVED_EVENT_TYPES) {
      expect(moneyMoved(event(type, money(2500, 'USD')), ANY_MONEY)).toEqual({
        minor: 2500,
        currency: 'USD',
      });
    }
    // Holds, requests, registrations and bookkeeping carry amounts but moved no money.
    for (const type of [
      'authorized',
      'voided',
      'hold-expired',
      'operation-requested',
      'payout-requested',
      'payout-registered',
      'transfer-requested',
      'cycle-charge-requested',
      'cycle-charged',
      'payout-budget-reserved',
    ]) {
      expect(moneyMoved(event(type, money(2500, 'USD')), ANY_MONEY)).toBeUndefined();
    }
    expect(moneyMoved(event('declined'), ANY_MONEY)).toBeUndefined();
  });

  it('takes integer minor units only (a malformed amount counts nothing)', () => {
    expect(moneyMoved(event('approved'), ANY_MONEY)).toBeUndefined();
    expect(moneyMoved(event('approved', money(25.5, 'USD')), ANY_MONEY)).toBeUndefined();
    expect(moneyMoved(event('approved', money(-1, 'USD')), ANY_MONEY)).toBeUndefined();
    expect(moneyMoved(event('approved', { amount: { minor: 100 } }), ANY_MONEY)).toBeUndefined();
  });

  it('counts every event by flow and type, and sums the money moved per flow, type and currency', async () => {
    const metrics = outcomeMetrics();
    countCommitted(
      metrics,
      [
        { flow: 'card-payment', event: event('operation-requested', money(1000, 'USD')) },
        { flow: 'card-payment', event: event('approved', money(1000, 'USD')) },
        { flow: 'card-payment', event: event('approved', money(250, 'USD')) },
        { flow: 'card-payment', event: event('approved', money(900, 'EUR')) },
        { flow: 'card-payment', event: event('authorized', money(5000, 'EUR')) },
        { flow: 'card-payment', event: event('captured', money(3000, 'EUR')) },
        { flow: 'card-payment', event: event('returned', money(100, 'USD')) },
        { flow: 'card-payment', event: event('approved', money(500, 'JPY')) },
        { flow: 'payout', event: event('paid-out', money(15000, 'USD')) },
        { flow: 'transfer', event: event('transferred', money(700, 'USD')) },
        { flow: 'recurring-schedule', event: event('cycle-charged', money(990, 'USD')) },
      ],
      moneyEventsOf,
    );
    expect(await series(OUTCOME_METRIC.events)).toEqual({
      'flow=card-payment,type=operation-requested': 1,
      'flow=card-payment,type=approved': 4,
      'flow=card-payment,type=authorized': 1,
      'flow=card-payment,type=captured': 1,
      'flow=card-payment,type=returned': 1,
      'flow=payout,type=paid-out': 1,
      'flow=transfer,type=transferred': 1,
      'flow=recurring-schedule,type=cycle-charged': 1,
    });
    expect(await series(OUTCOME_METRIC.moneyMoved)).toEqual({
      'flow=card-payment,type=approved,currency=USD': 1250,
      'flow=card-payment,type=approved,currency=EUR': 900,
      'flow=card-payment,type=approved,currency=JPY': 500,
      'flow=card-payment,type=captured,currency=EUR': 3000,
      'flow=card-payment,type=returned,currency=USD': 100,
      'flow=payout,type=paid-out,currency=USD': 15000,
      'flow=transfer,type=transferred,currency=USD': 700,
    });
  });

  it('uses no id, amount or free text as a label value', async () => {
    const metrics = outcomeMetrics();
    countCommitted(
      metrics,
      [
        {
          flow: 'card-payment',
          event: event('approved', {
            ...money(100, 'USD'),
            paymentId: '3dcd0000-0000-4000-8000-000000000000',
            requestId: '7f0c0000-0000-4000-8000-000000000000',
            card: { bin: '444444', lastFour: '4448', brand: 'VISA' },
            approvalCode: 'A1',
          }),
        },
      ],
      moneyEventsOf,
    );
    for (const name of Object.values(OUTCOME_METRIC)) {
      const { values } = await register.getSingleMetric(name)!.get();
      for (const v of values) {
        expect(Object.keys(v.labels).sort()).toEqual(
          name === OUTCOME_METRIC.events ? ['flow', 'type'] : ['currency', 'flow', 'type'],
        );
        for (const value of Object.values(v.labels)) {
          expect(['card-payment', 'approved', 'USD']).toContain(value);
        }
      }
    }
  });
});
