/**
 * What surviving a lost machine costs per sale: the same closed loop of sales through the whole
 * stack (commands on Kafka → the orchestrator → the adapter → the sandbox → the final event) on
 * three set-ups, one after the other on this machine:
 *  - `single`:   the machine's PostgreSQL (DATABASE_URL, default 127.0.0.1:5432) and one broker;
 *  - `pg-ha`:    the replicated PostgreSQL of scripts/with-pg-ha.sh (pg_auto_failover, a primary
 *                and a synchronous standby: every COMMIT waits for the standby's flush) and the
 *                same broker;
 *  - `kafka-3`:  the machine's PostgreSQL and a three-node KRaft cluster (kafka.sh cluster-start),
 *                the apps' topics created with replication 3 and min.insync.replicas 2 (acks=all:
 *                every write waits for a second broker).
 * For each: sales/s, latency p50/p99 (command sent → final event), CPU per sale of every process
 * (bench/support/breakdown.ts: apps, broker JVM(s), the PostgreSQL backends of the bench's
 * databases; all, and net of what the process burns idle, measured over 5 s before the loop), what replication itself burns (pg-ha: the standby's processes and the primary's WAL
 * senders; kafka-3: the three JVMs together), the outbox relay's round time from its own metric
 * (orchestrator_outbox_round_seconds: rounds per sale, mean, p50/p99 bucket bounds), and a commit
 * micro-benchmark (one-row INSERTs in autocommit, one at a time: what one synchronous COMMIT adds).
 * Each sale must be charged once (the sandbox's ledger). The machine's load average is printed
 * beside every figure: on a shared machine the figures move with it.
 *
 *   npm run bench:replication   # runs inside scripts/with-pg-ha.sh; BENCH_SALES=300
 *   BENCH_SETUPS=single,pg-ha npm run bench:replication   # a subset, in that order
 *
 * It is a script, not a test: it prints figures and never asserts on time.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import { newPgClient } from '@payments/database';
import {
  type Broker,
  ensureBroker,
  freshDatabase,
  type OwnBroker,
  startOwnBroker,
} from '../scripts/stack/infra';
import { kafkaClient } from '../scripts/stack/kafka-io';
import {
  type AppName,
  PaymentStack,
  sandboxMerchantsWithDelay,
} from '../scripts/stack/payment-stack';
import { haUrl, pgHa } from '../scripts/stack/pg-ha';
import { RUN_DIR, run } from '../scripts/stack/processes';
import {
  cpuSeconds,
  idleCost,
  listenerPid,
  measureBreakdown,
  type Processes,
} from './support/breakdown';
import { type Figures, figures, withTimeout } from './support/floor';
import { bucketsSince, type Buckets, quantileBound, scrape } from './support/truth';

const SALES = Number(process.env.BENCH_SALES ?? 300);
const COMMITS = Number(process.env.BENCH_COMMITS ?? 500);
const KAFKA_PORT = Number(process.env.BENCH_KAFKA_PORT ?? 29292);
const CLUSTER_PORT = Number(process.env.BENCH_KAFKA_CLUSTER_PORT ?? 29392);
const SINGLE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SETUPS = (process.env.BENCH_SETUPS ?? 'single,pg-ha,kafka-3').split(',');
const ROUND_METRIC = 'orchestrator_outbox_round_seconds';
const IDLE_SECONDS = 5;

const load1 = (): string => (loadavg()[0] ?? NaN).toFixed(1);

interface SetupResult {
  readonly name: string;
  readonly sales: Figures;
  readonly chargedOnce: number;
  /** CPU ms per sale by process group: all, and net of the group's idle-time work. */
  readonly cpuMs: Record<string, { all: number; net: number }>;
  /** CPU ms per sale spent on replication itself (the standby and the WAL senders). */
  readonly replicationMs?: { all: number; net: number };
  readonly transactionsPerSale: number;
  readonly relay: string;
  readonly commit: string;
  readonly load: string;
}

