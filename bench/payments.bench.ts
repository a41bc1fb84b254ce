/**
 * End-to-end benchmark: N sales through the whole stack — commands on Kafka, the
 * orchestrator's sagas and outbox, the gateway-adapter signing and calling the sandbox, the
 * sandbox's callbacks through callback-ingest — measured from each command's send to its final
 * event on payments.events.v1. In the same run, on the same broker and database, a floor: the
 * least a Kafka service with a database can do per message, naive (consume → one INSERT →
 * produce, per message) and batched (a fetched batch → one multi-row INSERT → one produce call).
 * Our rate is printed as a ratio of each floor's.
 *
 * Two modes, run one after the other on the same stack:
 *  - closed loop (throughput): BENCH_SALES sales sent in bursts of 50 as fast as they are taken;
 *  - open loop (latency at a steady rate): BENCH_RATE sales per second for BENCH_SECONDS, each sale
 *    sent at its scheduled time and its latency measured from that scheduled time (no coordinated
 *    omission: a stalled pipeline shows as latency, not as fewer sends). BENCH_RATE=0 skips it.
 * Each app's resident memory (VmRSS of its process, sampled every 250 ms, the peak per mode) and
 * CPU seconds used (utime + stime, with the share of the mode's wall time) are printed: the profile
 * says which process limits the pipeline. Every sale must be charged exactly once: the sandbox's ledger is checked.
 *
 *   npm run bench:payments   # BENCH_SALES=300 BENCH_RATE=50 BENCH_SECONDS=20 BENCH_FLOOR_MESSAGES=3000
 *
 * BENCH_COUNT_STATEMENTS=1 preloads bench/support/count-statements.cjs into the orchestrator and
 * prints the SQL statements it sent per sale over the closed loop (by statement text).
 * BENCH_NODE_OPTIONS (e.g. `--max-semi-space-size=4`) is given to every app: V8 heap settings are
 * compared by their effect on the printed peak RSS and rates.
 *
 * It is a script, not a test: it prints figures and never asserts on time.
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Partitioners } from 'kafkajs';
import { Pool } from 'pg';
import { ensureBroker, freshDatabase } from '../scripts/stack/infra';
import { kafkaClient } from '../scripts/stack/kafka-io';
import { PaymentStack, sandboxMerchantsWithDelay } from '../scripts/stack/payment-stack';
import { RUN_DIR, run } from '../scripts/stack/processes';

const SALES = Number(process.env.BENCH_SALES ?? 300);
const RATE = Number(process.env.BENCH_RATE ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const FLOOR_MESSAGES = Number(process.env.BENCH_FLOOR_MESSAGES ?? 3_000);
const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Appended to the benchmark's database names, so two checkouts can run it on one server. */
const DB_SUFFIX = process.env.BENCH_DB_SUFFIX ?? '';
const COUNT_STATEMENTS = process.env.BENCH_COUNT_STATEMENTS === '1';
const CONCURRENCY = 3; // KAFKA_CONSUMER_CONCURRENCY default of the apps
const PARTITIONS = 6; // KAFKA_TOPIC_PARTITIONS default of the apps

interface Figures {
  readonly count: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
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
    max: sorted.at(-1) ?? NaN,
  };
}

/**
 * The floor: what a consume → INSERT → produce service does on this broker and database. Naive:
 * per message, one INSERT and one produce, three partitions at a time (the apps' concurrency).
 * Batched: per fetched batch, one multi-row INSERT and one produce call.
 */
