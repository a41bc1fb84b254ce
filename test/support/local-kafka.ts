/**
 * A broker (or a three-node cluster) of a test's own, driven through deploy/local/kafka/kafka.sh,
 * for tests that stop, kill and restart brokers: never the shared broker of scripts/with-infra.sh.
 * Ports come from the stacks' one allocator (scripts/stack/processes.ts `freePortBlock`): below
 * the kernel's ephemeral range, reserved against every other test process of this machine and
 * checked free by binding.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePortBlock } from '../../scripts/stack/processes';

const KAFKA_SH = path.resolve(__dirname, '..', '..', 'deploy', 'local', 'kafka', 'kafka.sh');
const run = promisify(execFile);

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
  const port = await freePortBlock(2);
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
  const port = await freePortBlock(6);
  const env = { KAFKA_CLUSTER_PORT: String(port) };
  const cluster: LocalKafka = {
    brokers: [0, 2, 4].map((offset) => `127.0.0.1:${port + offset}`),
    sh: (...args) => sh(env, args),
  };
  await cluster.sh('cluster-start', '--fresh');
  return cluster;
}