/** The relay histogram's buckets (rounds that published rows) and its sum, on a /metrics text. */
function roundBuckets(text: string): { buckets: Buckets; sum: number } {
  const buckets = new Map<number, number>();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.includes('outcome="published"')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith(`${ROUND_METRIC}_sum{`)) sum += value;
    if (!line.startsWith(`${ROUND_METRIC}_bucket{`)) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (le === undefined || !Number.isFinite(value)) continue;
    const bound = le === '+Inf' ? Infinity : Number(le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + value);
  }
  return { buckets, sum };
}

function relayLine(
  before: ReturnType<typeof roundBuckets>,
  after: ReturnType<typeof roundBuckets>,
  sales: number,
): string {
  const gained = bucketsSince(before.buckets, after.buckets);
  const rounds = gained.get(Infinity) ?? 0;
  if (rounds === 0) return 'no publishing round observed';
  const bound = (q: number) => {
    const b = quantileBound(gained, q);
    return b === undefined ? '—' : b === Infinity ? '> 5 s' : `≤ ${b * 1000} ms`;
  };
  const mean = ((after.sum - before.sum) / rounds) * 1000;
  return `${rounds} publishing rounds (${(rounds / sales).toFixed(2)} per sale), mean ${mean.toFixed(1)} ms, p50 ${bound(0.5)}, p99 ${bound(0.99)}`;
}

/** One-row INSERT commits, one at a time: the latency one COMMIT has on this server. */
async function commitLatency(url: string, database: string): Promise<string> {
  const client = newPgClient(url.replace(/\/[^/?]*(\?|$)/, `/${database}$1`));
  await client.connect();
  try {
    await client.query('CREATE TABLE IF NOT EXISTS bench_commit_probe (id uuid PRIMARY KEY)');
    const times: number[] = [];
    for (let i = 0; i < COMMITS; i++) {
      const t = process.hrtime.bigint();
      await client.query('INSERT INTO bench_commit_probe (id) VALUES ($1)', [randomUUID()]);
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    const f = figures(times, 1);
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    return `${COMMITS} one-row commits: mean ${mean.toFixed(2)} ms, p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms (load ${load1()})`;
  } finally {
    await client.end();
  }
}

/** Every process below `root` (a postmaster's backends and workers), the root included. */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // ended meanwhile
    }
  }
  const out: number[] = [];
  const todo = [root];
  while (todo.length > 0) {
    const pid = todo.pop() as number;
    out.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return out;
}

const cpuOf = (pids: readonly number[]): number =>
  pids.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0);

/** The pg-ha standby's postmaster and the primary's WAL senders: replication's own processes. */
async function replicationPids(): Promise<number[]> {
  const base = Number(process.env['PG_HA_PORT'] ?? 25431);
  const state = process.env['PG_HA_STATE_DIR'] ?? `/tmp/payments-pg-ha/${base}`;
  const primary = Number(await pgHa('primary'));
  const standbyNode = primary - base === 1 ? 2 : 1;
  const standbyPostmaster = Number(
    readFileSync(`${state}/node${standbyNode}/postmaster.pid`, 'utf8').split('\n')[0],
  );
  const client = newPgClient(haUrl());
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_replication');
    return [...processTree(standbyPostmaster), ...rows.map((r) => r.pid)];
  } finally {
    await client.end();
  }
}

