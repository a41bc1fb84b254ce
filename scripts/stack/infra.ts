import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Client } from 'pg';
import { REPO_ROOT, run } from './processes';

/**
 * The infrastructure the demo and the benchmark need: a Kafka broker (KAFKA_BROKERS, or the local
 * one from deploy/local/kafka started on demand) and PostgreSQL databases on the server named by
 * DATABASE_URL (default the local server, user postgres).
 */
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

/** Creates (or re-creates, empty) a database on the server of `serverUrl`; returns its URL. */
export async function freshDatabase(serverUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsafe database name ${name}`);
  const admin = new URL(serverUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
