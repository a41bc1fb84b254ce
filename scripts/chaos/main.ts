/**
 * `npm run chaos`: the chaos run with its figures, a script, not a test.
 *
 *   npm run chaos                                   # 2,000 commands at 10/s, seed 10, 9 actions
 *   npm run chaos -- --commands=300 --rate=20 --actions=orchestrator#1:KILL,broker:TERM
 *   CHAOS_COMMANDS=500 CHAOS_CLUSTER=true npm run chaos
 *
 * Every option is a flag (`--name=value`) or an environment variable (`CHAOS_NAME`, upper case,
 * dashes as underscores); the flag wins. Exits 1 when a zero line is not zero or the run did not
 * reach quiescence. It starts a broker of its own (it restarts it), so KAFKA_BROKERS is ignored.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import path from 'node:path';
import { freshDatabase, OwnBroker, startOwnBroker } from '../stack/infra';
import { buildApps, RUN_DIR, stopAppsOnSignals } from '../stack/processes';
import {
  CHAOS_REUSED_CLIENT_ORDER_ID,
  ChaosAction,
  ChaosConfig,
  ChaosTarget,
  DAY_CLOSE_FLAG,
  dayCloseRequested,
  DEFAULT_FAULTS,
  DEFAULT_MAX_ALERTED_SHARE,
  DEFAULT_POPULATION,
} from './chaos-config';
import { runChaos } from './chaos-run';
import { startReplicatedDatabase } from './infrastructure';
import { formatReport, passed } from './report';

/**
 * The standalone run's status budget per endpoint (the gateway's status queries per second).
 * Every money operation needs at least one status query (the gateway answers `processing`, and a
 * callback is a hint the orchestrator confirms by asking), and at 10 commands/s the plain endpoint
 * carries ≈ 7.5 money operations/s: a budget of 4/s (DEFAULT_POPULATION's, the e2e's, whose
 * 20 s of sending the budget drains after) left 2026-11-29's run with ≈ 200 operations unanswered
 * for minutes (test/chaos.md). 12/s serves the rate with the population's bounded share on top.
 */
const STANDALONE_STATUS_BUDGET = 12;

/** One after each clock step of the schedule phase (brokers are not restarted there). */
const DEFAULT_SCHEDULE_ACTIONS =
  'orchestrator#0:KILL,gateway-adapter#1:KILL,callback-ingest#0:KILL,orchestrator#1:TERM';

const DEFAULT_ACTIONS =
  'orchestrator#0:KILL,gateway-adapter#1:KILL,callback-ingest#0:KILL,broker:TERM,orchestrator#1:TERM,gateway-adapter#0:TERM,callback-ingest#1:TERM,orchestrator#1:KILL,broker:KILL';

/**
 * The default actions of a run: DEFAULT_ACTIONS, with the PostgreSQL primary lost after the
 * adapter's database outage (half-way) when the run is on the replicated database, and the KRaft
 * controller's node SIGKILLed once on a cluster (its `broker` actions hit the other nodes).
 */
export function defaultActions(options: { cluster: boolean; failover: boolean }): string {
  const actions = DEFAULT_ACTIONS.split(',');
  if (options.failover) actions.splice(6, 0, 'postgres:KILL');
  if (options.cluster) actions.splice(actions.indexOf('orchestrator#1:KILL'), 0, 'controller:KILL');
  return actions.join(',');
}

function option(name: string, fallback: string): string {
  const flag = process.argv.slice(2).find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (flag) return flag.includes('=') ? flag.slice(flag.indexOf('=') + 1) : 'true';
  return process.env[`CHAOS_${name.toUpperCase().replace(/-/g, '_')}`] ?? fallback;
}