async function runSetup(
  name: string,
  serverUrl: string,
  brokers: readonly string[],
  brokerPids: readonly number[],
  kafkaEnv: Record<string, string>,
  statsUrl: string,
): Promise<SetupResult> {
  process.stdout.write(`\n== ${name}: starting the stack (load ${load1()})\n`);
  const workDir = path.join(RUN_DIR, `bench-replication-${randomUUID().slice(0, 8)}`);
  const probeDir = path.join(workDir, 'probes');
  mkdirSync(probeDir, { recursive: true });
  const suffix = name.replace(/[^a-z0-9]/g, '_');
  const orchestratorName = `payments_bench_repl_${suffix}`;
  const adapterName = `payments_bench_repl_adapter_${suffix}`;
  const orchestratorDb = await freshDatabase(serverUrl, orchestratorName);
  const adapterDb = await freshDatabase(serverUrl, adapterName);
  const appEnv = {
    NODE_OPTIONS: `--require ${path.join(__dirname, 'support', 'probe.cjs')}`,
    PROBE_DIR: probeDir,
    ...kafkaEnv,
  };
  const stack = await PaymentStack.start({
    kafkaBrokers: [...brokers],
    orchestratorDatabaseUrl: orchestratorDb,
    adapterDatabaseUrl: adapterDb,
    workDir,
    logLevel: 'warn',
    env: {
      'gateway-sandbox': {
        ...appEnv,
        SANDBOX_MERCHANTS_FILE: sandboxMerchantsWithDelay(workDir, 20),
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
  const statsPool = new Pool({ connectionString: statsUrl, max: 1 });
  const kafka = kafkaClient([...brokers], `bench-replication-${suffix}`);
  try {
    const warm = Array.from({ length: 20 }, () => stack.sale({ cvv: '123' }));
    await stack.send(...warm);
    await Promise.all(
      warm.map((s) => stack.events.waitForType(s.paymentId, ['approved'], 120_000)),
    );
    await stack.controls.reset();
    const processes: Processes = {
      apps: new Map(
        (Object.keys(stack.replicas) as AppName[]).flatMap((app) =>
          stack.replicas[app][0]?.child.pid === undefined
            ? []
            : [[app, stack.replicas[app][0].child.pid] as const],
        ),
      ),
      brokerPid: brokerPids.length === 1 ? brokerPids[0] : undefined,
      statsPool,
      databases: [orchestratorName, adapterName],
      kafka,
      probeDir,
    };
    const replication = name === 'pg-ha' ? await replicationPids() : [...brokerPids];
    // What every process burns with nothing in flight (heartbeats, polls, the replicas' fetches),
    // over IDLE_SECONDS: subtracted, at the same rate, from the loop's CPU for the net figures.
    const replicationIdleStart = cpuOf(replication);
    const idle = await idleCost(processes, IDLE_SECONDS);
    const replicationIdle = cpuOf(replication) - replicationIdleStart;
    const replicationBefore = cpuOf(replication);
    const loopStart = Date.now();
    const relayBefore = roundBuckets(await scrape(stack.urls.orchestrator));
    const loadStart = load1();
    process.stdout.write(`   closed loop: ${SALES} sales in bursts of 50 (load ${loadStart})\n`);
    const { result, breakdown } = await measureBreakdown(processes, async () => {
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
              (e) => ['approved', 'declined', 'failed'].includes(e.type),
              600_000,
            ),
          ),
        ),
        620_000,
        name,
      );
      const last = Math.max(...finals.map((f) => f.receivedAt));
      const ids = new Set(sales.map((s) => s.paymentId));
      const charges = new Map<string, number>();
      for (const e of (await stack.controls.ledger()).entries) {
        if (ids.has(e.clientOrderId) && e.movement === 'charged')
          charges.set(e.clientOrderId, (charges.get(e.clientOrderId) ?? 0) + 1);
      }
      return {
        sales: figures(
          finals.map((f) => f.receivedAt - (sentAt.get(f.event.paymentId) ?? first)),
          (last - first) / 1000,
        ),
        chargedOnce: [...charges.values()].filter((n) => n === 1).length,
      };
    });
    const replicationCpu = cpuOf(replication) - replicationBefore;
    const loopSeconds = (Date.now() - loopStart) / 1000;
    const idleShare = loopSeconds / IDLE_SECONDS;
    const relay = relayLine(
      relayBefore,
      roundBuckets(await scrape(stack.urls.orchestrator)),
      SALES,
    );
    const perSale = (seconds: number) => (seconds * 1000) / SALES;
    const both = (all: number, idleSeconds: number) => ({
      all: perSale(all),
      net: perSale(all - idleSeconds * idleShare),
    });
    const cpuMs: Record<string, { all: number; net: number }> = {};
    for (const [group, seconds] of Object.entries(breakdown.cpu)) {
      if (group === 'load generator') continue;
      cpuMs[group.replace(/^app /, '')] = both(seconds, idle.cpu[group] ?? 0);
    }
    if (brokerPids.length > 1) cpuMs['brokers (3)'] = both(replicationCpu, replicationIdle);
    const transactions = [...breakdown.probes.values()].reduce((s, p) => s + p.transactions, 0);
    const load = `${loadStart} → ${load1()}`;
    await stack.stop();
    const commit = await commitLatency(serverUrl, orchestratorName);
    return {
      name,
      sales: result.sales,
      chargedOnce: result.chargedOnce,
      cpuMs,
      ...(name === 'pg-ha' ? { replicationMs: both(replicationCpu, replicationIdle) } : {}),
      transactionsPerSale: transactions / SALES,
      relay,
      commit,
      load,
    };
  } finally {
    await stack.stop();
    await statsPool.end();
  }
}

