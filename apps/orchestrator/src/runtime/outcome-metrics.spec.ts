import type { GatewayCallback, GatewayResult } from '@payments/contracts';
import { register } from 'prom-client';
import type { SagaEvent } from './flow';
import {
  countCommitted,
  type GatewayAnswer,
  gatewayAnswerOf,
  moneyMoved,
  observeTimeToTruth,
  OUTCOME_METRIC,
  outcomeMetrics,
} from './outcome-metrics';
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

// ---- time to truth -------------------------------------------------------------------------------

const PAYMENT = '3dcd0000-0000-4000-8000-000000000000';
const REQUEST = '7f0c0000-0000-4000-8000-000000000000';
const T0 = '2026-01-01T00:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(T0) + ms);

const result = (
  operation: GatewayResult['operation'],
  answeredAt: string | undefined,
  kind: 'accepted' | 'unknown' | 'not-sent' = 'accepted',
): GatewayResult => ({
  requestId: REQUEST,
  paymentId: PAYMENT,
  operation,
  attempt: 1,
  result:
    kind === 'accepted'
      ? { kind, report: { status: 'approved' } }
      : kind === 'unknown'
        ? { kind, reason: 'timeout' }
        : { kind, reason: 'rate limited', retryAt: T0 },
  completedAt: at(5_000).toISOString(),
  ...(answeredAt === undefined ? {} : { answeredAt }),
});

const callback = (source: GatewayCallback['source'], receivedAt: string): GatewayCallback => ({
  kind: 'callback',
  notificationId: 'n1',
  paymentId: PAYMENT,
  clientOrderId: PAYMENT,
  source,
  report: { status: 'approved', gatewayOrderId: 'g1' },
  receivedAt,
});

/** A state with `operation` in flight where the card-payment, payout and transfer flows keep it. */
const inFlight = (operation: string) => ({ status: 'processing', inFlight: { operation } });

/** The histogram's observations: { 'flow,operation,source': [count, sum] }. */
async function timings(): Promise<Record<string, [number, number]>> {
  const metric = register.getSingleMetric(OUTCOME_METRIC.timeToTruth);
  if (!metric) throw new Error('time to truth not registered');
  const out: Record<string, [number, number]> = {};
  for (const v of (await metric.get()).values) {
    const { flow, operation, source } = v.labels;
    const key = `${String(flow)},${String(operation)},${String(source)}`;
    const entry = out[key] ?? [0, 0];
    // A histogram's values name their series (_bucket, _sum, _count).
    const series = (v as { metricName?: string }).metricName ?? '';
    if (series.endsWith('_count')) entry[0] = v.value;
    if (series.endsWith('_sum')) entry[1] = Math.round(v.value * 1000) / 1000;
    out[key] = entry;
  }
  return out;
}

describe('time to truth', () => {
  beforeEach(() => register.resetMetrics());

  it("takes a gateway result's answeredAt and a callback's receivedAt, with the operation answered", () => {
    expect(
      gatewayAnswerOf({ kind: 'gateway-result', result: result('sale', T0) }, inFlight('sale')),
    ).toEqual({ at: T0, source: 'reply', operation: 'sale' });
    // A status reply is about the operation in flight, not about "status".
    expect(
      gatewayAnswerOf({ kind: 'gateway-result', result: result('status', T0) }, inFlight('void')),
    ).toEqual({ at: T0, source: 'status', operation: 'void' });
    expect(
      gatewayAnswerOf(
        { kind: 'callback', callback: callback('server-callback', T0) },
        inFlight('payout'),
      ),
    ).toEqual({ at: T0, source: 'callback', operation: 'payout' });
    expect(
      gatewayAnswerOf(
        { kind: 'callback', callback: callback('browser-return', T0) },
        { cardRefRequest: { operation: 'create-card-ref' } },
      ),
    ).toEqual({ at: T0, source: 'browser-return', operation: 'create-card-ref' });
    expect(
      gatewayAnswerOf({ kind: 'callback', callback: callback('server-callback', T0) }, {}),
    ).toEqual({ at: T0, source: 'callback', operation: 'other' });
  });

  it('finds no answer in what the gateway did not answer: lost or refused requests, commands, hints, timers', () => {
    const state = inFlight('sale');
    expect(
      gatewayAnswerOf({ kind: 'gateway-result', result: result('sale', undefined) }, state),
    ).toBeUndefined();
    for (const kind of ['unknown', 'not-sent'] as const) {
      expect(
        gatewayAnswerOf({ kind: 'gateway-result', result: result('sale', undefined, kind) }, state),
      ).toBeUndefined();
    }
    expect(
      gatewayAnswerOf(
        {
          kind: 'command',
          command: { type: 'sale', commandId: 'c', sagaId: PAYMENT, endpointId: 'e', body: {} },
        },
        state,
      ),
    ).toBeUndefined();
    expect(
      gatewayAnswerOf(
        {
          kind: 'status-check-hint',
          hint: {
            kind: 'status-check-hint',
            notificationId: 'n',
            paymentId: PAYMENT,
            reason: 'incomplete',
            receivedAt: T0,
          },
        },
        state,
      ),
    ).toBeUndefined();
    expect(
      gatewayAnswerOf({ kind: 'timer', timer: { kind: 'status-poll', payload: {} } }, state),
    ).toBeUndefined();
  });

  it('observes each answer once, from its own time to the commit, by flow, operation and source', async () => {
    const metrics = outcomeMetrics();
    const reply: GatewayAnswer = { at: at(0).toISOString(), source: 'reply', operation: 'sale' };
    const status: GatewayAnswer = {
      at: at(500).toISOString(),
      source: 'status',
      operation: 'void',
    };
    const paid: GatewayAnswer = {
      at: at(1_000).toISOString(),
      source: 'callback',
      operation: 'payout',
    };
    observeTimeToTruth(
      metrics,
      [
        // One answer, two events (accepted-by-gateway, approved): one observation.
        { flow: 'card-payment', event: event('accepted-by-gateway'), answer: reply },
        { flow: 'card-payment', event: event('approved', money(100, 'USD')), answer: reply },
        { flow: 'card-payment', event: event('voided'), answer: status },
        { flow: 'payout', event: event('paid-out', money(900, 'EUR')), answer: paid },
        // Events reporting no gateway answer (a command's, a timer's, a lost reply's): nothing.
        { flow: 'card-payment', event: event('operation-requested') },
        { flow: 'card-payment', event: event('outcome-unknown') },
        { flow: 'transfer', event: event('transfer-requested') },
      ],
      at(2_000),
    );
    expect(await timings()).toEqual({
      'card-payment,sale,reply': [1, 2],
      'card-payment,void,status': [1, 1.5],
      'payout,payout,callback': [1, 1],
    });
  });

  it('records nothing when no event reports an answer, and never a negative time', async () => {
    const metrics = outcomeMetrics();
    observeTimeToTruth(
      metrics,
      [{ flow: 'card-payment', event: event('operation-requested') }],
      at(1_000),
    );
    expect(await timings()).toEqual({});
    // The answer's host clock ahead of ours: counted as 0.
    const ahead: GatewayAnswer = {
      at: at(3_000).toISOString(),
      source: 'reply',
      operation: 'sale',
    };
    observeTimeToTruth(
      metrics,
      [{ flow: 'card-payment', event: event('approved'), answer: ahead }],
      at(1_000),
    );
    expect(await timings()).toEqual({ 'card-payment,sale,reply': [1, 0] });
  });
});