async function floor(
  brokers: string[],
  databaseUrl: string,
  mode: 'naive' | 'batched',
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

/**
 * Open loop: sale i is sent at start + i / RATE whatever happened before (one send per slot, never
 * batched to catch up), its latency measured from that scheduled time to its final event.
 */
async function openLoop(
  stack: PaymentStack,
): Promise<Figures & { approved: number; charges: number; lateSends: number }> {
  const count = Math.round(RATE * SECONDS);
  const sales = Array.from({ length: count }, (_, i) =>
    stack.sale({ cvv: '123', amountMinor: 5_000 + i }),
  );
  const scheduled = new Map<string, number>();
  const start = Date.now() + 200;
  let lateSends = 0;
  const sends: Promise<void>[] = [];
  for (const [i, sale] of sales.entries()) {
    const at = start + Math.floor((i * 1000) / RATE);
    scheduled.set(sale.paymentId, at);
    const wait = at - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    else if (wait < -10) lateSends++;
    sends.push(stack.send(sale));
  }
  await Promise.all(sends);
  const finals = await withTimeout(
    Promise.all(
      sales.map((s) =>
        stack.events.waitFor(
          s.paymentId,
          (e) => ['approved', 'declined', 'failed', 'command-rejected'].includes(e.type),
          600_000,
        ),
      ),
    ),
    620_000,
    'open loop',
  );
  const last = Math.max(...finals.map((f) => f.receivedAt));
  const latencies = finals.map((f) => f.receivedAt - (scheduled.get(f.event.paymentId) ?? start));
  const ledger = await stack.controls.ledger();
  const ids = new Set(sales.map((s) => s.paymentId));
  return {
    ...figures(latencies, (last - start) / 1000),
    approved: finals.filter((f) => f.event.type === 'approved').length,
    charges: ledger.entries.filter((e) => e.movement === 'charged' && ids.has(e.clientOrderId))
      .length,
    lateSends,
  };
}

/** What each app's process used while some work ran: peak VmRSS (MiB) and CPU seconds. */
interface AppUsage {
  readonly rss: Record<string, number>;
  readonly cpu: Record<string, number>;
  /** CPU seconds of the whole machine (every core: broker, PostgreSQL, the apps, this script). */
  readonly machineCpu: number;
}

/** Busy CPU seconds of the whole machine since boot (/proc/stat: all but idle and iowait). */
function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const [, ...ticks] = line.trim().split(/\s+/).map(Number);
  const busy = ticks.reduce((sum, t, i) => (i === 3 || i === 4 ? sum : sum + (t || 0)), 0);
  return busy / TICKS_PER_SECOND;
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function cpuSeconds(pid: number): number | undefined {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are 14th and 15th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Runs `work` while sampling each app's process every 250 ms (peak RSS, CPU used). */
async function measured<T>(
  stack: PaymentStack,
  work: () => Promise<T>,
): Promise<{ result: T; usage: AppUsage }> {
  const rss: Record<string, number> = {};
  const cpuAtStart: Record<string, number> = {};
  const cpu: Record<string, number> = {};
  const pids = Object.entries(stack.apps).flatMap(([name, app]) =>
    app.child.pid === undefined ? [] : [[name, app.child.pid] as const],
  );
  const sample = () => {
    for (const [name, pid] of pids) {
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
        if (Number.isFinite(kib)) rss[name] = Math.max(rss[name] ?? 0, kib / 1024);
      } catch {
        // the process ended; its last sample stands
      }
      const used = cpuSeconds(pid);
      if (used === undefined) continue;
      cpuAtStart[name] ??= used;
      cpu[name] = used - (cpuAtStart[name] ?? used);
    }
  };
  sample();
  const machineAtStart = machineBusySeconds();
  const timer = setInterval(sample, 250);
  try {
    const result = await work();
    sample();
    return { result, usage: { rss, cpu, machineCpu: machineBusySeconds() - machineAtStart } };
  } finally {
    clearInterval(timer);
  }
}

function usageLines(mode: string, usage: AppUsage, seconds: number): string {
  const apps = Object.keys(usage.rss);
  const rss = apps.map((a) => `${a} ${(usage.rss[a] ?? 0).toFixed(0)} MiB`).join(', ');
  const cpu = apps
    .map(
      (a) =>
        `${a} ${(usage.cpu[a] ?? 0).toFixed(1)} s (${(((usage.cpu[a] ?? 0) / seconds) * 100).toFixed(0)} %)`,
    )
    .join(', ');
  const cores = usage.machineCpu / seconds;
  return `${mode}: peak RSS ${rss}\n${mode}: CPU over ${seconds.toFixed(1)} s ${cpu}; whole machine ${usage.machineCpu.toFixed(1)} s (${cores.toFixed(2)} of ${availableParallelism()} cores busy)\n`;
}

interface CpuProfile {
  readonly nodes: Array<{ id: number; callFrame: { functionName: string; url: string } }>;
  readonly samples: number[];
  readonly timeDeltas: number[];
}

/** Where a function lives, coarsely: a package, one of our files, node's own code, or V8. */
function origin(url: string, name: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg !== undefined) return pkg;
  const ours = /\/dist\/((?:apps|libs)\/[^/]+)\//.exec(url)?.[1];
  if (ours !== undefined) return ours;
  if (url.startsWith('node:')) return 'node (core)';
  if (url === '') return name === '(garbage collector)' ? 'GC' : `(${name || 'native'})`;
  return path.basename(url);
}

