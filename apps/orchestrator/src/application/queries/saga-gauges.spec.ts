import { Logger } from '@nestjs/common';
import { register } from 'prom-client';
import type { Database } from '../../persistence/database';
import { Clock } from '../../runtime/clock';
import {
  type Query,
  readSagaGauges,
  SAGA_GAUGE,
  SAGA_GAUGE_CACHE_MS,
  SAGA_GAUGE_SQL,
  SagaGauges,
  sharedFor,
} from './saga-gauges';
import { PAYOUT_GAUGE_SQL } from '../../flows/payout/module';
import { SCHEDULE_GAUGE_SQL } from '../../flows/recurring-schedule/module';

/** Every gauge query: the runtime's and the flow modules'. */
const ALL_SQL = { ...SAGA_GAUGE_SQL, ...PAYOUT_GAUGE_SQL, ...SCHEDULE_GAUGE_SQL };
/** The flow modules' gauges the cases read. */
const GAUGE = {
  payoutsAwaitingApproval: 'orchestrator_payouts_awaiting_approval',
  scheduleChargesDue: 'orchestrator_schedule_charges_due',
  scheduleChargesFailed: 'orchestrator_schedule_charges_failed',
} as const;

/** A reading as the fixed gauges of before read it. */
function readings(r: Awaited<ReturnType<typeof readSagaGauges>>) {
  const one = (name: string) => r.flows[name]?.[0]?.value;
  const failed = (status: string) =>
    r.flows[GAUGE.scheduleChargesFailed]?.find((v) => v.labels?.status === status)?.value;
  return {
    unknownOutcomes: r.unknownOutcomes,
    oldestUnknownSeconds: r.oldestUnknownSeconds,
    payoutsAwaitingApproval: one(GAUGE.payoutsAwaitingApproval),
    scheduleChargesDue: one(GAUGE.scheduleChargesDue),
    scheduleChargesFailed: { 'past-due': failed('past-due'), suspended: failed('suspended') },
  };
}

const NOW = new Date('2026-03-01T12:00:00.000Z');

/** A fake database answering each gauge query with its rows, recording what was asked. */
function fakeQuery(rows: Partial<Record<keyof typeof ALL_SQL, object[]>>) {
  const calls: Array<{ sql: string; params: unknown[] }> = [];
  const query: Query = async <Row>(sql: string, params: unknown[]) => {
    calls.push({ sql, params });
    const key = (Object.keys(ALL_SQL) as Array<keyof typeof ALL_SQL>).find(
      (k) => ALL_SQL[k] === sql,
    );
    if (key === undefined) throw new Error(`unexpected query ${sql}`);
    return (rows[key] ?? []) as Row[];
  };
  return { query, calls };
}

class FakeClock extends Clock {
  at = NOW.getTime();
  override now(): Date {
    return new Date(this.at);
  }
}

async function value(name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = register.getSingleMetric(name);
  if (!metric) throw new Error(`${name} not registered`);
  const { values } = await metric.get();
  const found = values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  if (!found) throw new Error(`${name} has no series ${JSON.stringify(labels)}`);
  return found.value;
}

