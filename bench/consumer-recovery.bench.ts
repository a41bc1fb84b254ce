/**
 * Consumer-group recovery after a kill: how long a partition goes unhandled
 * when its consumer process is SIGKILLed or SIGTERMed, measured from the signal to the first
 * message handled by
 *  - restart:  a new process started right after the kill (the app's restart), the only member;
 *  - failover: the surviving member of a two-process group, for the dead member's partitions.
 * Messages are produced every 20 ms over 4 partitions throughout. libs/kafka's runner in separate
 * processes (bench/support/recovery-consumer.ts), as the apps run it.
 *
 *   npm run bench:recovery                    # the defaults of libs/kafka
 *   KAFKA_SESSION_TIMEOUT_MS=30000 KAFKA_HEARTBEAT_INTERVAL_MS=3000 npm run bench:recovery
 *   RECOVERY_ROUNDS=3                         # rounds per scenario (default 2)
 *
 * A script, not a test: it prints figures and asserts nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Partitioners } from 'kafkajs';
import { ensureBroker } from '../scripts/stack/infra';
import { kafkaClient } from '../scripts/stack/kafka-io';
import { REPO_ROOT, sleep } from '../scripts/stack/processes';

const ROUNDS = Number(process.env.RECOVERY_ROUNDS ?? 2);
const PARTITIONS = 4;
const CHILD = path.join(REPO_ROOT, 'bench', 'support', 'recovery-consumer.ts');

interface Handled {
  readonly partition: number;
  readonly at: number;
}

class Member {
  readonly handled: Handled[] = [];
  readonly joined: Promise<number>;
  readonly exited: Promise<void>;
  private readonly child: ChildProcess;

  constructor(env: Record<string, string>) {
    // `node --import tsx`, not the tsx binary: that one runs the script in a child process, which
    // a signal to the wrapper would not reach.
    this.child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let joined: (at: number) => void = () => undefined;
    this.joined = new Promise((resolve) => (joined = resolve));
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    const lines = createInterface({ input: this.child.stdout! });
    lines.on('line', (line) => {
      const event = JSON.parse(line) as { event: string; partition: number; at: number };
      if (event.event === 'joined') joined(event.at);
      else this.handled.push({ partition: event.partition, at: event.at });
    });
  }

  kill(signal: NodeJS.Signals): number {
    const at = Date.now();
    this.child.kill(signal);
    return at;
  }

  /** First message handled at or after `since` (on one of `partitions` if given). */
  async firstHandled(since: number, partitions?: ReadonlySet<number>): Promise<number> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const hit = this.handled.find(
        (h) => h.at >= since && (partitions === undefined || partitions.has(h.partition)),
      );
      if (hit) return hit.at;
      if (Date.now() > deadline) throw new Error('no message handled within 120 s');
      await sleep(20);
    }
  }
}

async function main(): Promise<void> {
  const broker = await ensureBroker(process.env, 29292);
  const kafka = kafkaClient(broker.brokers, 'recovery-bench');
  const topic = `recovery-${randomBytes(4).toString('hex')}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [PARTITIONS, PARTITIONS].map((numPartitions, i) => ({
      topic: i === 0 ? topic : `${topic}.dlq`,
      numPartitions,
    })),
  });
  await admin.disconnect();
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  let producing = true;
  const production = (async () => {
    for (let n = 0; producing; n++) {
      await producer.send({
        topic,
        acks: -1,
        messages: [{ partition: n % PARTITIONS, value: JSON.stringify({ n }) }],
      });
      await sleep(20);
    }
  })();

  const results: Array<{ scenario: string; ms: number[] }> = [];
  const record = (scenario: string, ms: number) => {
    const row = results.find((r) => r.scenario === scenario);
    if (row) row.ms.push(ms);
    else results.push({ scenario, ms: [ms] });
    process.stdout.write(`  ${scenario}: ${ms} ms\n`);
  };
  const settings = {
    session: process.env.KAFKA_SESSION_TIMEOUT_MS ?? 'default',
    heartbeat: process.env.KAFKA_HEARTBEAT_INTERVAL_MS ?? 'default',
  };
  process.stdout.write(
    `recovery bench: session timeout ${settings.session}, heartbeat ${settings.heartbeat}, ${ROUNDS} rounds\n`,
  );

  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
        // Restart: the only member is killed; a new process starts at once.
        const group = `recovery-restart-${randomBytes(4).toString('hex')}`;
        const env = {
          KAFKA_BROKERS: broker.brokers.join(','),
          RECOVERY_TOPIC: topic,
          RECOVERY_GROUP: group,
        };
        const first = new Member(env);
        await first.joined;
        await first.firstHandled(Date.now());
        const killedAt = first.kill(signal);
        if (signal === 'SIGTERM') await first.exited; // an orchestrator restarts after its exit
        const second = new Member(env);
        record(`restart after ${signal}`, (await second.firstHandled(killedAt)) - killedAt);
        second.kill('SIGKILL');
        await Promise.all([first.exited, second.exited]);

        // Failover: two members, one is killed; the other takes over its partitions.
        const pair = {
          ...env,
          RECOVERY_GROUP: `recovery-failover-${randomBytes(4).toString('hex')}`,
        };
        const a = new Member(pair);
        await a.joined;
        const b = new Member(pair);
        await b.joined;
        await sleep(2_000); // both settled with two partitions each
        const settled = Date.now();
        await sleep(1_000); // a message on every partition since (one per partition every 80 ms)
        const theirs = new Set(a.handled.filter((h) => h.at >= settled).map((h) => h.partition));
        const killed = a.kill(signal);
        record(`failover after ${signal}`, (await b.firstHandled(killed, theirs)) - killed);
        b.kill('SIGKILL');
        await Promise.all([a.exited, b.exited]);
      }
    }
  } finally {
    producing = false;
    await production.catch(() => undefined);
    await producer.disconnect();
    await broker.stop();
  }

  process.stdout.write(`\n| scenario | rounds | min ms | max ms |\n| --- | --- | --- | --- |\n`);
  for (const { scenario, ms } of results) {
    process.stdout.write(
      `| ${scenario} | ${ms.length} | ${Math.min(...ms)} | ${Math.max(...ms)} |\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
