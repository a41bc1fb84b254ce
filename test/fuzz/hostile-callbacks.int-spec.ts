/**
 * Fuzz: hostile HTTP to callback-ingest (in-process, real HTTP, real broker) with the orchestrator
 * in-process behind it on a fresh database (generators in test/support/fuzz/). A fixed seed, a few
 * hundred requests; half of them name a sale the orchestrator has in flight (processing), half a
 * payment nobody knows.
 *
 * Properties: never a 5xx (the broker is up), never a 200, every 4xx with a JSON reason code (the
 * payer's return: a 303 marked unverified or a plain error page); no verified callback published
 * for any of them (status-check hints are allowed: they are the documented answer to a forged
 * control); the in-flight sale neither moves nor gets a money request (only status queries, the
 * hints' purpose); no saga for the unknown payments.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { TOPICS, type GatewayRequest } from '@payments/contracts';
import { saleCommand } from '@payments/contracts/testing';
import { createTestDatabase, type TestDatabase } from '@payments/testing';
import { TEST_CONTROL_KEY, TEST_ENDPOINT_ID } from '../support/callback';
import {
  type RunningCallbackIngest,
  startCallbackIngest,
  TopicCollector as CallbackCollector,
} from '../support/callback-app';
import { withAdmin } from '../support/kafka';
import {
  type RunningOrchestrator,
  startOrchestrator,
  TestProducer,
  TopicCollector,
  waitFor,
} from '../support/orchestrator';
import {
  answerViolations,
  CALLBACK_CLASSES,
  type CallbackTarget,
  freshTarget,
  hostileRequests,
  sendHostile,
} from '../support/fuzz/hostile-callbacks';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
/** FUZZ_SCALE multiplies the count (`npm run fuzz` runs thousands). */
const PER_CLASS = Math.round(30 * Number(process.env.FUZZ_SCALE ?? 1));
jest.setTimeout(300_000 * Math.max(1, Number(process.env.FUZZ_SCALE ?? 1)));
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

