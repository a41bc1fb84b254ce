/**
 * The benchmark's figures of a run (count, rate, latency quantiles) and the floor: what a plain
 * consume → INSERT → produce service does on the same broker and database, for comparison.
 */
import { randomUUID } from 'node:crypto';
import { Partitioners } from 'kafkajs';
import { Pool } from 'pg';
import { kafkaClient } from '../../scripts/stack/kafka-io';

export interface Figures {
  readonly count: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
}

export function figures(latenciesMs: number[], seconds: number): Figures {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return {
    count: sorted.length,
    seconds,
    perSecond: sorted.length / seconds,
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    max: sorted.at(-1) ?? NaN,
  };
}

export interface FloorOptions {
  /** Messages sent through the floor service. */
  readonly messages: number;
  /** Partitions of its topics (the apps' default). */
  readonly partitions: number;
  /** Partitions handled at once in naive mode (the apps' consumer concurrency). */
  readonly concurrency: number;
}

/**
 * The floor: what a consume → INSERT → produce service does on this broker and database. Naive:
 * per message, one INSERT and one produce, three partitions at a time (the apps' concurrency).
 * Batched: per fetched batch, one multi-row INSERT and one produce call.
 */
export async function floor(
  brokers: string[],
  databaseUrl: string,
  mode: 'naive' | 'batched',
  { messages: FLOOR_MESSAGES, partitions: PARTITIONS, concurrency: CONCURRENCY }: FloorOptions,
): Promise<Figures> {
  const kafka = kafkaClient(brokers, 'bench-floor');
  const suffix = randomUUID().slice(0, 8);
  const inTopic = `bench.floor.in.${suffix}`;
  const outTopic = `bench.floor.out.${suffix}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [inTopic, outTopic].map((topic) => ({ topic, numPartitions: PARTITIONS })),
  });
  await admin.disconnect();
  const pool = new Pool({ connectionString: databaseUrl, max: 10 });
  const table = `floor_events_${mode}`;
  await pool.query(`CREATE TABLE ${table} (id uuid PRIMARY KEY, payload jsonb NOT NULL)`);
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  const worker = kafka.consumer({ groupId: `bench-floor-${suffix}-${mode}`, maxWaitTimeInMs: 50 });
  await worker.connect();
  await worker.subscribe({ topic: inTopic, fromBeginning: true });
  if (mode === 'naive') {
    await worker.run({
      partitionsConsumedConcurrently: CONCURRENCY,
      eachMessage: async ({ message }) => {
        const value = message.value?.toString('utf8') ?? '{}';
        const { id } = JSON.parse(value) as { id: string };
        await pool.query(`INSERT INTO ${table} (id, payload) VALUES ($1, $2)`, [id, value]);
        await producer.send({ topic: outTopic, acks: -1, messages: [{ key: message.key, value }] });
      },
    });
  } else {
    await worker.run({
      partitionsConsumedConcurrently: CONCURRENCY,
      eachBatch: async ({ batch }) => {
        const values = batch.messages.map((m) => m.value?.toString('utf8') ?? '{}');
        const ids = values.map((v) => (JSON.parse(v) as { id: string }).id);
        await pool.query(
          `INSERT INTO ${table} (id, payload) SELECT * FROM unnest($1::uuid[], $2::jsonb[])`,
          [ids, values],
        );
        await producer.send({
          topic: outTopic,
          acks: -1,
          messages: batch.messages.map((m, i) => ({ key: m.key, value: values[i] ?? null })),
        });
      },
    });
  }
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  let last = 0;
  const observer = kafka.consumer({
    groupId: `bench-floor-observer-${suffix}-${mode}`,
    maxWaitTimeInMs: 50,
  });
  await observer.connect();
  await observer.subscribe({ topic: outTopic, fromBeginning: true });
  const done = new Promise<void>((resolve) => {
    void observer.run({
      eachMessage: async ({ message }) => {
        const { id } = JSON.parse(message.value?.toString('utf8') ?? '{}') as { id: string };
        const start = sentAt.get(id);
        if (start !== undefined) {
          last = Date.now();
          latencies.push(last - start);
          if (latencies.length === FLOOR_MESSAGES) resolve();
        }
        await Promise.resolve();
      },
    });
  });
  const sender = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await sender.connect();
  const first = Date.now();
  for (let i = 0; i < FLOOR_MESSAGES; i += 100) {
    const batch = Array.from({ length: Math.min(100, FLOOR_MESSAGES - i) }, () => {
      const id = randomUUID();
      sentAt.set(id, Date.now());
      return { key: id, value: JSON.stringify({ id, amount: { minor: 1_000, currency: 'USD' } }) };
    });
    await sender.send({ topic: inTopic, acks: -1, messages: batch });
  }
  await withTimeout(done, 300_000, 'floor');
  const result = figures(latencies, (last - first) / 1000);
  await Promise.all([
    sender.disconnect(),
    worker.disconnect(),
    observer.disconnect(),
    producer.disconnect(),
  ]);
  await pool.end();
  return result;
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: no result in ${ms} ms`)), ms).unref(),
    ),
  ]);
}
