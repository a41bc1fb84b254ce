import { ChildProcess, spawn } from 'node:child_process';
import {
  createWriteStream,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * Starting and stopping the project's processes for the demo, the e2e tests and the benchmark:
 * each app runs from the build (`dist/`) as its own OS process, with its own environment and a
 * log file under `.run/logs`, exactly as it would in a container.
 */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const RUN_DIR = path.join(REPO_ROOT, '.run');

export interface AppProcessSpec {
  /** App folder name under apps/, e.g. 'orchestrator'. */
  readonly app: string;
  readonly env: Readonly<Record<string, string>>;
  /** URL that answers 200 once the app is ready to take traffic. */
  readonly readyUrl: string;
  /** Where stdout/stderr go; defaults to .run/logs/<app>.log. */
  readonly logFile?: string;
}

export interface RunningApp {
  readonly spec: AppProcessSpec;
  readonly child: ChildProcess;
  readonly logFile: string;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  readonly exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | string>;
}

/**
 * V8 settings of every app process, as the image sets them (deploy/docker/Dockerfile): young
 * generation semi-spaces of 8 MiB instead of Node 24's larger default cut each app's peak RSS by
 * 35–115 MiB under load at ≈ 5 % of throughput (bench/README.md). Given first in
 * NODE_OPTIONS, so that a caller's own setting (the bench's BENCH_NODE_OPTIONS) wins.
 */
export const APP_NODE_OPTIONS = '--max-semi-space-size=8';

export function appEntry(app: string): string {
  return path.join(REPO_ROOT, 'dist', 'apps', app, 'src', 'main.js');
}

/** App processes started here and not yet exited: killed when this process ends. */
const live = new Set<ChildProcess>();
let exitHook = false;

function killLive(): void {
  for (const child of live) child.kill('SIGKILL');
}

/**
 * Ends every app process started here when this process is interrupted (SIGINT, SIGTERM), then
 * exits 130 / 143, for command-line runs (chaos, demo): without it an interrupted run leaves its
 * apps running, and they join the next run's stack (same ports, database names and consumer
 * groups) with whatever code they had. The infrastructure (brokers, pg-ha) is left to its own
 * stop commands (test/chaos.md).
 */
export function stopAppsOnSignals(): void {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      process.stderr.write(`${signal}: stopping ${live.size} app process(es)\n`);
      killLive();
      process.exit(code);
    });
  }
}

export function startApp(spec: AppProcessSpec): RunningApp {
  const logFile = spec.logFile ?? path.join(RUN_DIR, 'logs', `${spec.app}.log`);
  mkdirSync(path.dirname(logFile), { recursive: true });
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(process.execPath, [appEntry(spec.app)], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...spec.env,
      NODE_OPTIONS: [process.env.NODE_OPTIONS, APP_NODE_OPTIONS, spec.env.NODE_OPTIONS]
        .filter((o) => o !== undefined && o !== '')
        .join(' '),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', killLive);
  }
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      log.end();
      resolve(code ?? signal ?? 'unknown');
    });
  });
  const stop = async (signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return exited;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const result = await exited;
    clearTimeout(timer);
    return result;
  };
  return { spec, child, logFile, exited, stop };
}

