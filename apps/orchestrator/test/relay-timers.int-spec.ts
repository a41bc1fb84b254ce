/**
 * The outbox relay and the timer worker with more than one orchestrator on one database: the
 * real broker (KAFKA_BROKERS) and a fresh test database.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { register } from 'prom-client';
import type { GatewayResult } from '@payments/contracts';
import { saleCommand } from '@payments/contracts/testing';
import { createTestDatabase, type TestDatabase } from '@payments/testing';
import { SagaRuntime } from '../src/runtime/saga-runtime';
import { OutboxRelay } from '../src/runtime/outbox/outbox-relay';
import { TimerWorker } from '../src/runtime/timer-worker';
import {
  type RunningOrchestrator,
  startOrchestrator,
  TestClock,
  TestProducer,
  TopicCollector,
  waitFor,
} from '../../../test/support/orchestrator';

jest.setTimeout(120_000);

describe('outbox relay and timers with two orchestrators on one database', () => {
  let db: TestDatabase;
  let pg: Client;
  const running: RunningOrchestrator[] = [];
  const collector = new TopicCollector();
  const producer = new TestProducer();

  beforeAll(async () => {
    await collector.start();
    await producer.connect();
  });

  beforeEach(async () => {
    db = await createTestDatabase('orch_relay');
    pg = new Client({ connectionString: db.url });
    await pg.connect();
  });

  afterEach(async () => {
    for (const o of running.splice(0)) await o.close();
    await pg.end();
    await db.drop();
  });

  afterAll(async () => {
    await producer.disconnect();
    await collector.stop();
  });

  const query = async <R>(sql: string, params: unknown[] = []): Promise<R[]> =>
    (await pg.query(sql, params)).rows as R[];

  async function start(
    env: Record<string, string>,
    options: { groupId?: string; clock?: TestClock } = {},
  ) {
    const o = await startOrchestrator(db.url, env, options);
    running.push(o);
    return o;
  }

  async function requestOf(paymentId: string): Promise<{ request_id: string }> {
    return waitFor(async () => {
      const [row] = await query<{ request_id: string }>(
        `SELECT request_id FROM gateway_requests WHERE saga_id = $1`,
        [paymentId],
      );
      return row;
    }, `the gateway request of ${paymentId}`);
  }

  function acceptedResult(paymentId: string, requestId: string): GatewayResult {
    return {
      requestId,
      paymentId,
      operation: 'sale',
      attempt: 1,
      result: { kind: 'accepted', gatewayOrderId: `gw-${paymentId.slice(0, 8)}` },
      completedAt: new Date().toISOString(),
    };
  }

  /** Observed relay rounds that published rows (orchestrator_outbox_round_seconds). */
  async function publishedRounds(): Promise<number> {
    const metric = register.getSingleMetric('orchestrator_outbox_round_seconds');
    const values = (await metric?.get())?.values ?? [];
    return values
      .filter(
        (v) =>
          (v as { metricName?: string }).metricName?.endsWith('_count') &&
          v.labels.outcome === 'published',
      )
      .reduce((sum, v) => sum + v.value, 0);
  }

  it('publishes a backlog in per-payment order once a relay runs again, with one active relay at a time', async () => {
    const a = await start({ OUTBOX_RELAY_ENABLED: 'false', TIMER_WORKER_ENABLED: 'false' });
    const payments = [randomUUID(), randomUUID(), randomUUID()];
    for (const paymentId of payments) {
      await producer.command(saleCommand({ paymentId, commandId: randomUUID() }));
    }
    const historyCount = async (n: number) =>
      waitFor(async () => {
        const [{ count }] = await query<{ count: number }>(
          `SELECT count(*)::int AS count FROM saga_history WHERE saga_id = ANY($1::uuid[])`,
          [payments],
        );
        return count === n;
      }, `${n} events in history`);
    for (const paymentId of payments) {
      const { request_id } = await requestOf(paymentId);
      await producer.result(acceptedResult(paymentId, request_id));
    }
    // Results and callbacks travel on different topics: let the results land first.
    await historyCount(6);
    for (const paymentId of payments) {
      await producer.callback({
        kind: 'callback',
        notificationId: randomUUID(),
        paymentId,
        clientOrderId: paymentId,
        source: 'server-callback',
        report: {
          status: 'approved',
          gatewayOrderId: `gw-${paymentId.slice(0, 8)}`,
          transactionType: 'sale',
          // saleCommand()'s amount: a callback names the amount it approves.
          amount: { minor: 10_000, currency: 'EUR' },
        },
        receivedAt: new Date().toISOString(),
      });
    }
    await historyCount(9);

    // The relay was down: everything is still in the outbox, nothing on the topics.
    // Counted for our payments only: the group starts at the end of the topics, but a suite that
    // ran before may still have a command in flight to the shared commands topic (seen in CI
    // after the chaos suite: one foreign sale, two more rows).
    const [{ backlog }] = await query<{ backlog: number }>(
      `SELECT count(*)::int AS backlog FROM outbox
        WHERE published_at IS NULL AND aggregate_id = ANY($1::text[])`,
      [payments],
    );
    expect(backlog).toBe(12); // 9 events + 3 gateway requests
    for (const p of payments) expect(collector.events(p)).toHaveLength(0);

    // Two relays now: one holds the lock and publishes, the other stands by.
    const roundsBefore = await publishedRounds();
    const b = await start({}, { groupId: a.groupId });
    const relayA = a.app.get(OutboxRelay);
    const relayB = b.app.get(OutboxRelay);
    relayA.start();
    for (const p of payments) {
      const events = await collector.waitForEvents(p, 3);
      await collector.waitForRequests(p, 1);
      expect(events.map((e) => e.value.version)).toEqual([1, 2, 3]);
      expect(events.map((e) => e.value.type)).toEqual([
        'operation-requested',
        'accepted-by-gateway',
        'approved',
      ]);
      expect(collector.requests(p)).toHaveLength(1);
    }
    expect([relayA.isLeader, relayB.isLeader].filter(Boolean)).toHaveLength(1);
    // The relay stamps its rows once the broker has acknowledged them, which can come after a
    // consumer has already read them: wait for the stamps rather than read them at once.
    await waitFor(
      async () => (await query(`SELECT 1 FROM outbox WHERE published_at IS NULL`)).length === 0,
      'every outbox row stamped published',
      30_000,
    );
    // Each round that published is timed (the relay's round time is a metric: docs/capacity.md).
    expect(await publishedRounds()).toBeGreaterThan(roundsBefore);

    // The leader goes away: the standby takes over and publishes what comes next.
    const leader = relayA.isLeader ? relayA : relayB;
    const standby = leader === relayA ? relayB : relayA;
    await leader.stop();
    const next = randomUUID();
    await producer.command(saleCommand({ paymentId: next, commandId: randomUUID() }));
    await collector.waitForEvents(next, 1);
    expect(standby.isLeader).toBe(true);
    // Events and requests are two topics: the request may reach the collector a moment later.
    await collector.waitForRequests(next, 1);
    expect(collector.requests(next)).toHaveLength(1);
  });

  it('a timer firing while a handler holds the payment waits for it instead of deadlocking', async () => {
    const clock = new TestClock();
    clock.frozenAt = new Date();
    const o = await start({ TIMER_WORKER_ENABLED: 'false' }, { clock });
    const saga = o.app.get(SagaRuntime);
    const paymentId = randomUUID();
    await saga.handleCommand(saleCommand({ paymentId, commandId: randomUUID() }), {});
    const { request_id } = await requestOf(paymentId);
    await saga.handleGatewayResult(acceptedResult(paymentId, request_id), {});
    clock.frozenAt = new Date(clock.frozenAt.getTime() + 10_000); // the first status poll is due

    // A "handler" in the order every handler uses: the payment row, then (a moment later) its timer.
    const handler = new Client({ connectionString: db.url });
    await handler.connect();
    try {
      await handler.query('BEGIN');
      await handler.query('SELECT id FROM sagas WHERE id = $1 FOR UPDATE', [paymentId]);
      const firing = o.app.get(TimerWorker).runOnce();
      await new Promise((resolve) => setTimeout(resolve, 300)); // the worker is now waiting
      // Locking the timer row while the worker waits: with the opposite lock order in the worker
      // (timer, then payment) PostgreSQL aborts one of the two with "deadlock detected".
      await handler.query(
        `UPDATE timers SET attempts = attempts WHERE saga_id = $1 AND kind = 'status-poll'`,
        [paymentId],
      );
      await handler.query('COMMIT');
      expect(await firing).toBe(1);
    } finally {
      await handler.end();
    }
    const polls = await query<{ n: number }>(
      `SELECT count(*)::int AS n FROM gateway_requests WHERE saga_id = $1 AND operation = 'status'`,
      [paymentId],
    );
    expect(polls[0].n).toBe(1);
  });

  it('never fires the same timer twice with two timer workers on one database', async () => {
    const clock = new TestClock();
    clock.frozenAt = new Date();
    const env = { TIMER_WORKER_ENABLED: 'false', TIMER_BATCH_SIZE: '5' };
    const a = await start(env, { clock });
    const b = await start(env, { groupId: a.groupId, clock });
    const saga = a.app.get(SagaRuntime);

    const payments = Array.from({ length: 20 }, () => randomUUID());
    for (const paymentId of payments) {
      await saga.handleCommand(saleCommand({ paymentId, commandId: randomUUID() }), {});
      const { request_id } = await requestOf(paymentId);
      await saga.handleGatewayResult(acceptedResult(paymentId, request_id), {});
    }
    const polls = await query<{ n: number }>(
      `SELECT count(*)::int AS n FROM timers WHERE kind = 'status-poll'`,
    );
    expect(polls[0].n).toBe(20);

    // Ten seconds later every first poll is due; both workers drain at the same time.
    clock.frozenAt = new Date(clock.frozenAt.getTime() + 10_000);
    const drain = async (worker: TimerWorker): Promise<number> => {
      let total = 0;
      for (let n = await worker.runOnce(); n > 0; n = await worker.runOnce()) total += n;
      return total;
    };
    const [firedA, firedB] = await Promise.all([
      drain(a.app.get(TimerWorker)),
      drain(b.app.get(TimerWorker)),
    ]);
    expect(firedA + firedB).toBe(20);

    const statusRequests = await query<{ saga_id: string; n: number }>(
      `SELECT saga_id, count(*)::int AS n FROM gateway_requests
        WHERE operation = 'status' GROUP BY saga_id`,
    );
    expect(statusRequests).toHaveLength(20);
    expect(statusRequests.every((r) => r.n === 1)).toBe(true);
    // Each poll scheduled the next one, later than the (frozen) now.
    const next = await query<{ n: number }>(
      `SELECT count(*)::int AS n FROM timers WHERE kind = 'status-poll' AND due_at > $1`,
      [clock.frozenAt],
    );
    expect(next[0].n).toBe(20);
  });
});
