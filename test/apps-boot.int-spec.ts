/**
 * The three app shells as real processes: each boots from the compiled output, answers its
 * health and metrics endpoints, and exits 0 on SIGTERM; a malformed variable stops boot with
 * exit code 78 naming the variable.
 *
 * Built here with tsc (not tsx: esbuild emits no decorator metadata, so Nest DI would break),
 * but only the three entry points and what they import, into dist/boot-test: another helper's
 * unfinished file elsewhere in the tree cannot break this test, and a concurrent `npm run build`
 * cannot overwrite what it runs.
 */
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../scripts/stack/processes';
import { createTestDatabase, TestDatabase, withClient } from './support/postgres';

const ROOT = join(__dirname, '..');
const BUILD = join(ROOT, 'dist', 'boot-test');
const OUT = join(BUILD, 'out');
const APPS = ['orchestrator', 'gateway-adapter', 'callback-ingest'] as const;
type App = (typeof APPS)[number];

const run = promisify(execFile);

async function build(): Promise<void> {
  rmSync(BUILD, { recursive: true, force: true });
  mkdirSync(BUILD, { recursive: true });
  const tsconfig = join(BUILD, 'tsconfig.json');
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.build.json'),
      compilerOptions: { outDir: OUT, rootDir: ROOT, baseUrl: ROOT, sourceMap: false },
      include: [],
      files: APPS.map((app) => join(ROOT, 'apps', app, 'src', 'main.ts')),
    }),
  );
  const node = process.execPath;
  await run(node, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', tsconfig], { cwd: ROOT });
  await run(
    node,
    [
      join(ROOT, 'node_modules/tsc-alias/dist/bin/index.js'),
      '-p',
      'tsconfig.build.json',
      '--outDir',
      OUT,
    ],
    { cwd: ROOT },
  );
}

