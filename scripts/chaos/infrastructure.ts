/**
 * The chaos run's infrastructure faults beyond the apps: which Kafka node is the KRaft controller
 * (so the cluster run kills it once, and its other broker actions hit the other nodes), the
 * replicated PostgreSQL (deploy/local/postgres-ha/pg-ha.sh, only called here, never changed) and
 * the recovery figures of a lost primary, from the run's events.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { newPgClient, parseDatabaseUrl } from '@payments/database';
import { REPO_ROOT, RUN_DIR } from '../stack/processes';
import type { FailoverFigures, ReplicatedDatabase } from './chaos-config';
import type { SentCommand } from './checks';
import type { TimedEvent } from './time-to-truth';

const execFileAsync = promisify(execFile);
const PG_HA = path.join(REPO_ROOT, 'deploy/local/postgres-ha/pg-ha.sh');

/**
 * The KRaft quorum's leader (the active controller) of the three-node cluster whose node 1
 * serves `port` (deploy/local/kafka/kafka.sh's layout: `.kafka/cluster-<port>/node-N/data`), read
 * from each node's `__cluster_metadata-0/quorum-state` (the leader of the highest epoch any node
 * has seen; a killed leader's file is stale, the others' moved on). Undefined when none says.
 */
export function kraftController(port: number, stateDir?: string): number | undefined {
  const dir = stateDir ?? path.join(REPO_ROOT, '.kafka', `cluster-${port}`);
  return quorumLeader(
    [1, 2, 3].map((node) => {
      try {
        return readFileSync(
          path.join(dir, `node-${node}`, 'data', '__cluster_metadata-0', 'quorum-state'),
          'utf8',
        );
      } catch {
        return undefined; // a node not started yet: the others say
      }
    }),
  );
}

/** The leader of the highest epoch among the nodes' `quorum-state` files (JSON), if any names one. */
export function quorumLeader(states: readonly (string | undefined)[]): number | undefined {
  let best: { leader: number; epoch: number } | undefined;
  for (const text of states) {
    if (text === undefined) continue;
    try {
      const state = JSON.parse(text) as { leaderId?: number; leaderEpoch?: number };
      const leader = state.leaderId ?? -1;
      const epoch = state.leaderEpoch ?? -1;
      if (leader >= 1 && (best === undefined || epoch > best.epoch)) best = { leader, epoch };
    } catch {
      // a file being rewritten: the others say
    }
  }
  return best?.leader;
}

/**
 * The Kafka node a broker action restarts: `controller` the quorum's leader; `broker` the
 * `turn`-th of the nodes that are not (so the controller is killed only by its own action). A
 * single broker: node 1.
 */
export function brokerNodeFor(
  target: 'broker' | 'controller',
  cluster: boolean,
  controller: number | undefined,
  turn: number,
): number {
  if (!cluster) return 1;
  if (target === 'controller') return controller ?? 1;
  const others = [1, 2, 3].filter((n) => n !== controller);
  return others[turn % others.length];
}

async function pgHa(port: number, ...args: string[]): Promise<string> {
  try {
    const { stdout } = await execFileAsync('bash', [PG_HA, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, PG_HA_PORT: String(port) },
      timeout: 300_000,
    });
    return stdout.trim();
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`pg-ha.sh ${args.join(' ')} failed:\n${stdout}${stderr.slice(-2_000)}`);
  }
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** The multi-host URL with another database name (the path of the URL). */
export const withDatabase = (url: string, name: string): string =>
  url.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);

/**
 * Starts a fresh replicated PostgreSQL (pg-ha.sh start: a pg_auto_failover monitor, a primary and
 * a synchronous standby) on the first free of `fromPort`, +10, … (monitor; nodes on +1, +2),
 * creates the run's databases on it, and returns their multi-host URLs and the controls the
 * `postgres` action uses. `stop()` stops and wipes it.
 */