/** Polls `url` until it answers 2xx; fails early if the process exits. */
export async function waitForReady(app: RunningApp, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitedWith: number | string | undefined;
  void app.exited.then((code) => (exitedWith = code));
  let lastError = '';
  while (Date.now() < deadline) {
    if (exitedWith !== undefined) {
      throw new Error(
        `${app.spec.app} exited (${exitedWith}) before it was ready; see ${app.logFile}`,
      );
    }
    try {
      const response = await fetch(app.spec.readyUrl, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
      lastError = `HTTP ${response.status}`;
    } catch (error) {
      lastError = (error as Error).message;
    }
    await sleep(250);
  }
  throw new Error(
    `${app.spec.app} not ready at ${app.spec.readyUrl} after ${timeoutMs} ms (${lastError}); see ${app.logFile}`,
  );
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Ports handed out by {@link freePort} and {@link freePortBlock}, one file a port, across every
 * process of this machine: jest's workers start stacks at the same time, and a port called free
 * in one worker could be called free in another before the first stack's app listened on it
 * (seen in npm test: two stacks' callback-ingest on one port — the loser exited EADDRINUSE, the
 * winner answered the loser's readiness probe, and the sandbox's callbacks went to the other
 * stack's saga store).
 */
const PORT_RESERVATIONS = path.join(os.tmpdir(), 'payments-stack-ports');
/** A reservation older than this is stale (its stack is long up or gone): the port may be reused. */
const RESERVATION_MS = 15 * 60_000;
/** The allocator's ports start here (below: with-infra.sh's brokers from 19092, kafka.sh's 9092…). */
export const PORT_RANGE_LOW = 20_000;
/**
 * Ports other scripts bind at fixed numbers or search upwards from, never handed out (they run
 * beside the tests: `npm run chaos` while `npm test` runs, the failover suite inside it):
 * replicated PostgreSQL (with-pg-ha.sh 25431, +10…; the chaos run 25481, +10…; the failover suite
 * 25531, +10…; monitor and two nodes each) and the brokers of the demo (29092), the bench
 * (29192, 29292, 29300, 29392) and the chaos run (29292, a cluster 29392–29397).
 */
export const FIXED_PORT_RANGES: readonly (readonly [number, number])[] = [
  [25_400, 25_999],
  [29_000, 29_999],
];

/**
 * Where {@link freePortBlock} takes ports from: [PORT_RANGE_LOW, the kernel's ephemeral range's
 * first port) — /proc/sys/net/ipv4/ip_local_port_range, 32768 without it. The kernel never hands
 * out a port below that range to a `listen(0)` or an outgoing socket, so a port reserved here
 * stays free between the check and the child's bind for everything but another fixed-port user.
 * A machine whose ephemeral range starts too low to leave 2,000 ports gets the ports above it.
 */
export function portRange(ephemeral = readEphemeralRange()): {
  readonly low: number;
  readonly high: number;
} {
  if (ephemeral.low - PORT_RANGE_LOW >= 2_000) return { low: PORT_RANGE_LOW, high: ephemeral.low };
  if (65_536 - (ephemeral.high + 1) >= 2_000) return { low: ephemeral.high + 1, high: 65_536 };
  return { low: PORT_RANGE_LOW, high: 32_768 };
}

function readEphemeralRange(): { low: number; high: number } {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return { low, high };
  } catch {
    // Not Linux (or no /proc): the IANA/Linux default start.
  }
  return { low: 32_768, high: 60_999 };
}

/** A free TCP port, reserved for this caller on this machine ({@link freePortBlock} of one). */
export function freePort(): Promise<number> {
  return freePortBlock(1);
}

/**
 * The first of `count` consecutive free TCP ports below the kernel's ephemeral range
 * ({@link portRange}), outside {@link FIXED_PORT_RANGES}; each reserved for this caller against
 * every other caller on this machine within {@link RESERVATION_MS} and checked free by binding
 * it on every address, as the apps listen (a connect misses a listener on another address). The
 * search starts at a random port (`random` for tests) and goes upwards, wrapping round.
 */
export async function freePortBlock(
  count: number,
  options: { readonly random?: () => number; readonly range?: { low: number; high: number } } = {},
): Promise<number> {
  const { low, high } = options.range ?? portRange();
  const starts = high - low - count + 1;
  if (count < 1 || starts < 1) throw new Error(`no block of ${count} ports in ${low}–${high - 1}`);
  const offset = Math.floor((options.random ?? Math.random)() * starts);
  for (let tries = 0; tries < Math.min(starts, 5_000); tries += 1) {
    const first = low + ((offset + tries) % starts);
    const last = first + count - 1;
    if (FIXED_PORT_RANGES.some(([from, to]) => first <= to && last >= from)) continue;
    if (await claimBlock(first, count)) return first;
  }
  throw new Error(
    `no ${count} consecutive free ports could be reserved under ${PORT_RESERVATIONS}`,
  );
}

/** Reserves first…first+count-1 and checks each free; on a refusal gives back what it took. */
async function claimBlock(first: number, count: number): Promise<boolean> {
  const taken: number[] = [];
  for (let port = first; port < first + count; port += 1) {
    if (reservePort(port)) {
      taken.push(port);
      if (await bindable(port)) continue;
    }
    for (const p of taken) releasePort(p);
    return false;
  }
  return true;
}

/** Reserves `port` (false: another caller holds a reservation younger than RESERVATION_MS). */
export function reservePort(port: number, now = Date.now()): boolean {
  mkdirSync(PORT_RESERVATIONS, { recursive: true });
  const file = path.join(PORT_RESERVATIONS, String(port));
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  try {
    if (now - statSync(file).mtimeMs <= RESERVATION_MS) return false;
    writeFileSync(file, String(process.pid));
    return true;
  } catch {
    return false;
  }
}

/** Gives a reservation back (a port this caller reserved and does not use). */
export function releasePort(port: number): void {
  rmSync(path.join(PORT_RESERVATIONS, String(port)), { force: true });
}

/** Whether a listener could bind `port` on every address (no host: IPv6 `::` and IPv4), as the apps do. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port }, () => server.close(() => resolve(true)));
  });
}

/** Runs a command to completion, inheriting stdio; rejects on a non-zero exit. */
export async function run(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: 'inherit',
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`)),
    );
  });
}

/**
 * Builds the apps into dist/ (`npm run build`) unless they are built already for this run:
 * `npm run test:integration` builds once before jest and sets PAYMENTS_APPS_BUILT=1, so the e2e
 * suites do not each rebuild the same tree (≈ 20–60 s apiece on two cores). A suite run by hand
 * builds as before.
 */
export async function buildApps(): Promise<void> {
  if (process.env.PAYMENTS_APPS_BUILT === '1') return;
  await run('npm', ['run', '--silent', 'build']);
}