/** Self time by origin, per app, from the profiles the apps wrote when they stopped. */
function summariseProfiles(dir: string, appOfPid: ReadonlyMap<string, string>): string {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  } catch {
    return `no CPU profiles in ${dir}\n`;
  }
  const lines = [`\nCPU profiles (${dir}): self time by origin, top 8 per process`];
  for (const file of files) {
    const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
    const self = new Map<string, number>();
    let total = 0;
    profile.samples.forEach((id, i) => {
      const frame = byId.get(id);
      const us = profile.timeDeltas[i] ?? 0;
      if (!frame || frame.functionName === '(idle)' || frame.functionName === '(program)') return;
      const key = origin(frame.url, frame.functionName);
      self.set(key, (self.get(key) ?? 0) + us);
      total += us;
    });
    const top = [...self]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([key, us]) => `${key} ${((us / total) * 100).toFixed(0)} %`);
    // CPU.<date>.<time>.<pid>.<tid>.<seq>.cpuprofile
    const pid = file.split('.')[3] ?? '';
    const app = appOfPid.get(pid) ?? `pid ${pid}`;
    lines.push(`  ${app}: ${(total / 1e6).toFixed(1)} s busy — ${top.join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The orchestrator's statement counts so far (count-statements.cjs writes them on SIGUSR2). */
async function statementCounts(pid: number, file: string): Promise<Map<string, number>> {
  const seqOf = () => {
    try {
      return (JSON.parse(readFileSync(file, 'utf8')) as { seq: number }).seq;
    } catch {
      return 0;
    }
  };
  const before = seqOf();
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 10_000;
  while (seqOf() <= before) {
    if (Date.now() > deadline) throw new Error('no statement counts from the orchestrator');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { counts } = JSON.parse(readFileSync(file, 'utf8')) as { counts: Record<string, number> };
  return new Map(Object.entries(counts));
}

/** Statements per sale between two snapshots, by statement text, largest first. */
function statementLines(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
  sales: number,
): string {
  const diff = [...after]
    .map(([text, n]) => [text, n - (before.get(text) ?? 0)] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  const total = diff.reduce((sum, [, n]) => sum + n, 0);
  const lines = [
    `\norchestrator SQL statements over the closed loop: ${total} (${(total / sales).toFixed(2)} per sale)`,
    ...diff.map(([text, n]) => `  ${(n / sales).toFixed(2).padStart(6)}  ${text}`),
  ];
  return `${lines.join('\n')}\n`;
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
  const ms = (v: number) => String(v).padStart(7);
  return `${name.padEnd(38)} ${String(f.count).padStart(6)} ${f.seconds.toFixed(1).padStart(8)} ${f.perSecond.toFixed(1).padStart(9)} ${unit.padEnd(9)} ${ms(f.p50)} ${ms(f.p95)} ${ms(f.p99)} ${ms(f.max)}`;
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
    const orchestratorDb = await freshDatabase(SERVER_URL, `payments_bench${DB_SUFFIX}`);
    const adapterDb = await freshDatabase(SERVER_URL, `payments_bench_adapter${DB_SUFFIX}`);
    const floorDb = await freshDatabase(SERVER_URL, `payments_bench_floor${DB_SUFFIX}`);
    const profileDir = path.join(workDir, 'profiles');
    // BENCH_CPU_PROFILE=1: every app writes a V8 CPU profile when it stops; summarised below.
    const nodeOptions = [
      process.env.BENCH_NODE_OPTIONS ?? '',
      process.env.BENCH_CPU_PROFILE === '1' ? `--cpu-prof --cpu-prof-dir=${profileDir}` : '',
    ]
      .filter((o) => o !== '')
      .join(' ');
    const profiling: Record<string, string> =
      nodeOptions === '' ? {} : { NODE_OPTIONS: nodeOptions };
    const countFile = path.join(workDir, 'statement-counts.json');
    const counting: Record<string, string> = COUNT_STATEMENTS
      ? {
          NODE_OPTIONS: [
            profiling.NODE_OPTIONS ?? '',
            `--require ${path.join(__dirname, 'support', 'count-statements.cjs')}`,
          ].join(' '),
          STATEMENT_COUNT_FILE: countFile,
        }
      : {};
    stack = await PaymentStack.start({
      kafkaBrokers: broker.brokers,
      orchestratorDatabaseUrl: orchestratorDb,
      adapterDatabaseUrl: adapterDb,
      workDir,
      logLevel: 'warn',
      env: {
        'gateway-sandbox': {
          ...profiling,
          SANDBOX_MERCHANTS_FILE: sandboxMerchantsWithDelay(
            workDir,
            Number(process.env.BENCH_GATEWAY_DELAY_MS ?? 20),
          ),
        },
        'gateway-adapter': {
          ...profiling,
          GATEWAY_RATE_PER_SECOND: '1000',
          GATEWAY_RATE_BURST: '1000',
          GATEWAY_MAX_CONCURRENT: '32',
        },
        orchestrator: { ...profiling, ...counting },
        'callback-ingest': profiling,
      },
    });
    process.stdout.write('stack up; warming up with 20 sales\n');
    const warm = Array.from({ length: 20 }, () => stack!.sale({ cvv: '123' }));
    await stack.send(...warm);
    await Promise.all(
      warm.map((s) => stack!.events.waitForType(s.paymentId, ['approved'], 120_000)),
    );
    await stack.controls.reset();

    process.stdout.write('measuring the pipeline (closed loop)...\n');
    const orchestratorPid = stack.apps.orchestrator.child.pid;
    const countsBefore =
      COUNT_STATEMENTS && orchestratorPid !== undefined
        ? await statementCounts(orchestratorPid, countFile)
        : undefined;
    const closed = await measured(stack, () => pipeline(stack!));
    const statements =
      countsBefore !== undefined && orchestratorPid !== undefined
        ? statementLines(countsBefore, await statementCounts(orchestratorPid, countFile), SALES)
        : '';
    const ours = closed.result;
    let open: Awaited<ReturnType<typeof openLoop>> | undefined;
    let openUsage: AppUsage | undefined;
    if (RATE > 0) {
      process.stdout.write(
        `measuring latency at ${RATE} sales/s for ${SECONDS} s (open loop)...\n`,
      );
      await stack.controls.reset();
      const run = await measured(stack, () => openLoop(stack!));
      open = run.result;
      openUsage = run.usage;
    }
    const appOfPid = new Map(
      Object.entries(stack.apps).map(([name, app]) => [String(app.child.pid), name]),
    );
    await stack.stop();
    stack = undefined;
    if (process.env.BENCH_CPU_PROFILE === '1') {
      process.stdout.write(summariseProfiles(profileDir, appOfPid));
    }
    process.stdout.write('measuring the floors on the same broker and database server...\n');
    const naive = await floor(broker.brokers, floorDb, 'naive');
    const batched = await floor(broker.brokers, floorDb, 'batched');

    process.stdout.write(
      `\n${'run'.padEnd(38)} ${'count'.padStart(6)} ${'seconds'.padStart(8)} ${'rate'.padStart(9)} ${''.padEnd(9)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'max ms'.padStart(7)}\n`,
    );
    process.stdout.write(`${row('sales, closed loop, command → final', ours, 'sales/s')}\n`);
    if (open !== undefined) {
      process.stdout.write(`${row(`sales, open loop at ${RATE}/s`, open, 'sales/s')}\n`);
    }
    process.stdout.write(`${row('floor naive, per message', naive, 'msgs/s')}\n`);
    process.stdout.write(`${row('floor batched, per fetched batch', batched, 'msgs/s')}\n`);
    process.stdout.write(
      `\nclosed loop: approved ${ours.approved}/${ours.count}; gateway charges ${ours.charges} (one per sale expected)\n`,
    );
    if (open !== undefined) {
      process.stdout.write(
        `open loop: approved ${open.approved}/${open.count}; gateway charges ${open.charges} (one per sale expected); sends later than their slot by > 10 ms: ${open.lateSends}\n`,
      );
    }
    process.stdout.write(
      `ratio sales/s ÷ naive floor msgs/s: ${(ours.perSecond / naive.perSecond).toFixed(3)}; ÷ batched floor: ${(ours.perSecond / batched.perSecond).toFixed(4)}\n`,
    );
    process.stdout.write(usageLines('closed loop', closed.usage, ours.seconds));
    process.stdout.write(statements);
    if (open !== undefined && openUsage !== undefined) {
      process.stdout.write(usageLines('open loop', openUsage, open.seconds));
    }
    process.stdout.write(
      `gateway processing delay in the sandbox: ${process.env.BENCH_GATEWAY_DELAY_MS ?? 20} ms per operation\n`,
    );
    process.stdout.write(`apps' NODE_OPTIONS: ${nodeOptions === '' ? '(none)' : nodeOptions}\n`);
  } finally {
    await stack?.stop();
    await broker.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
