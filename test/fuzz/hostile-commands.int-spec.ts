/**
 * Fuzz: hostile commands on the real broker against the orchestrator in-process on a fresh
 * PostgreSQL database (generators in test/support/fuzz/). A fixed seed, a few hundred cases of
 * every class interleaved on the partitions; the thousands live in `npm run fuzz`.
 *
 * Properties: every message ends as exactly one command-rejected event with a stable reason code
 * or one dead letter with a dlq-reason header, as the contract says for its class; no saga leaves
 * `initial` and no gateway request goes out because of an invalid command; no card number in any
 * event or dead letter; Object.prototype untouched; the consumer is still live afterwards.
 */
import { randomUUID } from 'node:crypto';
import { Partitioners, type Producer } from 'kafkajs';
import { Client } from 'pg';
import { TOPICS } from '@payments/contracts';
import { saleCommand } from '@payments/contracts/testing';
import { createTestDatabase, type TestDatabase } from '@payments/testing';
import {
  kafka,
  type Received,
  type RunningOrchestrator,
  startOrchestrator,
  TopicCollector,
  waitFor,
} from '../support/orchestrator';
import {
  type CommandObservation,
  formatTally,
  type ObservedMessage,
  tally,
  violations,
} from '../support/fuzz/command-oracle';
import {
  COMMAND_CLASSES,
  type CommandClass,
  batches,
  type HostileCommand,
  hostileCommands,
  shuffle,
} from '../support/fuzz/hostile-commands';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
/** Poison strings and deep nesting may be retried in place before dead-lettering: fewer of them. */
const ALL_COUNTS: Record<CommandClass, number> = {
  ...(Object.fromEntries(COMMAND_CLASSES.map((c) => [c, 24])) as Record<CommandClass, number>),
  'huge-strings': 8,
  'poison-strings': 6,
  'deep-nesting': 6,
};
/** FUZZ_CLASSES=a,b reproduces one class or a few. */
const ONLY = process.env.FUZZ_CLASSES?.split(',').map((c) => c.trim());
const CLASSES = COMMAND_CLASSES.filter((c) => ONLY === undefined || ONLY.includes(c));
/** FUZZ_SCALE multiplies every count (`npm run fuzz` runs thousands). */
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
const COUNTS = Object.fromEntries(CLASSES.map((c) => [c, Math.round(ALL_COUNTS[c] * SCALE)]));
jest.setTimeout(300_000 * Math.max(1, Number(process.env.FUZZ_SCALE ?? 1)));
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

function observed(m: Received): ObservedMessage {
  const value: unknown = m.value;
  const record =
    value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  return { key: m.key, headers: m.headers, text: m.text, value: record };
}

describe('fuzz: hostile commands against the orchestrator (real broker + PostgreSQL)', () => {
  let db: TestDatabase;
  let orchestrator: RunningOrchestrator;
  let pg: Client;
  let producer: Producer;
  const collector = new TopicCollector();
  const cases = shuffle(
    hostileCommands(SEED, COUNTS, { maxStringBytes: 400_000, maxDepth: 50_000 }),
    SEED,
  );

  beforeAll(async () => {
    db = await createTestDatabase('fuzz_commands');
    await collector.start();
    producer = kafka('fuzz-producer').producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
    });
    await producer.connect();
    orchestrator = await startOrchestrator(db.url);
    pg = new Client({ connectionString: db.url });
    await pg.connect();
  });

  afterAll(async () => {
    await pg?.end();
    await orchestrator?.close();
    await producer?.disconnect();
    await collector.stop();
    await db?.drop();
  });

  function observe(c: HostileCommand, sagas: Map<string, { status: string; version: number }>) {
    const underKey = collector.messages.filter(
      (m) => m.key === c.key && (m.topic === TOPICS.events || m.topic === `${TOPICS.commands}.dlq`),
    );
    const observation: CommandObservation = {
      rejections: underKey
        .filter(
          (m) =>
            m.topic === TOPICS.events &&
            m.value.type === 'command-rejected' &&
            m.value.commandId === c.commandId,
        )
        .map(observed),
      deadLetters: underKey.filter((m) => m.topic === `${TOPICS.commands}.dlq`).map(observed),
      everything: underKey.map(observed),
      gatewayRequests: collector.messages.filter(
        (m) => m.topic === TOPICS.gatewayRequests && m.key === c.key,
      ).length,
      ...(sagas.has(c.key) ? { saga: sagas.get(c.key) } : {}),
    };
    return observation;
  }

  it(`ends every one of ${cases.length} hostile commands as exactly one rejection or dead letter, with no state change`, async () => {
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const started = Date.now();
    const messages = cases.flatMap((c) => [
      ...c.before.map((value) => ({ key: c.key, value })),
      { key: c.key, value: c.value },
    ]);
    for (const batch of batches(messages))
      await producer.send({ topic: TOPICS.commands, acks: -1, messages: batch });
    const noSagas = new Map<string, { status: string; version: number }>();
    const pending = () =>
      cases.filter(
        (c) => observe(c, noSagas).rejections.length + observe(c, noSagas).deadLetters.length === 0,
      );
    await waitFor(
      () => pending().length === 0,
      `an outcome for every case (still waiting: ${pending()
        .slice(0, 5)
        .map((c) => `${c.class}: ${c.label}`)
        .join('; ')})`,
      240_000 * Math.max(1, SCALE),
    );

    // The consumer is still live: a valid sale sent after everything is handled.
    const canary = saleCommand({ paymentId: randomUUID(), commandId: randomUUID() });
    await producer.send({
      topic: TOPICS.commands,
      acks: -1,
      messages: [{ key: canary.paymentId, value: JSON.stringify(canary) }],
    });
    await collector.waitForEvents(canary.paymentId, 1, 60_000);
    expect((await fetch(`${orchestrator.url}/health/live`)).status).toBe(200);

    const rows = (
      await pg.query<{ id: string; status: string; version: number }>(
        'SELECT id, status, version FROM sagas WHERE id = ANY($1::uuid[])',
        [cases.filter((c) => c.paymentId !== undefined).map((c) => c.key)],
      )
    ).rows;
    const sagas = new Map(rows.map((r) => [r.id, { status: r.status, version: r.version }]));
    const stored = (
      await pg.query<{ saga_id: string }>(
        'SELECT saga_id FROM gateway_requests WHERE saga_id = ANY($1::uuid[])',
        [cases.filter((c) => c.before.length === 0 && c.paymentId !== undefined).map((c) => c.key)],
      )
    ).rows;

    const seconds = (Date.now() - started) / 1000;
    global.gc?.();
    const rssAfter = process.memoryUsage().rss;
    const table = tally(cases, (c) => observe(c, sagas));
    process.stdout.write(
      `hostile commands, seed ${SEED}: ${cases.length} cases in ${seconds.toFixed(1)} s; ` +
        `test process (orchestrator in-process) RSS ${mib(rssBefore)} → ${mib(rssAfter)}\n` +
        `${formatTally(table)}\n`,
    );
    expect(cases.flatMap((c) => violations(c, observe(c, sagas)))).toEqual([]);
    expect(stored).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    // Every class was exercised.
    expect([...table.keys()].sort()).toEqual([...CLASSES].sort());
  });
});
