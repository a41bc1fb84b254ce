import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { newPgClient } from '@payments/database';
import { withDatabase } from './pg-ha';
import { REPO_ROOT, run } from './processes';

/**
 * The infrastructure the demo and the benchmark need: a Kafka broker (KAFKA_BROKERS, or the local
 * one from deploy/local/kafka started on demand) and PostgreSQL databases on the server named by
 * DATABASE_URL (default the local server, user postgres).
 */
const execFileAsync = promisify(execFile);
const KAFKA_SH = path.join(REPO_ROOT, 'deploy/local/kafka/kafka.sh');

export interface Broker {
  readonly brokers: string[];
  stop(): Promise<void>;
}

export async function ensureBroker(
  env: Readonly<Record<string, string | undefined>>,
  port = 29092,
): Promise<Broker> {
  const given = env.KAFKA_BROKERS;
  if (given) {
    return { brokers: given.split(',').map((b) => b.trim()), stop: async () => undefined };
  }
  const brokerEnv = { KAFKA_PORT: String(port), KAFKA_CONTROLLER_PORT: String(port + 1) };
  // A throw-away broker: fresh storage, removed on stop (the demo's databases are fresh too).
  await run('bash', [KAFKA_SH, 'start', '--fresh'], brokerEnv);
  return {
    brokers: [`127.0.0.1:${port}`],
    stop: async () => {
      spawnSync('bash', [KAFKA_SH, 'stop', '--wipe'], {
        cwd: REPO_ROOT,
        env: { ...process.env, ...brokerEnv },
        stdio: 'inherit',
      });
      await Promise.resolve();
    },
  };
}

/**
 * Creates (or re-creates, empty) a database on the server of `serverUrl` (one host, or a
 * replicated server's multi-host URL: on its primary); returns its URL.
 */
export async function freshDatabase(serverUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsafe database name ${name}`);
  const client = newPgClient(withDatabase(serverUrl, 'postgres'));
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return withDatabase(serverUrl, name);
}

/** A broker (or three-node cluster) the caller owns, so it can restart it mid-run. */
export interface OwnBroker extends Broker {
  /** Single node: node 1; cluster: one node of 1–3 (the kafka.sh `cluster-node-*` commands). */
  restart(signal: 'SIGTERM' | 'SIGKILL', node?: number): Promise<void>;
  readonly cluster: boolean;
}

/**
 * Starts a broker on `port` (and `port + 1` for its controller), or with `cluster` three nodes on
 * `port`, +2, +4 (controllers on the next port of each), with fresh storage; kafka.sh keeps the
 * data across the restarts, and `stop` wipes it.
 */
export async function startOwnBroker(port: number, cluster = false): Promise<OwnBroker> {
  const { KAFKA_BROKERS: _shared, ...inherited } = process.env;
  const brokerEnv: Record<string, string> = cluster
    ? { KAFKA_CLUSTER_PORT: String(port) }
    : { KAFKA_PORT: String(port), KAFKA_CONTROLLER_PORT: String(port + 1) };
  // Asynchronous: a restart takes seconds, and the caller keeps sending meanwhile.
  const sh = async (...args: string[]): Promise<void> => {
    try {
      await execFileAsync('bash', [KAFKA_SH, ...args], {
        cwd: REPO_ROOT,
        env: { ...inherited, ...brokerEnv },
        timeout: 180_000,
      });
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      throw new Error(`kafka.sh ${args.join(' ')} failed:\n${stdout}${stderr}`);
    }
  };
  await sh(cluster ? 'cluster-start' : 'start', '--fresh');
  return {
    cluster,
    brokers: cluster
      ? [0, 2, 4].map((offset) => `127.0.0.1:${port + offset}`)
      : [`127.0.0.1:${port}`],
    restart: async (signal, node = 1) => {
      if (cluster) {
        await sh(signal === 'SIGKILL' ? 'cluster-node-kill' : 'cluster-node-stop', String(node));
        await sh('cluster-node-start', String(node));
      } else {
        await sh(signal === 'SIGKILL' ? 'kill' : 'stop');
        await sh('start');
      }
    },
    stop: () => sh(cluster ? 'cluster-stop' : 'stop', '--wipe'),
  };
}
