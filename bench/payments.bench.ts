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
 * Each mode's cost is broken down per sale (bench/support/breakdown.ts): CPU of every app replica,
 * the broker's JVM, the PostgreSQL backends serving the benchmark's databases and this load
 * generator; Kafka messages produced per topic and consumed per group; SQL statements and
 * transactions per app and HTTP requests each app served (bench/support/probe.cjs, preloaded into
 * every app); peak RSS per replica. The open loop also prints where a sale's time goes, hop by hop
 * (bench/support/hops.ts). Every sale must be charged exactly once (the sandbox's ledger is
 * checked) and each payment's events must arrive in version order.
 *
 *   npm run bench:payments   # BENCH_SALES=300 BENCH_RATE=50 BENCH_SECONDS=20 BENCH_FLOOR_MESSAGES=3000
 *
 * BENCH_REPLICAS=2 runs two replicas of the orchestrator, the adapter and callback-ingest (same
 * consumer groups and databases, a balancer in front of their HTTP ports). BENCH_KAFKA_PORT picks
 * the throw-away broker's port. BENCH_COUNT_STATEMENTS=1 prints every app's statements per sale
 * by text. BENCH_FLOOR_MESSAGES=0 skips the floors. BENCH_PAIR=`<app>[+<app>]:<VAR>=<before>,<after>`
 * runs a before/after pair instead (the apps restarted with each value; a closed loop and, unless
 * BENCH_RATE=0, an open loop with its hops per value). BENCH_NODE_OPTIONS (e.g.
 * `--max-semi-space-size=4`) is given to every app.
 *
 * It is a script, not a test: it prints figures and never asserts on time.
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Kafka } from 'kafkajs';
import { Pool } from 'pg';
import { ensureBroker, freshDatabase } from '../scripts/stack/infra';
import { kafkaClient } from '../scripts/stack/kafka-io';
import {
  type AppName,
  PaymentStack,
  sandboxMerchantsWithDelay,
} from '../scripts/stack/payment-stack';
import { RUN_DIR, run } from '../scripts/stack/processes';
import {
  type Breakdown,
  breakdownLines,
  idleCost,
  listenerPid,
  measureBreakdown,
  type Processes,
} from './support/breakdown';
import { type Figures, figures, floor, withTimeout } from './support/floor';
import { hopLatencies, hopLines, hopOffsets, type SaleTimes } from './support/hops';
import { journalCostLines, journalCounts } from './support/journal-cost';
import {
  bucketsSince,
  scrape,
  scrapeApp,
  statusAdmissions,
  statusBudgetLine,
  truthBuckets,
  truthHistogramLine,
} from './support/truth';

