/**
 * Where a benchmark mode's cost went, per sale: CPU of every process the pipeline runs on (each
 * app replica, the broker's JVM, the PostgreSQL backends serving the benchmark's databases, this
 * load generator), Kafka messages produced per topic and consumed per group, SQL statements and
 * transactions per app, HTTP requests each app served. The machine is shared (other test runs,
 * other databases on the same PostgreSQL server): a process is attributed only when it is ours,
 * and what the machine did besides is printed as "rest of the machine", not charged to a sale.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Kafka } from 'kafkajs';
import type { Pool } from 'pg';
import { listTopics, topicEndOffsets } from '../../scripts/stack/kafka-io';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** utime + stime of a process in seconds, or undefined once it has ended. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are 14th and 15th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Busy CPU seconds of the whole machine since boot (/proc/stat: all but idle and iowait). */
export function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const [, ...ticks] = line.trim().split(/\s+/).map(Number);
  const busy = ticks.reduce((sum, t, i) => (i === 3 || i === 4 ? sum : sum + (t || 0)), 0);
  return busy / TICKS_PER_SECOND;
}

/** The process listening on a local TCP port (the broker's JVM), if it is this user's. */
export function listenerPid(port: number): number | undefined {
  try {
    const out = execFileSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' });
    const pid = /pid=(\d+)/.exec(out)?.[1];
    return pid === undefined ? undefined : Number(pid);
  } catch {
    return undefined;
  }
}

/** Every PostgreSQL server process on the machine (backends and the server's own workers). */
function postgresPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') pids.push(+entry);
    } catch {
      // ended meanwhile
    }
  }
  return pids;
}

export interface ProbeCounts {
  readonly statements: Record<string, number>;
  readonly transactions: number;
  readonly http: Record<string, number>;
}