function report(r: SetupResult): string {
  const pair = (ms: { all: number; net: number }) => `${ms.all.toFixed(2)} / ${ms.net.toFixed(2)}`;
  const cpu = Object.entries(r.cpuMs)
    .map(([group, ms]) => `${group} ${pair(ms)}`)
    .join(', ');
  return [
    `${r.name}: ${r.sales.count} sales, ${r.sales.perSecond.toFixed(1)} sales/s, p50 ${r.sales.p50} ms, p99 ${r.sales.p99} ms; charged once ${r.chargedOnce}/${r.sales.count}; load average (1 min) ${r.load}, ${availableParallelism()} cores`,
    `  CPU ms per sale, all / net of idle-time work: ${cpu}${r.replicationMs === undefined ? '' : `; replication (standby + WAL senders) ${pair(r.replicationMs)}`}`,
    `  transactions per sale (all apps) ${r.transactionsPerSale.toFixed(2)}`,
    `  outbox relay (${ROUND_METRIC}): ${r.relay}`,
    `  commit latency: ${r.commit}`,
  ].join('\n');
}

async function main(): Promise<void> {
  const ha = SETUPS.includes('pg-ha') ? haUrl() : undefined;
  process.stdout.write(
    `bench:replication: ${SALES} sales per set-up (${SETUPS.join(', ')}); load ${load1()}, ${availableParallelism()} cores\n`,
  );
  if (process.env.PAYMENTS_APPS_BUILT !== '1') await run('npm', ['run', '--silent', 'build']);
  const results: SetupResult[] = [];
  let broker: Broker | undefined;
  let cluster: OwnBroker | undefined;
  try {
    for (const setup of SETUPS) {
      if (setup === 'single' || setup === 'pg-ha') {
        broker ??= await ensureBroker(process.env, KAFKA_PORT);
        const port = Number(broker.brokers[0]?.split(':').at(-1));
        const pid = listenerPid(port);
        const url = setup === 'single' ? SINGLE_URL : (ha as string);
        let statsUrl = url;
        if (setup === 'pg-ha') {
          statsUrl = `postgres://postgres@127.0.0.1:${await pgHa('primary')}/postgres`;
        }
        results.push(
          await runSetup(setup, url, broker.brokers, pid === undefined ? [] : [pid], {}, statsUrl),
        );
      } else if (setup === 'kafka-3') {
        if (broker !== undefined) {
          await broker.stop(); // one JVM fewer on the machine while the cluster runs
          broker = undefined;
        }
        // The first six free ports from CLUSTER_PORT (another checkout may run a cluster there).
        let clusterPort = CLUSTER_PORT;
        while ([0, 1, 2, 3, 4, 5].some((o) => listenerPid(clusterPort + o) !== undefined)) {
          clusterPort += 10;
        }
        process.stdout.write(
          `\n== starting a three-node Kafka cluster on ${clusterPort} (+2, +4)\n`,
        );
        cluster = await startOwnBroker(clusterPort, true);
        const pids = [0, 2, 4].flatMap((o) => listenerPid(clusterPort + o) ?? []);
        results.push(
          await runSetup(
            setup,
            SINGLE_URL,
            cluster.brokers,
            pids,
            { KAFKA_REPLICATION_FACTOR: '3', KAFKA_MIN_INSYNC_REPLICAS: '2' },
            SINGLE_URL,
          ),
        );
      } else {
        throw new Error(`unknown set-up ${setup} (single, pg-ha, kafka-3)`);
      }
      process.stdout.write(`${report(results.at(-1) as SetupResult)}\n`);
    }
  } finally {
    await broker?.stop();
    await cluster?.stop();
  }
  process.stdout.write(`\n== results\n${results.map(report).join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:replication failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