const SALES = Number(process.env.BENCH_SALES ?? 300);
const RATE = Number(process.env.BENCH_RATE ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const FLOOR_MESSAGES = Number(process.env.BENCH_FLOOR_MESSAGES ?? 3_000);
const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Appended to the benchmark's database names, so two checkouts can run it on one server. */
const DB_SUFFIX = process.env.BENCH_DB_SUFFIX ?? '';
const COUNT_STATEMENTS = process.env.BENCH_COUNT_STATEMENTS === '1';
/** Replicas of the orchestrator, the adapter and callback-ingest (the sandbox plays one gateway). */
const REPLICAS = Number(process.env.BENCH_REPLICAS ?? 1);
/** The throw-away broker's port (and port + 1), unless KAFKA_BROKERS names one. */
const KAFKA_PORT = Number(process.env.BENCH_KAFKA_PORT ?? 29192);
/** `<app>:<VAR>=<before>,<after>`: a before/after pair of closed loops instead of the modes. */
const PAIR = process.env.BENCH_PAIR;
const CONCURRENCY = 3; // KAFKA_CONSUMER_CONCURRENCY default of the apps
const PARTITIONS = 6; // KAFKA_TOPIC_PARTITIONS default of the apps
const FLOOR = { messages: FLOOR_MESSAGES, partitions: PARTITIONS, concurrency: CONCURRENCY };

/** What a mode's sales came to: latency figures, outcomes, the ledger's charges, per-sale times. */
interface ModeResult extends Figures {
  readonly approved: number;
  /** Charged movements in the sandbox's ledger for these sales (one per sale expected). */
  readonly charges: number;
  /** Sales charged more than once. */
  readonly chargedTwice: number;
  /** Sales whose events arrived out of their version order, or with a version missing. */
  readonly outOfOrder: number;
  readonly times: SaleTimes[];
  readonly ledger: ReadonlyArray<{ clientOrderId: string; movement: string; at: number }>;
  /**
   * Time to truth: from the sandbox's ledger charge (the gateway moved the money) to the arrival
   * of the final event that reports it, per charged sale.
   */
  readonly truth: Figures;
  /** The machine's load average (1 min) when the mode started and when its sales settled. */
  readonly load: { readonly start: number; readonly end: number };
}

/** The machine's 1-minute load average. */
const load1 = (): number => loadavg()[0] ?? NaN;

/**
 * Per sale charged in the ledger: its first charge's time to the arrival of its final event
 * (what a finance system waits for after the gateway moved the money).
 */
function timesToTruth(
  ledger: ReadonlyArray<{ clientOrderId: string; movement: string; at: number }>,
  finals: ReadonlyArray<{ paymentId: string; receivedAt: number }>,
): number[] {
  const chargedAt = new Map<string, number>();
  for (const e of ledger) {
    if (e.movement === 'charged' && !chargedAt.has(e.clientOrderId)) {
      chargedAt.set(e.clientOrderId, e.at);
    }
  }
  return finals.flatMap(({ paymentId, receivedAt }) => {
    const at = chargedAt.get(paymentId);
    return at === undefined ? [] : [Math.max(0, receivedAt - at)];
  });
}

/**
 * Waits for every sale's final event, then checks what the sales did: each charged once in the
 * sandbox's ledger, each payment's events seen in version order (1, 2, 3 … without a gap; a
 * redelivered event is counted once).
 */
async function settle(
  stack: PaymentStack,
  sales: ReadonlyArray<{ paymentId: string }>,
  sentAt: ReadonlyMap<string, number>,
  start: number,
  what: string,
  loadAtStart: number,
): Promise<ModeResult> {
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
    what,
  );
  const last = Math.max(...finals.map((f) => f.receivedAt));
  const latencies = finals.map((f) => f.receivedAt - (sentAt.get(f.event.paymentId) ?? start));
  const ids = new Set(sales.map((s) => s.paymentId));
  const ledger = (await stack.controls.ledger()).entries.filter((e) => ids.has(e.clientOrderId));
  const chargesOf = new Map<string, number>();
  for (const e of ledger) {
    if (e.movement === 'charged')
      chargesOf.set(e.clientOrderId, (chargesOf.get(e.clientOrderId) ?? 0) + 1);
  }
  let outOfOrder = 0;
  for (const { paymentId } of sales) {
    const seen = new Set<string>();
    const versions: number[] = [];
    for (const r of stack.events.eventsOf(paymentId)) {
      if (seen.has(r.ceId)) continue;
      seen.add(r.ceId);
      versions.push(r.event.version);
    }
    if (versions.some((v, i) => v !== i + 1)) outOfOrder += 1;
  }
  const truth = timesToTruth(
    ledger,
    finals.map((f) => ({ paymentId: f.event.paymentId, receivedAt: f.receivedAt })),
  );
  return {
    ...figures(latencies, (last - start) / 1000),
    approved: finals.filter((f) => f.event.type === 'approved').length,
    charges: [...chargesOf.values()].reduce((sum, n) => sum + n, 0),
    chargedTwice: [...chargesOf.values()].filter((n) => n > 1).length,
    outOfOrder,
    times: finals.map((f) => ({
      paymentId: f.event.paymentId,
      sentAt: sentAt.get(f.event.paymentId) ?? start,
      receivedAt: f.receivedAt,
    })),
    ledger,
    truth: figures(truth, (last - start) / 1000),
    load: { start: loadAtStart, end: load1() },
  };
}