/** Asks a process with bench/support/probe.cjs preloaded for its counts so far. */
export async function probeCounts(pid: number, dir: string): Promise<ProbeCounts | undefined> {
  const file = path.join(dir, `probe-${pid}.json`);
  const read = () => {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as ProbeCounts & { seq: number };
    } catch {
      return undefined;
    }
  };
  const before = read()?.seq ?? 0;
  try {
    process.kill(pid, 'SIGUSR2');
  } catch {
    return undefined;
  }
  const deadline = Date.now() + 10_000;
  for (;;) {
    const now = read();
    if (now !== undefined && now.seq > before) return now;
    if (Date.now() > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface Processes {
  /** Each app replica's pid, by replica name (`orchestrator`, `orchestrator#1`, ...). */
  readonly apps: ReadonlyMap<string, number>;
  readonly brokerPid: number | undefined;
  /** A pool on the PostgreSQL server, to find the backends serving `databases`. */
  readonly statsPool: Pool;
  readonly databases: readonly string[];
  readonly kafka: Kafka;
  readonly probeDir: string;
}

interface Snapshot {
  readonly topics: Map<string, number>;
  readonly groups: Map<string, number>;
  readonly probes: Map<string, ProbeCounts>;
}

/** What one mode cost, in totals (divide by the mode's sales for per-sale figures). */
export interface Breakdown {
  readonly rss: Record<string, number>;
  /** CPU seconds per process group: each replica, broker, postgres (ours), load generator. */
  readonly cpu: Record<string, number>;
  readonly machineCpu: number;
  /** Server processes of PostgreSQL that are not our backends (shared with other users). */
  readonly postgresOthers: number;
  readonly produced: Map<string, number>;
  /** Messages consumed, keyed `<group> ← <topic>`. */
  readonly consumed: Map<string, number>;
  readonly probes: Map<string, { statements: number; transactions: number; http: number }>;
  readonly statementsByText: Map<string, Map<string, number>>;
  readonly httpByRoute: Map<string, Map<string, number>>;
  readonly postgresBackends: number;
}

async function snapshot(p: Processes): Promise<Snapshot> {
  const topics = await listTopics(p.kafka, 'payments.');
  const ends = await topicEndOffsets(p.kafka, topics);
  const perTopic = new Map<string, number>();
  for (const [key, end] of ends) {
    const topic = key.slice(0, key.lastIndexOf('/'));
    perTopic.set(topic, (perTopic.get(topic) ?? 0) + end);
  }
  const admin = p.kafka.admin();
  await admin.connect();
  const groups = new Map<string, number>();
  try {
    const { groups: listed } = await admin.listGroups();
    for (const { groupId } of listed) {
      if (groupId.startsWith('bench-') || groupId.startsWith('payment-stack')) continue;
      for (const t of await admin.fetchOffsets({ groupId, topics })) {
        const sum = t.partitions.reduce((s, x) => s + Math.max(0, Number(x.offset)), 0);
        if (sum > 0) groups.set(`${groupId} ← ${t.topic}`, sum);
      }
    }
  } finally {
    await admin.disconnect();
  }
  const probes = new Map<string, ProbeCounts>();
  for (const [name, pid] of p.apps) {
    const counts = await probeCounts(pid, p.probeDir);
    if (counts !== undefined) probes.set(name, counts);
  }
  return { topics: perTopic, groups, probes };
}

function diff(after: ReadonlyMap<string, number>, before: ReadonlyMap<string, number>) {
  const out = new Map<string, number>();
  for (const [key, n] of after) {
    const d = n - (before.get(key) ?? 0);
    if (d > 0) out.set(key, d);
  }
  return out;
}

/** Runs `work` while sampling every process of the pipeline every 250 ms. */
export async function measureBreakdown<T>(
  p: Processes,
  work: () => Promise<T>,
): Promise<{ result: T; breakdown: Breakdown }> {
  const rss: Record<string, number> = {};
  const startCpu = new Map<string, number>();
  const lastCpu = new Map<string, number>();
  const backends = new Set<number>();
  const track = (key: string, pid: number, seenFromStart: boolean) => {
    const used = cpuSeconds(pid);
    if (used === undefined) return;
    if (!startCpu.has(key)) startCpu.set(key, seenFromStart ? used : 0);
    lastCpu.set(key, used);
  };
  let first = true;
  const sample = async () => {
    for (const [name, pid] of p.apps) {
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
        if (Number.isFinite(kib)) rss[name] = Math.max(rss[name] ?? 0, kib / 1024);
      } catch {
        // the process ended; its last sample stands
      }
      track(`app ${name}`, pid, true);
    }
    if (p.brokerPid !== undefined) track('broker', p.brokerPid, true);
    const { rows } = await p.statsPool.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = ANY($1::text[]) AND pid <> pg_backend_pid()',
      [p.databases],
    );
    // A backend first seen after the start was opened during the mode: all its CPU is the mode's.
    for (const { pid } of rows) {
      backends.add(pid);
      track(`pg ${pid}`, pid, first);
    }
    first = false;
  };
  const before = await snapshot(p);
  const postgresAtStart = new Map(postgresPids().map((pid) => [pid, cpuSeconds(pid) ?? 0]));
  await sample();
  const machineAtStart = machineBusySeconds();
  const selfAtStart = process.cpuUsage();
  let sampling = Promise.resolve();
  const timer = setInterval(() => {
    sampling = sampling.then(sample).catch(() => undefined);
  }, 250);
  let result: T;
  let machineCpu: number;
  let self: NodeJS.CpuUsage;
  let postgresOthers = 0;
  try {
    result = await work();
    clearInterval(timer);
    await sampling;
    await sample();
    machineCpu = machineBusySeconds() - machineAtStart;
    self = process.cpuUsage(selfAtStart);
    for (const pid of postgresPids()) {
      if (backends.has(pid)) continue;
      postgresOthers += (cpuSeconds(pid) ?? 0) - (postgresAtStart.get(pid) ?? 0);
    }
  } finally {
    clearInterval(timer);
  }
  const cpu: Record<string, number> = {};
  for (const [key, last] of lastCpu) {
    const used = last - (startCpu.get(key) ?? last);
    const group = key.startsWith('pg ') ? 'postgres' : key;
    cpu[group] = (cpu[group] ?? 0) + used;
  }
  cpu['load generator'] = (self.user + self.system) / 1e6;
  // The probes' counts and group offsets are read once the last event has been seen; a consumer
  // commits its offsets moments after handling, so give the commits a second to land.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const after = await snapshot(p);
  const probes = new Map<string, { statements: number; transactions: number; http: number }>();
  const statementsByText = new Map<string, Map<string, number>>();
  const httpByRoute = new Map<string, Map<string, number>>();
  for (const [name, now] of after.probes) {
    const was = before.probes.get(name);
    const statements = diff(
      new Map(Object.entries(now.statements)),
      new Map(Object.entries(was?.statements ?? {})),
    );
    // Requests the benchmark itself makes (the sandbox's test controls, health checks) are not a sale's.
    const http = new Map(
      [...diff(new Map(Object.entries(now.http)), new Map(Object.entries(was?.http ?? {})))].filter(
        ([route]) => !/ \/(_sandbox|health|metrics)/.test(route),
      ),
    );
    statementsByText.set(name, statements);
    httpByRoute.set(name, http);
    probes.set(name, {
      statements: [...statements.values()].reduce((s, n) => s + n, 0),
      transactions: now.transactions - (was?.transactions ?? 0),
      http: [...http.values()].reduce((s, n) => s + n, 0),
    });
  }
  return {
    result,
    breakdown: {
      rss,
      cpu,
      machineCpu,
      postgresOthers,
      produced: diff(after.topics, before.topics),
      consumed: diff(after.groups, before.groups),
      probes,
      statementsByText,
      httpByRoute,
      postgresBackends: backends.size,
    },
  };
}