export async function startReplicatedDatabase(
  databases: readonly string[],
  log: (line: string) => void,
  fromPort = 25481,
): Promise<{
  readonly urls: Record<string, string>;
  readonly database: ReplicatedDatabase;
  readonly port: number;
  stop(): Promise<void>;
}> {
  let port = fromPort;
  while ((await portOpen(port)) || (await portOpen(port + 1)) || (await portOpen(port + 2)))
    port += 10;
  const started = Date.now();
  const stop = async () => {
    await pgHa(port, 'stop', '--wipe').catch((error: unknown) => {
      log(`chaos: stopping the replicated PostgreSQL failed: ${(error as Error).message}`);
    });
  };
  let url: string;
  try {
    url = (await pgHa(port, 'start')).split('\n').at(-1) ?? '';
  } catch (error) {
    await stop();
    throw error;
  }
  log(
    `chaos: replicated PostgreSQL (pg_auto_failover, synchronous standby) on ${port}–${port + 2} in ${((Date.now() - started) / 1000).toFixed(0)} s: ${url}`,
  );
  const admin = newPgClient(url);
  await admin.connect();
  const urls: Record<string, string> = {};
  try {
    for (const name of databases) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsafe database name ${name}`);
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${name}`);
      urls[name] = withDatabase(url, name);
    }
  } finally {
    await admin.end();
  }
  const primaryPort = async () => (await pgHa(port, 'primary').catch(() => '')).trim();
  const database: ReplicatedDatabase = {
    killPrimary: async () => Number((await pgHa(port, 'kill-primary')).split('\n').at(-1)),
    primaryPort,
    rejoin: async (node) => {
      try {
        await pgHa(port, 'rejoin', String(node));
        await pgHa(port, 'heal');
      } catch (error) {
        // The state directory is wiped at the end of the run: keep what tells why (pg-ha's and the
        // keepers' logs, the monitor's view) beside the run's logs.
        const kept = keepPgHaLogs(port);
        const state = await pgHa(port, 'status').catch((e: unknown) => (e as Error).message);
        throw new Error(
          `${(error as Error).message}; monitor: ${state.trim()}; logs kept in ${kept}`,
          {
            cause: error,
          },
        );
      }
    },
    primaryUrl: async (dbUrl) => {
      const parsed = parseDatabaseUrl(dbUrl);
      const primary = await primaryPort();
      if (primary === '') throw new Error('no primary known to the monitor');
      return `postgres://${encodeURIComponent(parsed.user ?? 'postgres')}@127.0.0.1:${primary}/${parsed.database ?? 'postgres'}`;
    },
    writable: async (dbUrl) => {
      const client = newPgClient(dbUrl, { connectionTimeoutMillis: 2_000 });
      client.on('error', () => undefined);
      try {
        await client.connect();
        const result = await client.query<{ ro: string }>(
          "SELECT current_setting('transaction_read_only') AS ro",
        );
        return result.rows[0]?.ro === 'off';
      } catch {
        return false;
      } finally {
        await client.end().catch(() => undefined);
      }
    },
  };
  return { urls, database, port, stop };
}

/** A card payment's final answer to a sale. */
const SALE_FINAL = new Set(['approved', 'declined', 'failed']);

/**
 * The recovery figures of a primary lost at `killedAt` (writable again at `writableAt`), from the
 * run's commands and events (broker create times): the first sale sent after the kill reported
 * final, and the backlog — the commands sent while there was no writable primary — drained (each
 * has its first event).
 */
export function failoverFigures(input: {
  readonly killedAt: number;
  readonly writableAt?: number;
  readonly commands: readonly SentCommand[];
  readonly events: ReadonlyMap<string, readonly TimedEvent[]>;
}): FailoverFigures {
  const { killedAt, writableAt } = input;
  const eventsOf = (saga: string) => input.events.get(saga) ?? [];
  let firstSaleFinal: number | undefined;
  for (const c of input.commands) {
    if (c.type !== 'sale' || c.sentAt < killedAt) continue;
    const final = eventsOf(c.paymentId)
      .filter((e) => SALE_FINAL.has(e.event.type))
      .map((e) => e.at);
    if (final.length === 0) continue;
    const at = Math.min(...final);
    firstSaleFinal = Math.min(firstSaleFinal ?? Infinity, at);
  }
  const backlog =
    writableAt === undefined
      ? []
      : input.commands.filter((c) => c.sentAt >= killedAt && c.sentAt <= writableAt);
  let drained: number | undefined = backlog.length === 0 ? undefined : killedAt;
  for (const c of backlog) {
    const carrying = eventsOf(c.paymentId)
      .filter(
        (e) =>
          'commandId' in e.event && (e.event as { commandId?: unknown }).commandId === c.commandId,
      )
      .map((e) => e.at);
    if (carrying.length === 0) {
      drained = undefined; // lost: the lost-commands line says so
      break;
    }
    drained = Math.max(drained ?? killedAt, Math.min(...carrying));
  }
  return {
    ...(writableAt === undefined ? {} : { noWritableMs: writableAt - killedAt }),
    ...(firstSaleFinal === undefined ? {} : { firstSaleFinalMs: firstSaleFinal - killedAt }),
    ...(drained === undefined ? {} : { backlogDrainedMs: drained - killedAt }),
    backlogCommands: backlog.length,
  };
}

/** Copies the replicated PostgreSQL's logs (pg-ha.sh's state directory) under .run; returns where. */
function keepPgHaLogs(port: number): string {
  const from = process.env.PG_HA_STATE_DIR ?? path.join('/tmp', 'payments-pg-ha', String(port));
  const to = path.join(RUN_DIR, `pg-ha-${port}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  try {
    mkdirSync(to, { recursive: true });
    for (const name of readdirSync(from)) {
      if (name.endsWith('.log')) copyFileSync(path.join(from, name), path.join(to, name));
    }
  } catch {
    // Nothing to keep (the directory is gone): the error says where it would have been.
  }
  return to;
}