/** Closed loop: every sale sent in bursts of 50 as fast as the producer takes them. */
async function pipeline(stack: PaymentStack): Promise<ModeResult> {
  const sales = Array.from({ length: SALES }, (_, i) =>
    stack.sale({ cvv: '123', amountMinor: 1_000 + i }),
  );
  const sentAt = new Map<string, number>();
  const loadAtStart = load1();
  const first = Date.now();
  for (let i = 0; i < sales.length; i += 50) {
    const batch = sales.slice(i, i + 50);
    const now = Date.now();
    for (const s of batch) sentAt.set(s.paymentId, now);
    await stack.send(...batch);
  }
  return settle(stack, sales, sentAt, first, 'pipeline', loadAtStart);
}

/**
 * Open loop: sale i is sent at start + i / RATE whatever happened before (one send per slot, never
 * batched to catch up), its latency measured from that scheduled time to its final event.
 */
type OpenResult = ModeResult & { readonly lateSends: number };

async function openLoop(stack: PaymentStack): Promise<OpenResult> {
  const count = Math.round(RATE * SECONDS);
  const sales = Array.from({ length: count }, (_, i) =>
    stack.sale({ cvv: '123', amountMinor: 5_000 + i }),
  );
  const scheduled = new Map<string, number>();
  const loadAtStart = load1();
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
  return {
    ...(await settle(stack, sales, scheduled, start, 'open loop', loadAtStart)),
    lateSends,
  };
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

/** What a mode's sales did: approvals, charges per sale, events out of their version order. */
function checks(mode: string, r: ModeResult): string {
  return `${mode}: approved ${r.approved}/${r.count}; gateway charges ${r.charges} (one per sale expected), sales charged twice ${r.chargedTwice}; sales whose events came out of version order ${r.outOfOrder}`;
}

/** Time to truth of a mode's sales, with the machine's load beside it. */
function truthLine(mode: string, r: ModeResult): string {
  const t = r.truth;
  return `time to truth, ${mode} (sandbox ledger charge → final event received), ${t.count} sales: p50 ${t.p50} ms, p99 ${t.p99} ms, max ${t.max} ms; load average (1 min) ${r.load.start.toFixed(1)} at the start, ${r.load.end.toFixed(1)} at the end, ${availableParallelism()} cores`;
}

function row(name: string, f: Figures, unit: string): string {
  const ms = (v: number) => String(v).padStart(7);
  return `${name.padEnd(38)} ${String(f.count).padStart(6)} ${f.seconds.toFixed(1).padStart(8)} ${f.perSecond.toFixed(1).padStart(9)} ${unit.padEnd(9)} ${ms(f.p50)} ${ms(f.p95)} ${ms(f.p99)} ${ms(f.max)}`;
}

async function main(): Promise<void> {
  const workDir = path.join(RUN_DIR, `bench-${randomUUID().slice(0, 8)}`);
  mkdirSync(workDir, { recursive: true });
  process.stdout.write(
    `bench: ${SALES} sales through the stack, ${REPLICAS} replica(s) of each app; floor ${FLOOR_MESSAGES} messages\n`,
  );
  await run('npm', ['run', '--silent', 'build']);
  const broker = await ensureBroker(process.env, KAFKA_PORT);
  const statsPool = new Pool({ connectionString: SERVER_URL, max: 1 });
  let stack: PaymentStack | undefined;
  try {
    const orchestratorName = `payments_bench${DB_SUFFIX}`;
    const adapterName = `payments_bench_adapter${DB_SUFFIX}`;
    const orchestratorDb = await freshDatabase(SERVER_URL, orchestratorName);
    const adapterDb = await freshDatabase(SERVER_URL, adapterName);
    const floorDb = await freshDatabase(SERVER_URL, `payments_bench_floor${DB_SUFFIX}`);
    const profileDir = path.join(workDir, 'profiles');
    const probeDir = path.join(workDir, 'probes');
    mkdirSync(probeDir, { recursive: true });
    // Every app counts its statements, transactions and HTTP requests (bench/support/probe.cjs);
    // BENCH_CPU_PROFILE=1: every app writes a V8 CPU profile when it stops; summarised below.
    const nodeOptions = [
      process.env.BENCH_NODE_OPTIONS ?? '',
      process.env.BENCH_CPU_PROFILE === '1' ? `--cpu-prof --cpu-prof-dir=${profileDir}` : '',
      `--require ${path.join(__dirname, 'support', 'probe.cjs')}`,
    ]
      .filter((o) => o !== '')
      .join(' ');
    const appEnv: Record<string, string> = { NODE_OPTIONS: nodeOptions, PROBE_DIR: probeDir };
    stack = await PaymentStack.start({
      kafkaBrokers: broker.brokers,
      orchestratorDatabaseUrl: orchestratorDb,
      adapterDatabaseUrl: adapterDb,
      workDir,
      logLevel: 'warn',
      replicas: REPLICAS,
      env: {
        'gateway-sandbox': {
          ...appEnv,
          SANDBOX_MERCHANTS_FILE: sandboxMerchantsWithDelay(
            workDir,
            Number(process.env.BENCH_GATEWAY_DELAY_MS ?? 20),
          ),
        },
        'gateway-adapter': {
          ...appEnv,
          GATEWAY_RATE_PER_SECOND: '1000',
          GATEWAY_RATE_BURST: '1000',
          GATEWAY_MAX_CONCURRENT: '32',
        },
        orchestrator: appEnv,
        'callback-ingest': appEnv,
      },
    });
    process.stdout.write('stack up; warming up with 20 sales\n');
    const warm = Array.from({ length: 20 }, () => stack!.sale({ cvv: '123' }));
    await stack.send(...warm);
    await Promise.all(
      warm.map((s) => stack!.events.waitForType(s.paymentId, ['approved'], 120_000)),
    );
    await stack.controls.reset();

    const kafka = kafkaClient(broker.brokers, 'bench-breakdown');
    const brokerPort = Number(broker.brokers[0]?.split(':').at(-1));
    const processes: Processes = {
      apps: appPids(stack),
      brokerPid: listenerPid(brokerPort),
      statsPool,
      databases: [orchestratorName, adapterName],
      kafka,
      probeDir,
    };
    if (processes.brokerPid === undefined) {
      process.stdout.write(`no pid for the broker on port ${brokerPort}: its CPU is not shown\n`);
    }

    if (PAIR !== undefined) {
      await pairedRuns(stack, processes, PAIR, { orchestratorDb, kafka });
      return;
    }
    process.stdout.write('measuring what the processes use idle (5 s)...\n');
    const idle = await idleCost(processes, 5);
    // The orchestrator's own histogram beside the ledger's figure (one replica: its /metrics).
    const orchestratorUrl = stack.urls.orchestrator;
    // And the adapter's status budget by priority class (issue #38), from its counter.
    const adapterUrl = stack.urls['gateway-adapter'];
    const histogram = async (mode: string, work: () => Promise<unknown>): Promise<string> => {
      if (REPLICAS !== 1) return '';
      const before = truthBuckets(await scrape(orchestratorUrl), 'card-payment');
      const admittedBefore = statusAdmissions(await scrapeApp(adapterUrl));
      const startedAt = Date.now();
      await work();
      const seconds = (Date.now() - startedAt) / 1000;
      const after = truthBuckets(await scrape(orchestratorUrl), 'card-payment');
      const admittedAfter = statusAdmissions(await scrapeApp(adapterUrl));
      return `${truthHistogramLine(mode, bucketsSince(before, after))}\n${statusBudgetLine(mode, admittedBefore, admittedAfter, seconds)}; load average (1 min) ${load1().toFixed(1)}\n`;
    };
    const journalBefore = await journalCounts(orchestratorDb);
    process.stdout.write('measuring the pipeline (closed loop)...\n');
    let closed: Awaited<ReturnType<typeof measureBreakdown<ModeResult>>> | undefined;
    const closedHistogram = await histogram('closed loop', async () => {
      closed = await measureBreakdown(processes, () => pipeline(stack!));
    });
    if (closed === undefined) throw new Error('the closed loop did not run');
    const ours = closed.result;
    // The journal's cost per sale (issue #35), read now: the open loop adds rows of its own.
    const journal = await journalCostLines({
      mode: 'closed loop',
      sales: ours.count,
      breakdown: closed.breakdown,
      before: journalBefore,
      databaseUrl: orchestratorDb,
    });
    let openHistogram = '';
    let open: Awaited<ReturnType<typeof openLoop>> | undefined;
    let openBreakdown: Breakdown | undefined;
    let openHops = '';
    if (RATE > 0) {
      process.stdout.write(
        `measuring latency at ${RATE} sales/s for ${SECONDS} s (open loop)...\n`,
      );
      await stack.controls.reset();
      const hopsFrom = await hopOffsets(kafka);
      let run: Awaited<ReturnType<typeof measureBreakdown<OpenResult>>> | undefined;
      openHistogram = await histogram(`open loop at ${RATE}/s`, async () => {
        run = await measureBreakdown(processes, () => openLoop(stack!));
      });
      if (run === undefined) throw new Error('the open loop did not run');
      open = run.result;
      openBreakdown = run.breakdown;
      const hops = await hopLatencies(open.times, orchestratorDb, open.ledger, kafka, hopsFrom);
      openHops = hopLines(hops.hops, hops.complete, open.count);
    }
    const appOfPid = new Map([...processes.apps].map(([name, pid]) => [String(pid), name]));
    await stack.stop();
    stack = undefined;
    if (process.env.BENCH_CPU_PROFILE === '1') {
      process.stdout.write(summariseProfiles(profileDir, appOfPid));
    }
    let naive: Figures | undefined;
    let batched: Figures | undefined;
    if (FLOOR_MESSAGES > 0) {
      process.stdout.write('measuring the floors on the same broker and database server...\n');
      naive = await floor(broker.brokers, floorDb, 'naive', FLOOR);
      batched = await floor(broker.brokers, floorDb, 'batched', FLOOR);
    }

    process.stdout.write(
      `\n${'run'.padEnd(38)} ${'count'.padStart(6)} ${'seconds'.padStart(8)} ${'rate'.padStart(9)} ${''.padEnd(9)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'max ms'.padStart(7)}\n`,
    );
    process.stdout.write(`${row('sales, closed loop, command → final', ours, 'sales/s')}\n`);
    if (open !== undefined) {
      process.stdout.write(`${row(`sales, open loop at ${RATE}/s`, open, 'sales/s')}\n`);
    }
    if (naive !== undefined && batched !== undefined) {
      process.stdout.write(`${row('floor naive, per message', naive, 'msgs/s')}\n`);
      process.stdout.write(`${row('floor batched, per fetched batch', batched, 'msgs/s')}\n`);
    }
    process.stdout.write(`\n${truthLine('closed loop', ours)}\n${closedHistogram}`);
    if (open !== undefined) {
      process.stdout.write(`${truthLine(`open loop at ${RATE}/s`, open)}\n${openHistogram}`);
    }
    process.stdout.write(`\n${checks('closed loop', ours)}\n`);
    if (open !== undefined) {
      process.stdout.write(
        `${checks('open loop', open)}; sends later than their slot by > 10 ms: ${open.lateSends}\n`,
      );
    }
    if (naive !== undefined && batched !== undefined) {
      process.stdout.write(
        `ratio sales/s ÷ naive floor msgs/s: ${(ours.perSecond / naive.perSecond).toFixed(3)}; ÷ batched floor: ${(ours.perSecond / batched.perSecond).toFixed(4)}\n`,
      );
    }
    process.stdout.write(
      breakdownLines(
        'closed loop',
        closed.breakdown,
        ours.count,
        ours.seconds,
        COUNT_STATEMENTS,
        idle,
      ),
    );
    process.stdout.write(rssLine('closed loop', closed.breakdown));
    process.stdout.write(journal);
    if (open !== undefined && openBreakdown !== undefined) {
      process.stdout.write(
        breakdownLines('open loop', openBreakdown, open.count, open.seconds, false, idle),
      );
      process.stdout.write(rssLine('open loop', openBreakdown));
      process.stdout.write(openHops);
    }
    process.stdout.write(
      `gateway processing delay in the sandbox: ${process.env.BENCH_GATEWAY_DELAY_MS ?? 20} ms per operation; ${availableParallelism()} cores\n`,
    );
    process.stdout.write(`apps' NODE_OPTIONS: ${nodeOptions}\n`);
  } finally {
    await stack?.stop();
    await statsPool.end();
    await broker.stop();
  }
}

/** Each app replica's pid, by replica name (`orchestrator`, `orchestrator#1`, ...). */
function appPids(stack: PaymentStack): Map<string, number> {
  return new Map(
    (Object.keys(stack.replicas) as AppName[]).flatMap((app) =>
      stack.replicas[app].flatMap((replica, i) =>
        replica.child.pid === undefined
          ? []
          : [[i === 0 ? app : `${app}#${i}`, replica.child.pid] as const],
      ),
    ),
  );
}

/**
 * BENCH_PAIR=`<app>[+<app>…]:<VAR>=<before>,<after>`: a before/after pair in one run, on one
 * stack, broker and database — the apps' replicas restarted with VAR=before, a closed loop (and,
 * unless BENCH_RATE=0, an open loop with its hops), restarted with VAR=after, the same again —
 * each with its idle-time CPU and breakdown, so one step's effect is read from two runs made back
 * to back under the same machine load. Several apps: a library setting every app reads.
 */
async function pairedRuns(
  stack: PaymentStack,
  processes: Processes,
  pair: string,
  hopSources: { readonly orchestratorDb: string; readonly kafka: Kafka },
): Promise<void> {
  const parsed = /^([a-z+-]+):([A-Z0-9_]+)=([^,]*),(.*)$/.exec(pair);
  if (parsed === null) {
    throw new Error(`BENCH_PAIR ${pair}: expected <app>[+<app>]:<VAR>=<before>,<after>`);
  }
  const [, appList, variable, before, after] = parsed as unknown as [
    string,
    string,
    string,
    string,
    string,
  ];
  const apps = appList.split('+') as AppName[];
  const lines: string[] = [];
  for (const [label, value] of [
    ['before', before],
    ['after', after],
  ] as const) {
    process.stdout.write(`restarting ${apps.join(', ')} with ${variable}=${value}...\n`);
    for (const app of apps) {
      for (const name of stack.replicaNames(app)) {
        await stack.restart(name, 'SIGTERM', { [variable]: value });
      }
    }
    const warm = Array.from({ length: 20 }, () => stack.sale({ cvv: '123' }));
    await stack.send(...warm);
    await Promise.all(
      warm.map((s) => stack.events.waitForType(s.paymentId, ['approved'], 120_000)),
    );
    await stack.controls.reset();
    const now = { ...processes, apps: appPids(stack) };
    const idle = await idleCost(now, 5);
    const side = `${label} (${variable}=${value})`;
    process.stdout.write(`measuring the closed loop (${label}: ${variable}=${value})...\n`);
    const { result, breakdown } = await measureBreakdown(now, () => pipeline(stack));
    lines.push(
      `\n${label}: ${apps.join('+')} ${variable}=${value}: ${result.perSecond.toFixed(1)} sales/s; approved ${result.approved}/${result.count}; gateway charges ${result.charges}, charged twice ${result.chargedTwice}; out of version order ${result.outOfOrder}`,
      truthLine(`${label}, closed loop`, result),
      breakdownLines(side, breakdown, result.count, result.seconds, COUNT_STATEMENTS, idle),
    );
    if (RATE > 0) {
      await stack.controls.reset();
      const hopsFrom = await hopOffsets(hopSources.kafka);
      process.stdout.write(`measuring the open loop at ${RATE}/s (${label})...\n`);
      const open = await measureBreakdown(now, () => openLoop(stack));
      const hops = await hopLatencies(
        open.result.times,
        hopSources.orchestratorDb,
        open.result.ledger,
        hopSources.kafka,
        hopsFrom,
      );
      lines.push(
        `${row(`${label}: open loop at ${RATE}/s`, open.result, 'sales/s')}`,
        `${checks(`${label}: open loop`, open.result)}; sends later than their slot by > 10 ms: ${open.result.lateSends}`,
        truthLine(`${label}, open loop at ${RATE}/s`, open.result),
        breakdownLines(
          `${side}, open loop`,
          open.breakdown,
          open.result.count,
          open.result.seconds,
          COUNT_STATEMENTS,
          idle,
        ),
        hopLines(hops.hops, hops.complete, open.result.count),
      );
    }
  }
  process.stdout.write(lines.join('\n'));
}

function rssLine(mode: string, b: Breakdown): string {
  const rss = Object.entries(b.rss)
    .map(([name, mib]) => `${name} ${mib.toFixed(0)} MiB`)
    .join(', ');
  return `${mode}: peak RSS ${rss}\n`;
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