describe('fuzz: hostile HTTP to callback-ingest (real HTTP, broker, orchestrator)', () => {
  let db: TestDatabase;
  let orchestrator: RunningOrchestrator;
  let edge: RunningCallbackIngest;
  let pg: Client;
  const logs: string[] = [];
  const events = new TopicCollector();
  const published = new CallbackCollector(TOPICS.gatewayCallbacks);
  const producer = new TestProducer();

  beforeAll(async () => {
    db = await createTestDatabase('fuzz_callbacks');
    await events.start();
    await published.start();
    await producer.connect();
    orchestrator = await startOrchestrator(db.url);
    edge = await startCallbackIngest({}, { logs });
    pg = new Client({ connectionString: db.url });
    await pg.connect();
  });

  afterAll(async () => {
    await pg?.end();
    await edge?.close();
    await orchestrator?.close();
    await producer.disconnect();
    await published.stop();
    await events.stop();
    await db?.drop();
  });

  /** A sale the orchestrator holds in `processing` (accepted by the gateway, outcome pending). */
  async function saleInFlight(): Promise<{ paymentId: string; gatewayOrderId: string }> {
    const command = saleCommand({ paymentId: randomUUID(), commandId: randomUUID() });
    await producer.command(command);
    const [request] = await events.waitForRequests(command.paymentId, 1);
    const gatewayOrderId = String(500_000 + Math.floor(Math.random() * 400_000));
    await producer.result({
      requestId: request.value.requestId,
      paymentId: command.paymentId,
      operation: request.value.operation,
      attempt: request.value.attempt,
      result: { kind: 'accepted', gatewayOrderId },
      completedAt: new Date().toISOString(),
    });
    await events.waitForEvents(command.paymentId, 2);
    return { paymentId: command.paymentId, gatewayOrderId };
  }

  /** Waits until `groupId` (or the collector) has consumed the callbacks topic to its end. */
  async function caughtUp(groupId?: string): Promise<void> {
    const high = await withAdmin((admin) => admin.fetchTopicOffsets(TOPICS.gatewayCallbacks));
    await waitFor(
      async () => {
        if (groupId === undefined) {
          return high.every(
            (p) =>
              Number(p.high) === 0 ||
              published.messages.some(
                (m) => m.partition === p.partition && Number(m.offset) >= Number(p.high) - 1,
              ),
          );
        }
        const [committed] = await withAdmin((admin) =>
          admin.fetchOffsets({ groupId, topics: [TOPICS.gatewayCallbacks] }),
        );
        return high.every(
          (p) =>
            Number(p.high) === 0 ||
            Number(committed?.partitions.find((c) => c.partition === p.partition)?.offset) >=
              Number(p.high),
        );
      },
      `callbacks consumed to the end${groupId ? ` by ${groupId}` : ''}`,
    );
  }

  it('answers every hostile request 4xx with a reason, publishes no callback, moves no payment', async () => {
    const inFlight = await saleInFlight();
    const other = await saleInFlight();
    const before = await pg.query<{ status: string; version: number }>(
      'SELECT status, version FROM sagas WHERE id = $1',
      [inFlight.paymentId],
    );
    const eventsBefore = events.events(inFlight.paymentId).length;
    const inFlightTarget: CallbackTarget = {
      endpointId: TEST_ENDPOINT_ID,
      controlKey: TEST_CONTROL_KEY,
      paymentId: inFlight.paymentId,
      gatewayOrderId: inFlight.gatewayOrderId,
      otherPaymentId: other.paymentId,
      otherGatewayOrderId: other.gatewayOrderId,
    };
    const requests = hostileRequests(SEED, PER_CLASS, (i) =>
      i % 2 === 0 ? inFlightTarget : freshTarget(TEST_ENDPOINT_ID, TEST_CONTROL_KEY),
    );

    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const started = Date.now();
    const problems: string[] = [];
    const statuses = new Map<string, number>();
    for (const request of requests) {
      const answer = await sendHostile(edge.base, request);
      problems.push(...answerViolations(request, answer));
      const key = `${request.class} → ${answer.status}${answer.code ? ` ${answer.code}` : ''}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    }
    global.gc?.();
    const rssAfter = process.memoryUsage().rss;
    process.stdout.write(
      `hostile callbacks, seed ${SEED}: ${requests.length} requests in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        `test process (callback-ingest and orchestrator in-process) RSS ${mib(rssBefore)} → ${mib(rssAfter)}\n${[
          ...statuses.entries(),
        ]
          .sort()
          .map(([k, n]) => `  ${k} × ${n}`)
          .join('\n')}\n`,
    );
    expect(problems).toEqual([]);

    await caughtUp();
    await caughtUp(orchestrator.groupId);
    const named = new Set(requests.map((r) => r.paymentId));
    const verified = published.messages.filter(
      (m) => named.has(m.keyText) && m.json.kind !== 'status-check-hint',
    );
    expect(verified.map((m) => `${m.keyText} ${String(m.json.kind)}`)).toEqual([]);

    const after = await pg.query<{ status: string; version: number }>(
      'SELECT status, version FROM sagas WHERE id = $1',
      [inFlight.paymentId],
    );
    expect(after.rows).toEqual(before.rows);
    expect(events.events(inFlight.paymentId)).toHaveLength(eventsBefore);
    const operations = events
      .requests(inFlight.paymentId)
      .map((r: { value: GatewayRequest }) => r.value.operation);
    expect(operations.filter((o) => o !== 'status')).toEqual(['sale']);

    const fresh = [...named].filter((id) => id !== inFlight.paymentId);
    const sagas = await pg.query('SELECT id FROM sagas WHERE id = ANY($1::uuid[])', [fresh]);
    expect(sagas.rows).toEqual([]);
    expect(new Set(requests.map((r) => r.class))).toEqual(new Set(CALLBACK_CLASSES));
  });
});