function numberOption(name: string, fallback: number): number {
  const value = Number(option(name, String(fallback)));
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a number ≥ 0`);
  return value;
}

/** `orchestrator#1` (a replica, from 0), `orchestrator` (its replica 0) or `broker`. */
const TARGET =
  /^(?:(?:orchestrator|gateway-adapter|callback-ingest)(?:#\d+)?|broker|controller|postgres)$/;

export function parseActions(text: string): ChaosAction[] {
  return text
    .split(',')
    .filter((a) => a.trim().length > 0)
    .map((item) => {
      const [target, signal] = item.trim().split(':');
      if (!TARGET.test(target) || (signal !== 'KILL' && signal !== 'TERM')) {
        throw new Error(
          `bad action "${item}": <orchestrator|gateway-adapter|callback-ingest>[#<replica>]|broker|controller|postgres:<KILL|TERM>`,
        );
      }
      return { target: target as ChaosTarget, signal: signal === 'KILL' ? 'SIGKILL' : 'SIGTERM' };
    });
}

const HELP = `npm run chaos [-- --name=value ...]   (or CHAOS_NAME=value; the flag wins)

  --commands=2000 --rate=10 --seed=10 --replicas=2
  --actions=${defaultActions({ cluster: true, failover: true })}
      (the default; without --cluster no controller:KILL, with --failover=false no postgres:KILL)
      <orchestrator|gateway-adapter|callback-ingest>[#replica]|broker|controller|postgres:<KILL|TERM>, comma-separated
      broker: a Kafka node (on a cluster one that is not the KRaft controller, in turn);
      controller: the KRaft controller's node; postgres: the PostgreSQL primary lost (pg-ha.sh
      kill-primary), the standby promoted, the lost node rejoined as a standby
  --payout-daily-limit=5000000 (minor units) --approval-window=30 (s)
  --reused-client-order-id=${CHAOS_REUSED_CLIENT_ORDER_ID} (charge-again|refuse: the sandbox's mode, told to the orchestrator)
  --population-share=${DEFAULT_POPULATION.share} --population-min=${DEFAULT_POPULATION.min} (0 = no population phase) --status-budget=${STANDALONE_STATUS_BUDGET} (status queries/s per endpoint, the gateway's; the e2e: ${DEFAULT_POPULATION.statusBudgetPerSecond})
  --min-judged=${DEFAULT_POPULATION.minJudged} (movements judged against the time-to-truth bounds, outside every disruption window, at least)
  --adapter-db-outage=12 (s: the adapter's database out once, half-way; 0 = never)
  --max-alerted-share=${DEFAULT_MAX_ALERTED_SHARE} (sagas ending alerted above this share fail the run)
  --fail-before=${DEFAULT_FAULTS.failBefore} --reply-lost=${DEFAULT_FAULTS.replyLost} --slow-arrival=${DEFAULT_FAULTS.slowArrival} --slow-answer=${DEFAULT_FAULTS.slowAnswer} --gateway-timeout=${DEFAULT_FAULTS.gatewayTimeoutMs} (ms)
  --callback-drop=${DEFAULT_FAULTS.callbackDrop} --callback-duplicate=${DEFAULT_FAULTS.callbackDuplicate} --callback-reorder=${DEFAULT_FAULTS.callbackReorder}
  --status-fail=${DEFAULT_FAULTS.statusFail} --status-refused=${DEFAULT_FAULTS.statusRefused} --status-slow=${DEFAULT_FAULTS.statusSlow}
  --quiet-max=300 (s) --never-received=15 (s) --unknown-alert=120 (s) --unknown-cards=3 --gateway-delay=200 (ms)
  --liveness-period=2000 (ms; 0 = never) --log-level=info --keep=false (true: leave the brokers and databases running)
  --cluster=true (three KRaft nodes, replication 3, min ISR 2; false: one broker) --broker-port=29392 (single: 29292)
  --failover=true (both apps' databases on a replicated PostgreSQL, deploy/local/postgres-ha/pg-ha.sh,
      monitor on the first free of --pg-ha-port=25481, +10, ...; false: DATABASE_URL's server)
  --own-schedules=3 --gateway-schedules=3 --schedule-cycles=4 (0 schedules: no schedule phase)
  --schedule-actions=${DEFAULT_SCHEDULE_ACTIONS} --schedule-step-timeout=150 (s)
  --${DAY_CLOSE_FLAG}=true (on by default: the days closed at the end by an operator, the close reports
      judged, bounded by the money events to check; --no-${DAY_CLOSE_FLAG} or CHAOS_DAY_CLOSE=0 turns it off; test/chaos.md)

What each line of the report means: test/chaos.md.`;

function scheduleOptions(): Pick<ChaosConfig, 'schedules'> {
  const own = numberOption('own-schedules', 3);
  const gateway = numberOption('gateway-schedules', 3);
  if (own + gateway === 0) return {};
  const actions = parseActions(option('schedule-actions', DEFAULT_SCHEDULE_ACTIONS)).map((a) => {
    if (a.target === 'broker' || a.target === 'controller' || a.target === 'postgres')
      throw new Error('--schedule-actions: app replicas only');
    return { target: a.target, signal: a.signal };
  });
  return {
    schedules: {
      own,
      gateway,
      cycles: Math.max(3, numberOption('schedule-cycles', 4)),
      actions,
      stepTimeoutSeconds: numberOption('schedule-step-timeout', 150),
    },
  };
}

async function main(): Promise<void> {
  if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  stopAppsOnSignals();
  const cluster = option('cluster', 'true') === 'true';
  const failover = option('failover', 'true') === 'true';
  const config: ChaosConfig = {
    commands: numberOption('commands', 2_000),
    ratePerSecond: numberOption('rate', 10),
    seed: numberOption('seed', 10),
    actions: parseActions(option('actions', defaultActions({ cluster, failover }))),
    faults: {
      ...DEFAULT_FAULTS,
      failBefore: numberOption('fail-before', DEFAULT_FAULTS.failBefore),
      replyLost: numberOption('reply-lost', DEFAULT_FAULTS.replyLost),
      callbackDrop: numberOption('callback-drop', DEFAULT_FAULTS.callbackDrop),
      callbackDuplicate: numberOption('callback-duplicate', DEFAULT_FAULTS.callbackDuplicate),
      callbackReorder: numberOption('callback-reorder', DEFAULT_FAULTS.callbackReorder),
      statusFail: numberOption('status-fail', DEFAULT_FAULTS.statusFail),
      statusSlow: numberOption('status-slow', DEFAULT_FAULTS.statusSlow),
      statusRefused: numberOption('status-refused', DEFAULT_FAULTS.statusRefused),
      slowArrival: numberOption('slow-arrival', DEFAULT_FAULTS.slowArrival),
      slowAnswer: numberOption('slow-answer', DEFAULT_FAULTS.slowAnswer),
      gatewayTimeoutMs: numberOption('gateway-timeout', DEFAULT_FAULTS.gatewayTimeoutMs),
    },
    quietMaxSeconds: numberOption('quiet-max', 300),
    neverReceivedSeconds: numberOption('never-received', 15),
    unknownAlertSeconds: numberOption('unknown-alert', 120),
    unknownCards: numberOption('unknown-cards', 3),
    gatewayDelayMs: numberOption('gateway-delay', 200),
    logLevel: option('log-level', 'info'),
    livenessPeriodMs: numberOption('liveness-period', 2_000),
    replicas: Math.max(1, numberOption('replicas', 2)),
    payoutDailyLimitMinor: numberOption('payout-daily-limit', 5_000_000),
    approvalWindowSeconds: Math.max(1, numberOption('approval-window', 30)),
    reusedClientOrderId:
      option('reused-client-order-id', CHAOS_REUSED_CLIENT_ORDER_ID) === 'refuse'
        ? 'refuse'
        : 'charge-again',
    maxAlertedShare: numberOption('max-alerted-share', DEFAULT_MAX_ALERTED_SHARE),
    adapterDatabaseOutageSeconds: numberOption('adapter-db-outage', 12),
    ...(numberOption('population-min', DEFAULT_POPULATION.min) > 0
      ? {
          population: {
            ...DEFAULT_POPULATION,
            share: numberOption('population-share', DEFAULT_POPULATION.share),
            min: numberOption('population-min', DEFAULT_POPULATION.min),
            statusBudgetPerSecond: numberOption('status-budget', STANDALONE_STATUS_BUDGET),
            minJudged: numberOption('min-judged', DEFAULT_POPULATION.minJudged),
          },
        }
      : {}),
    ...scheduleOptions(),
    dayClose: dayCloseRequested(process.argv.slice(2), process.env, true),
  };
  const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const log = (line: string) => process.stdout.write(`${line}\n`);
  log(
    `chaos: ${config.commands} commands at ${config.ratePerSecond}/s, seed ${config.seed}, ${config.replicas} replica(s) of each app, ${config.actions.length} actions, ${cluster ? 'three-node cluster' : 'single broker'}, ${failover ? 'replicated PostgreSQL (pg_auto_failover)' : 'one PostgreSQL server'}`,
  );
  const startedAt = Date.now();
  await buildApps();
  let broker: OwnBroker | undefined;
  let replicated: Awaited<ReturnType<typeof startReplicatedDatabase>> | undefined;
  let ok = false;
  try {
    broker = await startOwnBroker(numberOption('broker-port', cluster ? 29392 : 29292), cluster);
    const names = ['payments_chaos', 'payments_chaos_adapter'];
    if (failover)
      replicated = await startReplicatedDatabase(names, log, numberOption('pg-ha-port', 25481));
    const [orchestratorDatabaseUrl, adapterDatabaseUrl] = replicated
      ? names.map((n) => replicated?.urls[n] ?? '')
      : [await freshDatabase(serverUrl, names[0]), await freshDatabase(serverUrl, names[1])];
    const report = await runChaos(config, {
      broker,
      ...(replicated ? { database: replicated.database } : {}),
      orchestratorDatabaseUrl,
      adapterDatabaseUrl,
      workDir: path.join(RUN_DIR, `stack-chaos-${randomUUID().slice(0, 8)}`),
      log,
    });
    log('');
    log(formatReport(report));
    ok = passed(report);
    log(
      `\nchaos: ${ok ? 'PASSED' : 'FAILED'} in ${((Date.now() - startedAt) / 1000).toFixed(0)} s (with the build, infrastructure and audit); load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    if (option('keep', 'false') === 'true') {
      // To look into a failed run: the databases and the topics as the run left them.
      log(
        `chaos: --keep: the brokers and the databases left running; stop them with ${
          cluster
            ? `KAFKA_CLUSTER_PORT=${numberOption('broker-port', 29392)} bash deploy/local/kafka/kafka.sh cluster-stop --wipe`
            : `KAFKA_PORT=${numberOption('broker-port', 29292)} KAFKA_CONTROLLER_PORT=${numberOption('broker-port', 29292) + 1} bash deploy/local/kafka/kafka.sh stop --wipe`
        }${replicated ? ` and PG_HA_PORT=${replicated.port} bash deploy/local/postgres-ha/pg-ha.sh stop --wipe` : ''}`,
      );
    } else {
      await broker?.stop();
      await replicated?.stop();
    }
  }
  process.exitCode = ok ? 0 : 1;
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`chaos failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  });
}
