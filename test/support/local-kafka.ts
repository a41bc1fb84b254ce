/**
 * A broker (or a three-node cluster) of a test's own, driven through deploy/local/kafka/kafka.sh,
 * for tests that stop, kill and restart brokers: never the shared broker of scripts/with-infra.sh.
 * Ports are below the kernel's ephemeral range (32768+, see scripts/with-infra.sh), picked at
 * random in 20000-31999 so that parallel runs on one machine rarely collide, and checked free.
 */
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

const KAFKA_SH = path.resolve(__dirname, '..', '..', 'deploy', 'local', 'kafka', 'kafka.sh');
const run = promisify(execFile);

function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The first of `count` consecutive free ports, below the ephemeral range. */
export async function freeLowPorts(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = 20_000 + 2 * Math.floor(Math.random() * 6_000);
    const used = await Promise.all(Array.from({ length: count }, (_, i) => portInUse(first + i)));
    if (!used.some(Boolean)) return first;
  }
  throw new Error(`no ${count} consecutive free ports found in 20000-31999`);
}

export interface LocalKafka {
  /** host:port of every node. */
  readonly brokers: string[];
  /** Runs `kafka.sh <args>` with this broker's ports; resolves with its output. */
  sh(...args: string[]): Promise<string>;
}

async function sh(env: Record<string, string>, args: string[]): Promise<string> {
  const { KAFKA_BROKERS: _ignored, ...inherited } = process.env;
  try {
    const { stdout, stderr } = await run('bash', [KAFKA_SH, ...args], {
      env: { ...inherited, ...env },
      timeout: 180_000,
    });
    return stdout + stderr;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`kafka.sh ${args.join(' ')} failed:\n${stdout}${stderr}`);
  }
}

/** A single-node broker on free ports, fresh storage; `sh('stop', '--wipe')` when done. */
export async function startLocalBroker(): Promise<LocalKafka> {
  const port = await freeLowPorts(2);
  const env = { KAFKA_PORT: String(port), KAFKA_CONTROLLER_PORT: String(port + 1) };
  const broker: LocalKafka = {
    brokers: [`127.0.0.1:${port}`],
    sh: (...args) => sh(env, args),
  };
  await broker.sh('start', '--fresh');
  return broker;
}

/** A three-node cluster on free ports, fresh storage; `sh('cluster-stop', '--wipe')` when done. */
export async function startLocalCluster(): Promise<LocalKafka> {
  const port = await freeLowPorts(6);
  const env = { KAFKA_CLUSTER_PORT: String(port) };
  const cluster: LocalKafka = {
    brokers: [0, 2, 4].map((offset) => `127.0.0.1:${port + offset}`),
    sh: (...args) => sh(env, args),
  };
  await cluster.sh('cluster-start', '--fresh');
  return cluster;
}
