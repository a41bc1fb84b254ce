/**
 * One Kafka hop, measured alone: a message produced one at a time (at HOP_RATE per second, so the
 * consumer sits in its fetch wait between messages, as in the open loop) and consumed by
 *  - `plain`: a kafkajs consumer (eachMessage, auto-commit), nothing else;
 *  - `runner`: libs/kafka's consumer runner (per-message handler, commit after each);
 *  - `runner-batch`: the runner with a `handleBatch` handler (the orchestrator's mode);
 * each subscribed, like the orchestrator, to HOP_TOPICS topics of 6 partitions (one carries the
 * messages). Prints p50 / p99 of send → acknowledged and send → handler called, per mode.
 *
 *   BENCH_KAFKA_PORT=29300 tsx bench/support/hop-latency.ts          # a throw-away broker
 *   KAFKA_BROKERS=127.0.0.1:9092 tsx bench/support/hop-latency.ts    # a running one
 *
 * HOP_MESSAGES (default 200), HOP_RATE (25), HOP_MODES (plain,runner,runner-batch),
 * HOP_MAX_WAIT_MS (the runner's maxWaitTimeMs, default the library's), HOP_TOPICS (3),
 * HOP_HANDLER_MS (0: how long each handler call waits, as a unit of work's round trips do; no
 * CPU, so what it adds is the fetch loop waiting for the handler, not a busy machine).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Partitioners } from 'kafkajs';
import { z } from 'zod';
import {
  createKafkaClient,
  IdempotentSender,
  KafkaConsumerRunner,
  type KafkaLogger,
  type KafkaMessageHandler,
} from '@payments/kafka';
import { resolveConsumerSettings } from '../../libs/kafka/src/consumer-settings';
import { startOwnBroker } from '../../scripts/stack/infra';

const quiet = (): void => undefined;
const logger: KafkaLogger = { debug: quiet, info: quiet, warn: quiet, error: quiet };
const num = (name: string, fallback: number): number => {
  const value = process.env[name];
  return value === undefined || value === '' ? fallback : Number(value);
};

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

function summary(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const f = (v: number) => v.toFixed(1);
  return `p50 ${f(quantile(sorted, 0.5))} p99 ${f(quantile(sorted, 0.99))} max ${f(sorted.at(-1) ?? Number.NaN)} (n ${sorted.length})`;
}

interface Consumer {
  start(onMessage: (id: string) => void): Promise<void>;
  stop(): Promise<void>;
}

async function main(): Promise<void> {
  const messages = num('HOP_MESSAGES', 200);
  const rate = num('HOP_RATE', 25);
  const topicCount = num('HOP_TOPICS', 3);
  const maxWait = process.env.HOP_MAX_WAIT_MS;
  const handlerMs = num('HOP_HANDLER_MS', 0);
  const work = () => (handlerMs > 0 ? sleep(handlerMs) : Promise.resolve());
  const modes = (process.env.HOP_MODES ?? 'plain,runner,runner-batch').split(',');
  const given = process.env.KAFKA_BROKERS;
  const broker = given
    ? { brokers: given.split(','), stop: async () => undefined }
    : await startOwnBroker(num('BENCH_KAFKA_PORT', 29300));
  const options = {
    clientId: `hop-${process.pid}`,
    brokers: broker.brokers,
    logLevel: 'nothing' as const,
  };
  const kafka = createKafkaClient(options, logger);
  const sender = new IdempotentSender(() =>
    kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
    }),
  );
  await sender.connect();
  const schema = z.object({ id: z.string() });
  try {
    for (const mode of modes) {
      const run = randomUUID().slice(0, 8);
      const topics = Array.from({ length: topicCount }, (_, i) => `hop-${mode}-${run}-${i}`);
      const topic = topics[0] ?? '';
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({
        waitForLeaders: true,
        topics: topics.map((t) => ({ topic: t, numPartitions: 6, replicationFactor: 1 })),
      });
      await admin.disconnect();
      const consumer = makeConsumer(mode, topics, `hop-${mode}-${run}`);
      const sentAt = new Map<string, number>();
      const consumed: number[] = [];
      const acked: number[] = [];
      let seen = 0;
      await consumer.start((id) => {
        const at = sentAt.get(id);
        if (at !== undefined) consumed.push(performance.now() - at);
        seen++;
      });
      // Warm-up: the first fetches after a join are slower; not measured.
      for (let i = 0; i < 20; i++) {
        await sender.send(
          topic,
          [{ key: randomUUID(), value: JSON.stringify({ id: 'warm' }) }],
          10_000,
        );
        await sleep(1000 / rate);
      }
      while (seen < 20) await sleep(10);
      for (let i = 0; i < messages; i++) {
        const id = randomUUID();
        const t0 = performance.now();
        sentAt.set(id, t0);
        await sender.send(topic, [{ key: id, value: JSON.stringify({ id }) }], 10_000);
        acked.push(performance.now() - t0);
        await sleep(Math.max(0, 1000 / rate - (performance.now() - t0)));
      }
      const deadline = Date.now() + 10_000;
      while (consumed.length < messages && Date.now() < deadline) await sleep(10);
      await consumer.stop();
      process.stdout.write(
        `${mode.padEnd(13)} acked: ${summary(acked)}\n${''.padEnd(13)} consumed: ${summary(consumed)}\n`,
      );
    }
  } finally {
    await sender.close();
    await broker.stop();
  }

  function makeConsumer(mode: string, topics: readonly string[], groupId: string): Consumer {
    if (mode === 'plain') {
      const consumer = kafka.consumer({
        groupId,
        ...(maxWait ? { maxWaitTimeInMs: Number(maxWait) } : {}),
      });
      return {
        start: async (onMessage) => {
          await consumer.connect();
          await consumer.subscribe({ topics: [...topics], fromBeginning: true });
          let joined!: () => void;
          const join = new Promise<void>((resolve) => (joined = resolve));
          consumer.on(consumer.events.GROUP_JOIN, () => joined());
          await consumer.run({
            partitionsConsumedConcurrently: 3,
            eachMessage: async ({ message }) => {
              onMessage((JSON.parse(String(message.value)) as { id: string }).id);
              await work();
            },
          });
          await join;
        },
        stop: () => consumer.disconnect(),
      };
    }
    const batch = mode === 'runner-batch';
    let runner: KafkaConsumerRunner | undefined;
    return {
      start: async (onMessage) => {
        const handlers: KafkaMessageHandler<{ id: string }>[] = topics.map((t) => ({
          topic: t,
          schema,
          handle: async (m) => {
            onMessage(m.value.id);
            await work();
          },
          ...(batch
            ? {
                handleBatch: async (ms: readonly { value: { id: string } }[]) => {
                  for (const m of ms) onMessage(m.value.id);
                  await work();
                },
              }
            : {}),
        }));
        runner = new KafkaConsumerRunner({
          kafka,
          producer: { sendRaw: (topic, ms) => sender.send(topic, ms, 10_000) },
          logger,
          handlers: () => handlers,
          settings: resolveConsumerSettings(
            { topicPartitions: 6, partitionsConsumedConcurrently: 3 },
            { groupId, lagIntervalMs: 0, ...(maxWait ? { maxWaitTimeMs: Number(maxWait) } : {}) },
          ),
        });
        await runner.start();
        await runner.whenJoined();
      },
      stop: async () => runner?.stop(),
    };
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