interface Running {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children: ChildProcess[] = [];

function requireBrokers(): string {
  const brokers = process.env.KAFKA_BROKERS;
  if (!brokers) throw new Error('KAFKA_BROKERS is not set: run through scripts/with-infra.sh');
  return brokers;
}

function start(app: App, env: Record<string, string>): Running {
  // No warning flags: stderr must stay empty (kafkajs's negative timer is fixed at install by
  // patches/kafkajs+2.2.4.patch, not hidden).
  const child = spawn(process.execPath, [join(OUT, 'apps', app, 'src', 'main.js')], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', LOG_PRETTY: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

async function waitForLive(base: string, running: Running, timeoutMs = 30000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (running.child.exitCode !== null) {
      throw new Error(
        `exited early (${running.child.exitCode}): ${running.stderr()}${running.stdout()}`,
      );
    }
    try {
      const res = await fetch(`${base}/health/live`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no /health/live within ${timeoutMs} ms: ${running.stdout()}${running.stderr()}`);
}

describe('app shells boot, report health and metrics, and stop cleanly', () => {
  let db: TestDatabase;
  let adapterDb: TestDatabase;

  /** The configuration each app refuses to boot without (test-only keys from the repository). */
  function bootEnv(app: App): Record<string, string> {
    const kafka = { KAFKA_BROKERS: requireBrokers() };
    switch (app) {
      case 'orchestrator':
        return { ...kafka, DATABASE_URL: db.url };
      case 'gateway-adapter':
        return {
          ...kafka,
          DATABASE_URL: adapterDb.url,
          GATEWAY_CREDENTIALS_FILE: 'apps/gateway-adapter/credentials.sandbox.json',
          CARD_SEALING_PRIVATE_KEY_FILE:
            'apps/gateway-adapter/test-keys/card-sealing-test-private.pem',
        };
      case 'callback-ingest':
        return {
          ...kafka,
          CALLBACK_CONTROL_KEYS: JSON.stringify({ '1111': 'B17F59B4-A7DC-41B4-8FF9-37D986B43D20' }),
          MERCHANT_RETURN_URL: 'https://shop.example.com/payment-finished',
        };
    }
  }

  beforeAll(async () => {
    await build();
    db = await createTestDatabase('apps_boot');
    adapterDb = await createTestDatabase('apps_boot_adapter');
  }, 120000);

  afterAll(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await db?.drop();
    await adapterDb?.drop();
  });

  it.each(APPS)('%s', async (app) => {
    const port = await freePort();
    // Every app talks to the broker scripts/with-infra.sh runs; each gets what it needs to boot.
    const running = start(app, { HTTP_PORT: String(port), ...bootEnv(app) });
    const base = `http://127.0.0.1:${port}`;
    await waitForLive(base, running);

    const ready = await fetch(`${base}/health/ready`);
    const readyBody = (await ready.json()) as { status: string; info: Record<string, unknown> };
    expect(ready.status).toBe(200);
    expect(readyBody.status).toBe('ok');
    expect(Object.keys(readyBody.info)).toEqual(
      expect.arrayContaining(app === 'callback-ingest' ? ['kafka'] : ['database', 'kafka']),
    );

    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`process_cpu_user_seconds_total\\{service="${app}"\\} \\d`));
    expect(metrics).toContain('process_resident_memory_bytes');
    if (app === 'orchestrator') {
      // The saga gauges, read from the freshly migrated database for this scrape.
      for (const name of [
        'orchestrator_unknown_outcomes',
        'orchestrator_unknown_outcome_oldest_seconds',
        'orchestrator_payouts_awaiting_approval',
        'orchestrator_schedule_charges_due',
        'orchestrator_saga_gauge_read_failures_total',
      ]) {
        expect(metrics).toContain(`${name}{service="orchestrator"} 0\n`);
      }
      expect(metrics).toMatch(
        /orchestrator_schedule_charges_failed\{[^}]*status="suspended"[^}]*\} 0\n/,
      );
    }

    running.child.kill('SIGTERM');
    expect(await running.exited).toEqual({ code: 0, signal: null });

    const lines = running
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { service?: string; version?: string; msg?: string });
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => l.service === app && typeof l.version === 'string')).toBe(true);
    expect(lines.some((l) => l.msg === `${app} listening on port ${port}`)).toBe(true);
    expect(running.stderr()).toBe('');

    if (app === 'orchestrator') {
      // Migrations ran at boot against the test database.
      const tables = await withClient(db.url, async (client) =>
        (
          await client.query(
            `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
          )
        ).rows.map((r: { tablename: string }) => r.tablename),
      );
      expect(tables).toEqual([
        'admin_audit',
        'admin_tokens',
        'cases',
        'commands',
        'day_close_reports',
        'day_closes',
        'dead_letter_replays',
        'gateway_requests',
        'inbox',
        'journal_lines',
        'merchant_money_events',
        'merchant_sequences',
        'migrations',
        'outbox',
        'reconciliation_checks',
        'reconciliation_runs',
        'saga_history',
        'sagas',
        'timers',
      ]);
    }
  });

  it('refuses a malformed variable with exit code 78 naming it and the expectation', async () => {
    const running = start('gateway-adapter', { HTTP_PORT: 'eighty', LOG_LEVEL: 'loud' });
    expect(await running.exited).toEqual({ code: 78, signal: null });
    expect(running.stderr()).toContain(
      'HTTP_PORT: expected a TCP port number (1-65535), got "eighty"',
    );
    expect(running.stderr()).toContain(
      'LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent',
    );
    expect(running.stdout()).toBe('');
  });

  it('refuses tracing turned on without a collector, or a bad sampling ratio, with exit code 78', async () => {
    const noEndpoint = start('callback-ingest', { OTEL_TRACES_EXPORTER: 'otlp' });
    expect(await noEndpoint.exited).toEqual({ code: 78, signal: null });
    expect(noEndpoint.stderr()).toContain(
      'OTEL_EXPORTER_OTLP_ENDPOINT is required when OTEL_TRACES_EXPORTER=otlp',
    );
    const badRatio = start('orchestrator', { OTEL_TRACES_SAMPLER_ARG: '2' });
    expect(await badRatio.exited).toEqual({ code: 78, signal: null });
    expect(badRatio.stderr()).toContain('OTEL_TRACES_SAMPLER_ARG: expected a number from 0 to 1');
  });
});