describe('saga gauges: the queries', () => {
  it('reads each gauge with one query and turns the rows into readings', async () => {
    const { query, calls } = fakeQuery({
      unknown: [{ n: 3, oldest: new Date(NOW.getTime() - 5_400_000) }],
      awaitingApproval: [{ n: 2 }],
      chargesDue: [{ n: 4 }],
      chargesFailed: [{ status: 'suspended', n: 1 }],
    });
    expect(readings(await readSagaGauges(query, NOW))).toEqual({
      unknownOutcomes: 3,
      oldestUnknownSeconds: 5400,
      payoutsAwaitingApproval: 2,
      scheduleChargesDue: 4,
      scheduleChargesFailed: { 'past-due': 0, suspended: 1 },
    });
    expect(calls.map((c) => c.params)).toEqual([
      ['status-poll'],
      ['status-poll'],
      ['payout', 'registered'],
      ['recurring-schedule', 'charge', NOW],
      ['recurring-schedule', ['past-due', 'suspended']],
    ]);
  });

  it('reads zero when nothing is unknown, awaiting, due or failed', async () => {
    const { query } = fakeQuery({
      unknown: [{ n: 0, oldest: null }],
      awaitingApproval: [{ n: 0 }],
    });
    expect(readings(await readSagaGauges(query, NOW))).toEqual({
      unknownOutcomes: 0,
      oldestUnknownSeconds: 0,
      payoutsAwaitingApproval: 0,
      scheduleChargesDue: 0,
      scheduleChargesFailed: { 'past-due': 0, suspended: 0 },
    });
  });

  it('never reports a negative age (an unknown-since ahead of the clock)', async () => {
    const { query } = fakeQuery({ unknown: [{ n: 1, oldest: new Date(NOW.getTime() + 1000) }] });
    expect((await readSagaGauges(query, NOW)).oldestUnknownSeconds).toBe(0);
  });

  it('reads unknown outcomes through the poll timers, never the whole sagas table', () => {
    expect(SAGA_GAUGE_SQL.unknown).toMatch(/s\.id IN \(SELECT t\.saga_id FROM timers t/);
    expect(SAGA_GAUGE_SQL.inFlight).toMatch(/s\.id IN \(SELECT t\.saga_id FROM timers t/);
  });

  it('reads operations in flight per flow, every hosted flow at 0 when it has none', async () => {
    const { query } = fakeQuery({
      inFlight: [
        { flow: 'card-payment', n: 7, oldest: new Date(NOW.getTime() - 90_000) },
        { flow: 'payout', n: 1, oldest: new Date(NOW.getTime() + 1000) }, // ahead: 0, not negative
        { flow: 'transfer', n: 2, oldest: null }, // no requestedAt where the flows keep it
      ],
    });
    const { inFlight } = await readSagaGauges(
      query,
      NOW,
      [],
      ['card-payment', 'payout', 'transfer', 'recurring-schedule'],
    );
    expect(inFlight).toEqual({
      'card-payment': { count: 7, oldestSeconds: 90 },
      payout: { count: 1, oldestSeconds: 0 },
      transfer: { count: 2, oldestSeconds: 0 },
      'recurring-schedule': { count: 0, oldestSeconds: 0 },
    });
  });
});

describe('saga gauges: shared readings', () => {
  it('shares one load between callers while it runs and for the ttl after it settled', async () => {
    let now = 0;
    let loads = 0;
    let release: (() => void) | undefined;
    const read = sharedFor(
      1000,
      () => now,
      () => {
        loads += 1;
        return new Promise<number>((resolve) => {
          release = () => resolve(loads);
        });
      },
    );
    const first = read();
    now = 5000; // still loading: a slow read is not started again
    const second = read();
    expect(second).toBe(first);
    release?.();
    expect(await first).toBe(1);
    now = 5999;
    expect(await read()).toBe(1);
    now = 6000;
    const third = read();
    release?.();
    expect(await third).toBe(2);
    expect(loads).toBe(2);
  });

  it('shares a failure too, then loads again', async () => {
    let now = 0;
    let loads = 0;
    const read = sharedFor(
      1000,
      () => now,
      async () => {
        loads += 1;
        if (loads === 1) throw new Error('database away');
        return loads;
      },
    );
    await expect(read()).rejects.toThrow('database away');
    await expect(read()).rejects.toThrow('database away');
    now = 1000;
    expect(await read()).toBe(2);
  });
});

describe('saga gauges: at scrape time', () => {
  const clock = new FakeClock();
  let rows: Parameters<typeof fakeQuery>[0];
  let queries = 0;
  let failing = false;
  const db = {
    read: async <T>(work: (m: { query: Query }) => Promise<T>): Promise<T> => {
      if (failing) throw new Error('connection refused');
      const { query } = fakeQuery(rows);
      return work({
        query: (sql, params) => {
          queries += 1;
          return query(sql, params);
        },
      });
    },
  } as unknown as Database;
  const gauges = new SagaGauges(db, clock);

  beforeAll(() => gauges.onModuleInit());
  afterAll(() => gauges.onModuleDestroy());

  it('answers every gauge of a scrape, and a storm of scrapes, from one read per interval', async () => {
    rows = {
      unknown: [{ n: 2, oldest: new Date(clock.at - 4_000_000) }],
      inFlight: [{ flow: 'card-payment', n: 9, oldest: new Date(clock.at - 120_000) }],
      awaitingApproval: [{ n: 5 }],
      chargesDue: [{ n: 1 }],
      chargesFailed: [
        { status: 'past-due', n: 3 },
        { status: 'suspended', n: 2 },
      ],
    };
    for (let scrape = 0; scrape < 10; scrape++) await register.metrics();
    expect(queries).toBe(5);
    expect(await value(SAGA_GAUGE.unknownOutcomes)).toBe(2);
    expect(await value(SAGA_GAUGE.oldestUnknownSeconds)).toBe(4000);
    expect(await value(SAGA_GAUGE.inFlight, { flow: 'card-payment' })).toBe(9);
    expect(await value(SAGA_GAUGE.oldestInFlightSeconds, { flow: 'card-payment' })).toBe(120);
    expect(await value(SAGA_GAUGE.oldestInFlightSeconds, { flow: 'payout' })).toBe(0);
    expect(await value(GAUGE.payoutsAwaitingApproval)).toBe(5);
    expect(await value(GAUGE.scheduleChargesDue)).toBe(1);
    expect(await value(GAUGE.scheduleChargesFailed, { status: 'past-due' })).toBe(3);
    expect(await value(GAUGE.scheduleChargesFailed, { status: 'suspended' })).toBe(2);

    clock.at += SAGA_GAUGE_CACHE_MS;
    rows = { ...rows, awaitingApproval: [{ n: 6 }] };
    await register.metrics();
    expect(queries).toBe(10);
    expect(await value(GAUGE.payoutsAwaitingApproval)).toBe(6);
  });

  it('keeps the last values and counts the failure when the database does not answer', async () => {
    clock.at += SAGA_GAUGE_CACHE_MS;
    failing = true;
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const text = await register.metrics(); // /metrics still answers
    expect(text).toContain(`${GAUGE.payoutsAwaitingApproval} 6`);
    expect(await value(SAGA_GAUGE.readFailures)).toBe(1);
    await register.metrics(); // within the interval: the failure is not retried
    expect(await value(SAGA_GAUGE.readFailures)).toBe(1);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toContain('connection refused');
    warn.mockRestore();
    failing = false;
  });

  it('stops reading once the app instance is gone', async () => {
    gauges.onModuleDestroy();
    clock.at += SAGA_GAUGE_CACHE_MS;
    const before = queries;
    await register.metrics();
    expect(queries).toBe(before);
    gauges.onModuleInit();
  });
});
