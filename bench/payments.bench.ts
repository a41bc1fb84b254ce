/**
 * End-to-end benchmark (issue #5): N sales through the whole stack — commands on Kafka, the
 * orchestrator's sagas and outbox, the gateway-adapter signing and calling the sandbox, the
 * sandbox's callbacks through callback-ingest — measured from each command's send to its final
 * event on payments.events.v1. In the same run, on the same broker and database, a floor: the
 * least a Kafka service with a database can do per message (consume → one INSERT → produce).
 * Our rate is printed as a ratio of the floor's.
 *
 *   npm run bench:payments                 # BENCH_SALES=300 BENCH_FLOOR_MESSAGES=3000 by default
 *
 * It is a script, not a test: it prints figures and never asserts on time.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Partitioners } from 'kafkajs';
import { Pool } from 'pg';
import { ensureBroker, freshDatabase } from '../scripts/stack/infra';
import { kafkaClient } from '../scripts/stack/kafka-io';
import { PaymentStack, sandboxMerchantsWithDelay } from '../scripts/stack/payment-stack';
import { RUN_DIR, run } from '../scripts/stack/processes';

const SALES = Number(process.env.BENCH_SALES ?? 300);
const FLOOR_MESSAGES = Number(process.env.BENCH_FLOOR_MESSAGES ?? 3_000);
const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CONCURRENCY = 3; // KAFKA_CONSUMER_CONCURRENCY default of the apps
const PARTITIONS = 6; // KAFKA_TOPIC_PARTITIONS default of the apps

interface Figures {
  readonly count: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
}

function figures(latenciesMs: number[], seconds: number): Figures {
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
  };
}

async function floor(brokers: string[], databaseUrl: string): Promise<Figures> {
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
  await pool.query('CREATE TABLE floor_events (id uuid PRIMARY KEY, payload jsonb NOT NULL)');
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  const worker = kafka.consumer({ groupId: `bench-floor-${suffix}`, maxWaitTimeInMs: 50 });
  await worker.connect();
  await worker.subscribe({ topic: inTopic, fromBeginning: true });
  await worker.run({
    partitionsConsumedConcurrently: CONCURRENCY,
    eachMessage: async ({ message }) => {
      const value = message.value?.toString('utf8') ?? '{}';
      const { id } = JSON.parse(value) as { id: string };
      await pool.query('INSERT INTO floor_events (id, payload) VALUES ($1, $2)', [id, value]);
      await producer.send({ topic: outTopic, acks: -1, messages: [{ key: message.key, value }] });
    },
  });
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  let last = 0;
  const observer = kafka.consumer({
    groupId: `bench-floor-observer-${suffix}`,
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

async function pipeline(
  stack: PaymentStack,
): Promise<Figures & { approved: number; charges: number }> {
  const sales = Array.from({ length: SALES }, (_, i) =>
    stack.sale({ cvv: '123', amountMinor: 1_000 + i }),
  );
  const sentAt = new Map<string, number>();
  const first = Date.now();
  for (let i = 0; i < sales.length; i += 50) {
    const batch = sales.slice(i, i + 50);
    const now = Date.now();
    for (const s of batch) sentAt.set(s.paymentId, now);
    await stack.send(...batch);
  }
  const finals = await withTimeout(
    Promise.all(
      sales.map((s) =>
        stack.events.waitFor(
          s.paymentId,
          // command-rejected too: a rejected sale must show in the figures, not hang the run.
          (e) => ['approved', 'declined', 'failed', 'command-rejected'].includes(e.type),
          600_000,
        ),
      ),
    ),
    620_000,
    'pipeline',
  );
  const last = Math.max(...finals.map((f) => f.receivedAt));
  const latencies = finals.map((f) => f.receivedAt - (sentAt.get(f.event.paymentId) ?? first));
  const ledger = await stack.controls.ledger();
  return {
    ...figures(latencies, (last - first) / 1000),
    approved: finals.filter((f) => f.event.type === 'approved').length,
    charges: ledger.entries.filter((e) => e.movement === 'charged').length,
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: no result in ${ms} ms`)), ms).unref(),
    ),
  ]);
}

function row(name: string, f: Figures, unit: string): string {
  return `${name.padEnd(34)} ${String(f.count).padStart(6)} ${f.seconds.toFixed(1).padStart(8)} ${f.perSecond
    .toFixed(1)
    .padStart(
      9,
    )} ${unit.padEnd(9)} ${String(f.p50).padStart(7)} ${String(f.p95).padStart(7)} ${String(f.p99).padStart(7)}`;
}

async function main(): Promise<void> {
  const workDir = path.join(RUN_DIR, `bench-${randomUUID().slice(0, 8)}`);
  mkdirSync(workDir, { recursive: true });
  process.stdout.write(
    `bench: ${SALES} sales through the stack; floor ${FLOOR_MESSAGES} messages\n`,
  );
  await run('npm', ['run', '--silent', 'build']);
  const broker = await ensureBroker(process.env, 29192);
  let stack: PaymentStack | undefined;
  try {
    const orchestratorDb = await freshDatabase(SERVER_URL, 'payments_bench');
    const adapterDb = await freshDatabase(SERVER_URL, 'payments_bench_adapter');
    const floorDb = await freshDatabase(SERVER_URL, 'payments_bench_floor');
    stack = await PaymentStack.start({
      kafkaBrokers: broker.brokers,
      orchestratorDatabaseUrl: orchestratorDb,
      adapterDatabaseUrl: adapterDb,
      workDir,
      logLevel: 'warn',
      env: {
        'gateway-sandbox': {
          SANDBOX_MERCHANTS_FILE: sandboxMerchantsWithDelay(
            workDir,
            Number(process.env.BENCH_GATEWAY_DELAY_MS ?? 20),
          ),
        },
        'gateway-adapter': {
          GATEWAY_RATE_PER_SECOND: '1000',
          GATEWAY_RATE_BURST: '1000',
          GATEWAY_MAX_CONCURRENT: '32',
        },
      },
    });
    process.stdout.write('stack up; warming up with 20 sales\n');
    const warm = Array.from({ length: 20 }, () => stack!.sale({ cvv: '123' }));
    await stack.send(...warm);
    await Promise.all(
      warm.map((s) => stack!.events.waitForType(s.paymentId, ['approved'], 120_000)),
    );
    await stack.controls.reset();

    process.stdout.write('measuring the pipeline...\n');
    const ours = await pipeline(stack);
    await stack.stop();
    stack = undefined;
    process.stdout.write('measuring the floor on the same broker and database server...\n');
    const base = await floor(broker.brokers, floorDb);

    process.stdout.write(
      `\n${'run'.padEnd(34)} ${'count'.padStart(6)} ${'seconds'.padStart(8)} ${'rate'.padStart(9)} ${''.padEnd(9)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'p99 ms'.padStart(7)}\n`,
    );
    process.stdout.write(`${row('sales, command → final event', ours, 'sales/s')}\n`);
    process.stdout.write(`${row('floor, consume → insert → produce', base, 'msgs/s')}\n`);
    process.stdout.write(
      `\nsales approved: ${ours.approved}/${ours.count}; gateway charges: ${ours.charges} (one per sale expected)\n`,
    );
    process.stdout.write(
      `ratio (sales/s ÷ floor msgs/s): ${(ours.perSecond / base.perSecond).toFixed(3)}\n`,
    );
    process.stdout.write(
      `gateway processing delay in the sandbox: ${process.env.BENCH_GATEWAY_DELAY_MS ?? 20} ms per operation\n`,
    );
  } finally {
    await stack?.stop();
    await broker.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
