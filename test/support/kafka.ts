/**
 * Helpers for integration tests against the real broker that scripts/with-infra.sh starts (or the
 * one named by KAFKA_BROKERS). Every test should use its own topics and groups (`uniqueName`).
 */
import { randomBytes } from 'node:crypto';
import { type DynamicModule, type INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Kafka, type KafkaMessage, logLevel, type Message, Partitioners } from 'kafkajs';
import { register } from 'prom-client';
import { pointGroupAtEnd as pointStackGroupAtEnd } from '../../scripts/stack/consumer-groups';
import {
  getConsumerToken,
  KafkaConsumerRunner,
  type KafkaConsumerOptions,
  type KafkaLogger,
  KafkaModule,
  type KafkaModuleOptions,
  KafkaProducerService,
} from '@payments/kafka';

export function testBrokers(): string[] {
  const value = process.env.KAFKA_BROKERS;
  if (!value) {
    throw new Error(
      'KAFKA_BROKERS is not set: run integration tests through `bash scripts/with-infra.sh npx jest ...` ' +
        'or start a broker with `npm run kafka:start` and export KAFKA_BROKERS=127.0.0.1:9092',
    );
  }
  return value
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
}

/** A topic or group name unique to this run and call. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

export function testKafka(clientId = 'test-support'): Kafka {
  return new Kafka({ clientId, brokers: testBrokers(), logLevel: logLevel.NOTHING });
}

export async function withAdmin<T>(
  fn: (admin: ReturnType<Kafka['admin']>) => Promise<T>,
): Promise<T> {
  const admin = testKafka('test-admin').admin();
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.disconnect();
  }
}

export async function createTopics(topics: readonly string[], numPartitions = 1): Promise<void> {
  await withAdmin((admin) =>
    admin.createTopics({
      waitForLeaders: true,
      topics: topics.map((topic) => ({ topic, numPartitions })),
    }),
  );
}

/** Committed offset of a group per partition (-1 when nothing is committed). */
export async function committedOffsets(
  groupId: string,
  topic: string,
): Promise<Map<number, string>> {
  return withAdmin(async (admin) => {
    const [result] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return new Map((result?.partitions ?? []).map((p) => [p.partition, p.offset]));
  });
}

/** Produces messages exactly as given (raw bytes allowed), acknowledged by all replicas. */
export async function produceRaw(topic: string, messages: Message[]): Promise<void> {
  const producer = testKafka('test-producer').producer({
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  try {
    await producer.send({ topic, messages, acks: -1 });
  } finally {
    await producer.disconnect();
  }
}

/**
 * Points a consumer group at the current end of these topics, so it reads only what is produced
 * from now on — never what earlier tests left unconsumed; retried while a killed earlier member's
 * session has not expired (scripts/stack/consumer-groups.ts, which the e2e stacks use too).
 */
export async function pointGroupAtEnd(groupId: string, topics: readonly string[]): Promise<void> {
  await pointStackGroupAtEnd(testKafka('test-admin'), groupId, topics);
}

/** Reads the first `count` messages of a topic from the beginning (throw-away group). */
export async function readMessages(
  topic: string,
  count: number,
  timeoutMs = 60_000,
): Promise<Array<KafkaMessage & { partition: number }>> {
  const consumer = testKafka('test-reader').consumer({
    groupId: uniqueName('reader'),
    maxWaitTimeInMs: 200, // disconnect waits for the fetch in flight
  });
  const received: Array<KafkaMessage & { partition: number }> = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        received.push({ ...message, partition });
      },
    });
    await waitFor(() => received.length >= count, `${count} messages on ${topic}`, timeoutMs);
    return received;
  } finally {
    await consumer.disconnect();
  }
}

/** Polls until `condition` holds; rejects naming `what` when it does not within the timeout. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface LogEntry {
  readonly level: string;
  readonly msg: string;
  readonly fields: Record<string, unknown>;
}

/** A KafkaLogger that keeps entries in memory (set KAFKA_TEST_LOG=1 to also print them). */
export function memoryLogger(): KafkaLogger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const print = process.env.KAFKA_TEST_LOG === '1';
  const at =
    (level: string) =>
    (fields: Record<string, unknown>, msg: string): void => {
      entries.push({ level, msg, fields });
      if (print) process.stderr.write(`${level} ${msg} ${JSON.stringify(fields)}\n`);
    };
  return {
    entries,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
  };
}

@Module({})
class KafkaTestAppModule {}

export interface KafkaTestApp {
  readonly app: INestApplicationContext;
  readonly runner: KafkaConsumerRunner;
  readonly producer: KafkaProducerService;
  readonly logger: ReturnType<typeof memoryLogger>;
}

/**
 * A Nest application context with KafkaModule.forRoot + forConsumer, initialised (the consumer
 * started) and joined to its group. Close it with `app.close()` (graceful consumer stop).
 */
export async function startKafkaTestApp(
  consumer: KafkaConsumerOptions,
  root: Partial<KafkaModuleOptions> = {},
): Promise<KafkaTestApp> {
  const logger = memoryLogger();
  const entry: DynamicModule = {
    module: KafkaTestAppModule,
    imports: [
      KafkaModule.forRoot({
        clientId: uniqueName('test-app'),
        brokers: testBrokers(),
        logger,
        topicPartitions: 1,
        partitionsConsumedConcurrently: 1,
        ...root,
      }),
      KafkaModule.forConsumer({ lagIntervalMs: 0, ...consumer }),
    ],
  };
  const app = await NestFactory.createApplicationContext(entry, { logger: false });
  const runner = app.get<KafkaConsumerRunner>(getConsumerToken(consumer.groupId));
  await runner.whenJoined();
  return { app, runner, producer: app.get(KafkaProducerService), logger };
}

/** Value of a counter or gauge of the default registry for exactly these labels (0 if none). */
export async function metricValue(name: string, labels: Record<string, string>): Promise<number> {
  const metric = register.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  const match = values.find((v) =>
    Object.entries(labels).every(([k, value]) => v.labels[k] === value),
  );
  return match?.value ?? 0;
}

/** A promise with its resolve function, to hold a handler until the test lets it go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