/** CPU seconds per process group over a stretch with no sales in flight. */
export interface IdleCost {
  readonly cpu: Record<string, number>;
  readonly seconds: number;
}

/** What the pipeline's processes use with nothing to do, over `seconds`. */
export async function idleCost(p: Processes, seconds: number): Promise<IdleCost> {
  const { breakdown } = await measureBreakdown(
    p,
    () => new Promise((resolve) => setTimeout(resolve, seconds * 1000)),
  );
  return { cpu: breakdown.cpu, seconds };
}

const ms = (seconds: number, sales: number) => ((seconds * 1000) / sales).toFixed(2);
const per = (n: number, sales: number) => (n / sales).toFixed(2);

/** The breakdown as printed lines, per sale. */
export function breakdownLines(
  mode: string,
  b: Breakdown,
  sales: number,
  seconds: number,
  byText: boolean,
  idle?: IdleCost,
): string {
  const lines: string[] = [];
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  lines.push(
    `\n${mode}: cost per sale over ${sales} sales, ${seconds.toFixed(1)} s (load average ${load})`,
  );
  const entries = Object.entries(b.cpu).sort((x, y) => y[1] - x[1]);
  const ours = entries.reduce((s, [, v]) => s + v, 0);
  // What a process burns with no sale in flight (timers, polls, heartbeats) grows per sale as the
  // rate falls: shown apart, so a slow run on a busy machine does not read as a costlier sale.
  const idleOf = (name: string) =>
    idle === undefined ? 0 : ((idle.cpu[name] ?? 0) / idle.seconds) * seconds;
  lines.push(
    `  CPU ms per sale: all / of it idle-time work (the process's rate with no sales × the mode's time) / net; share of a core:`,
  );
  for (const [name, used] of entries) {
    const idleUsed = Math.min(used, idleOf(name));
    lines.push(
      `    ${name.replace(/^app /, '').padEnd(26)} ${ms(used, sales).padStart(7)} ${ms(idleUsed, sales).padStart(7)} ${ms(used - idleUsed, sales).padStart(7)}  (${((used / seconds) * 100).toFixed(0)} %)`,
    );
  }
  const idleAll = entries.reduce((sum, [name, used]) => sum + Math.min(used, idleOf(name)), 0);
  lines.push(
    `    ${'= the pipeline'.padEnd(26)} ${ms(ours, sales).padStart(7)} ${ms(idleAll, sales).padStart(7)} ${ms(ours - idleAll, sales).padStart(7)}`,
  );
  lines.push(
    `    ${'postgres server, shared'.padEnd(26)} ${ms(b.postgresOthers, sales).padStart(7)}  (WAL writer, checkpointer, other databases' backends: not only ours)`,
  );
  lines.push(
    `    ${'rest of the machine'.padEnd(26)} ${ms(Math.max(0, b.machineCpu - ours - b.postgresOthers), sales).padStart(7)}  (other users of the machine; whole machine ${ms(b.machineCpu, sales)})`,
  );
  lines.push(`  PostgreSQL backends serving the benchmark's databases: ${b.postgresBackends}`);
  lines.push(`  Kafka messages produced per sale, by topic:`);
  for (const [topic, n] of [...b.produced].sort()) lines.push(`    ${per(n, sales)}  ${topic}`);
  lines.push(
    `    ${per(
      [...b.produced.values()].reduce((s, n) => s + n, 0),
      sales,
    )}  (all)`,
  );
  lines.push(`  Kafka messages consumed per sale, by group ← topic:`);
  for (const [key, n] of [...b.consumed].sort()) lines.push(`    ${per(n, sales)}  ${key}`);
  lines.push(`  SQL per sale, by app replica: statements / transactions; HTTP requests served:`);
  for (const [name, p] of [...b.probes].sort()) {
    const routes = [...(b.httpByRoute.get(name) ?? new Map<string, number>())]
      .map(([route, n]) => `${route} ${per(n, sales)}`)
      .join(', ');
    lines.push(
      `    ${name.padEnd(22)} ${per(p.statements, sales).padStart(6)} / ${per(p.transactions, sales).padStart(5)}   http ${per(p.http, sales)}${routes === '' ? '' : ` (${routes})`}`,
    );
  }
  if (byText) {
    for (const [name, texts] of b.statementsByText) {
      if (texts.size === 0) continue;
      lines.push(`  ${name} statements per sale, by text:`);
      for (const [text, n] of [...texts].sort((x, y) => y[1] - x[1])) {
        lines.push(`    ${per(n, sales).padStart(6)}  ${text}`);
      }
    }
  }
  return `${lines.join('\n')}\n`;
}
