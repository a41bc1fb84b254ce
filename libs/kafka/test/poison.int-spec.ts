/**
 * Hostile values on the real broker, handled by a handler that does what the orchestrator does
 * with a command: walk the whole value (as the plain-card-data scan does) and store it in a
 * PostgreSQL jsonb column. Such values are poison: retrying cannot help, so they must go to the
 * DLQ on the first attempt, and the next message of the partition must be handled right after
 * (each used to be retried six times, blocking its partition).
 */
import { Client } from 'pg';
import { z } from 'zod';
import { defineHandler, dlqTopicFor, KAFKA_METRIC } from '@payments/kafka';
import {
  committedOffsets,
  type KafkaTestApp,
  metricValue,
  produceRaw,
  readMessages,
  startKafkaTestApp,
  uniqueName,
  waitFor,
} from '../../../test/support/kafka';
import { createTestDatabase, type TestDatabase } from '../../../test/support/postgres';

jest.setTimeout(120_000);

const Payload = z.object({ id: z.string(), n: z.number().int(), data: z.unknown().optional() });

/** Walks every nested value recursively, like a scan for card data in any field. */
function visit(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 1;
  let count = 1;
  for (const child of Object.values(value)) count += visit(child);
  return count;
}

function recurseForever(n: number): number {
  return recurseForever(n + 1) + 1;
}

describe('libs/kafka: hostile values are poison at once', () => {
  let database: TestDatabase;
  let client: Client;
  let started: KafkaTestApp | undefined;

  beforeAll(async () => {
    database = await createTestDatabase('kafka_poison');
    client = new Client({ connectionString: database.url });
    await client.connect();
    await client.query('CREATE TABLE stored (id text NOT NULL, value jsonb NOT NULL)');
  });

  afterAll(async () => {
    await started?.app.close();
    await client.end();
    await database.drop();
  });

  it('deep nesting, NUL, lone surrogates, an oversized value and a stack overflow in the handler are dead-lettered on the first attempt; the next message flows', async () => {
    const topic = uniqueName('hostile');
    const groupId = uniqueName('hostile-group');
    const attempts: string[] = [];
    started = await startKafkaTestApp(
      {
        groupId,
        // The old behaviour would retry each of them five times before dead-lettering.
        retry: { retries: 5, initialDelayMs: 20, maxDelayMs: 50 },
        handlers: [
          defineHandler(topic, Payload, async (m) => {
            attempts.push(m.value.id);
            if (m.value.id === 'overflow') recurseForever(0);
            visit(m.value);
            await client.query('INSERT INTO stored (id, value) VALUES ($1, $2::jsonb)', [
              m.value.id,
              JSON.stringify(m.value),
            ]);
          }),
        ],
      },
      { maxMessageBytes: 64 * 1024 },
    );

    const depth = 30_000; // 60 KB, under the 64 KiB limit set above
    const values: Array<[string, string]> = [
      ['deep', `{"id":"deep","n":1,"data":${'['.repeat(depth)}${']'.repeat(depth)}}`],
      ['nul', '{"id":"nul","n":2,"data":{"note":"a\\u0000b"}}'],
      ['nul-key', '{"id":"nul-key","n":3,"data":{"a\\u0000":1}}'],
      ['high-surrogate', '{"id":"high-surrogate","n":4,"data":["\\ud83d"]}'],
      ['low-surrogate', '{"id":"low-surrogate","n":5,"data":"x\\ude00y"}'],
      ['huge', JSON.stringify({ id: 'huge', n: 6, data: 'x'.repeat(100_000) })],
      ['overflow', '{"id":"overflow","n":7}'],
      ['emoji', '{"id":"emoji","n":8,"data":"\\ud83d\\ude00 ok"}'],
      ['good', '{"id":"good","n":9,"data":{"a":[1,2,{"b":"c"}]}}'],
    ];
    await produceRaw(
      topic,
      values.map(([id, value]) => ({ key: 'pay-1', value: Buffer.from(value), headers: { id } })),
    );

    await waitFor(() => attempts.includes('good'), 'the good message after the hostile ones');
    // Every hostile value reached the handler at most once; only the overflow got that far.
    expect(attempts).toEqual(['overflow', 'emoji', 'good']);
    const stored = await client.query<{ id: string }>('SELECT id FROM stored ORDER BY id');
    expect(stored.rows.map((r) => r.id)).toEqual(['emoji', 'good']);

    const expected: Record<string, [string, RegExp]> = {
      deep: ['parse', /^value nests deeper than 64 levels of objects and arrays$/],
      nul: ['schema', /^value contains a NUL character \(\\u0000\) at \$\.data\.note$/],
      'nul-key': ['schema', /^value contains a NUL character \(\\u0000\) in a key at \$\.data$/],
      'high-surrogate': ['schema', /^value contains a lone UTF-16 surrogate at \$\.data\[0\]$/],
      'low-surrogate': ['schema', /^value contains a lone UTF-16 surrogate at \$\.data$/],
      huge: ['parse', /^value is \d+ bytes, more than the limit of 65536$/],
      overflow: ['non-retriable', /^RangeError: Maximum call stack size exceeded$/],
    };
    const dlq = await readMessages(dlqTopicFor(topic), Object.keys(expected).length);
    expect(dlq).toHaveLength(Object.keys(expected).length);
    for (const record of dlq) {
      const id = record.headers?.id?.toString() ?? '';
      const [reason, error] = expected[id] ?? ['(unexpected)', /^$/];
      expect({ id, reason: record.headers?.['dlq-reason']?.toString() }).toEqual({ id, reason });
      expect(record.headers?.['dlq-error']?.toString()).toMatch(error);
      // Original bytes kept for a re-drive.
      expect(record.value?.toString()).toBe(values.find(([v]) => v === id)?.[1]);
    }

    await waitFor(
      async () => (await committedOffsets(groupId, topic)).get(0) === String(values.length),
      'every offset committed',
    );
    // One failed attempt in all: the stack overflow, classified as poison at once.
    expect(await metricValue(KAFKA_METRIC.failed, { group: groupId, topic })).toBe(1);
  });
});
