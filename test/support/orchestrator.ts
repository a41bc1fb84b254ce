/**
 * The orchestrator in-process for integration tests: a Nest app on a test database and the real
 * broker (KAFKA_BROKERS), its own consumer group starting at the end of every consumed topic, a
 * movable clock; plus a topic collector and a producer that speak like the gateway-adapter,
 * callback-ingest and the internal services do.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Kafka, type KafkaMessage, logLevel, Partitioners, type Producer } from 'kafkajs';
import { loadConfig } from '@payments/config';
import {
  CE_SOURCES,
  ceType,
  type PaymentEvent,
  TOPICS,
  toKafkaHeaders,
  type GatewayRequest,
} from '@payments/contracts';
import { getConsumerToken, type KafkaConsumerRunner } from '@payments/kafka';
import { Logger } from '@payments/logging';
import { AppModule } from '../../apps/orchestrator/src/app.module';
import { pointGroupAtEnd } from './kafka';
import { Clock } from '../../apps/orchestrator/src/runtime/clock';
import { orchestratorConfigShape } from '../../apps/orchestrator/src/config';

export function brokers(): string[] {
  const value = process.env.KAFKA_BROKERS;
  if (!value) throw new Error('KAFKA_BROKERS is not set: run through scripts/with-infra.sh');
  return value.split(',').map((b) => b.trim());
}

export function unique(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

export function kafka(clientId = 'orchestrator-test'): Kafka {
  return new Kafka({ clientId, brokers: brokers(), logLevel: logLevel.NOTHING });
}

export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A clock the test can move forward (timers compare due_at with it). */
export class TestClock extends Clock {
  offsetMs = 0;
  /** When set, time stands still at this instant. */
  frozenAt: Date | undefined;
  override now(): Date {
    return this.frozenAt ? new Date(this.frozenAt) : new Date(Date.now() + this.offsetMs);
  }
}

const CONSUMED = [TOPICS.commands, TOPICS.gatewayResults, TOPICS.gatewayCallbacks];
const PRODUCED = [TOPICS.events, TOPICS.gatewayRequests, `${TOPICS.commands}.dlq`];

/** Creates the topics if missing and points a new group at their current end. */
async function prepareGroup(groupId: string): Promise<void> {
  const admin = kafka('orchestrator-test-admin').admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = [...CONSUMED, ...PRODUCED].filter((t) => !existing.has(t));
    if (missing.length > 0) {
      await admin
        .createTopics({
          waitForLeaders: true,
          topics: missing.map((topic) => ({ topic, numPartitions: 3 })),
        })
        .catch(() => undefined); // another suite may have created them at the same moment
    }
  } finally {
    await admin.disconnect();
  }
  await pointGroupAtEnd(groupId, CONSUMED);
}

export interface RunningOrchestrator {
  readonly app: INestApplication;
  readonly url: string;
  readonly clock: TestClock;
  readonly groupId: string;
  close(): Promise<void>;
}

/** Boots AppModule as main.ts does (HTTP on a free port), with the env overrides given. */
export async function startOrchestrator(
  databaseUrl: string,
  env: Record<string, string> = {},
  options: { groupId?: string; clock?: TestClock } = {},
): Promise<RunningOrchestrator> {
  // A new group starts at the end of the topics; joining an existing group (a second replica)
  // takes over its offsets.
  const groupId = options.groupId ?? unique('orchestrator-test');
  if (options.groupId === undefined) await prepareGroup(groupId);
  const config = loadConfig('orchestrator', orchestratorConfigShape, {
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_SIZE: '5',
    KAFKA_BROKERS: brokers().join(','),
    KAFKA_CONSUMER_GROUP: groupId,
    KAFKA_TOPIC_PARTITIONS: '3',
    LOG_LEVEL: process.env.ORCHESTRATOR_TEST_LOG ?? 'silent',
    TIMER_POLL_MS: '100',
    // Scheduled reconciliation runs write outbox rows of their own; the runtime's tests count
    // rows exactly. Reconciliation is tested on the whole stack (test/e2e/reconciliation).
    RECONCILIATION_WORKER_ENABLED: 'false',
    ...env,
  });
  const clock = options.clock ?? new TestClock();
  const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(config)] })
    .overrideProvider(Clock)
    .useValue(clock)
    .compile();
  const app = moduleRef.createNestApplication(
    process.env.ORCHESTRATOR_TEST_LOG ? {} : { logger: false },
  );
  if (process.env.ORCHESTRATOR_TEST_LOG) app.useLogger(app.get(Logger));
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const runner = app.get<KafkaConsumerRunner>(getConsumerToken(groupId));
  await runner.whenJoined();
  return { app, url, clock, groupId, close: () => app.close() };
}

export interface Received {
  readonly topic: string;
  readonly key: string;
  readonly headers: Record<string, string>;
  readonly value: Record<string, unknown>;
  /** The value as UTF-8 text, as it was on the topic. */
  readonly text: string;
}

function headerStrings(message: KafkaMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    const single = Array.isArray(value) ? value[0] : value;
    if (single !== undefined)
      out[name] = Buffer.isBuffer(single) ? single.toString('utf8') : String(single);
  }
  return out;
}

function parseValue(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { raw: text };
  }
}

/** Reads payments.events.v1 and payments.gateway.requests.v1 from the beginning, keeps everything. */
export class TopicCollector {
  readonly messages: Received[] = [];
  private readonly consumer = kafka('orchestrator-test-collector').consumer({
    groupId: unique('collector'),
  });

  async start(): Promise<void> {
    await prepareGroup(unique('prepare')); // makes sure the topics exist
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: PRODUCED, fromBeginning: true });
    await this.consumer.run({
      eachMessage: async ({ topic, message }) => {
        this.messages.push({
          topic,
          key: message.key?.toString('utf8') ?? '',
          headers: headerStrings(message),
          value: parseValue(message.value?.toString('utf8') ?? 'null'),
          text: message.value?.toString('utf8') ?? '',
        });
      },
    });
  }

  stop(): Promise<void> {
    return this.consumer.disconnect();
  }

  events(paymentId: string): Array<Received & { value: PaymentEvent }> {
    return this.messages.filter(
      (m): m is Received & { value: PaymentEvent } =>
        m.topic === TOPICS.events && m.key === paymentId,
    );
  }

  deadLetters(key: string): Received[] {
    return this.messages.filter((m) => m.topic === `${TOPICS.commands}.dlq` && m.key === key);
  }

  requests(paymentId: string): Array<Received & { value: GatewayRequest }> {
    return this.messages.filter(
      (m): m is Received & { value: GatewayRequest } =>
        m.topic === TOPICS.gatewayRequests && m.key === paymentId,
    );
  }

  /** Waits until the payment has at least `count` events and returns them. */
  waitForEvents(
    paymentId: string,
    count: number,
    timeoutMs?: number,
  ): Promise<Array<Received & { value: PaymentEvent }>> {
    return waitFor(
      () => {
        const events = this.events(paymentId);
        return events.length >= count ? events : undefined;
      },
      `${count} events of ${paymentId} (have ${this.events(paymentId)
        .map((e) => e.value.type)
        .join(',')})`,
      timeoutMs,
    );
  }

  waitForRequests(
    paymentId: string,
    count: number,
    timeoutMs?: number,
  ): Promise<Array<Received & { value: GatewayRequest }>> {
    return waitFor(
      () => {
        const requests = this.requests(paymentId);
        return requests.length >= count ? requests : undefined;
      },
      `${count} gateway requests of ${paymentId}`,
      timeoutMs,
    );
  }
}

/** Produces like the other services: key = payment id, CloudEvents headers. */
export class TestProducer {
  private readonly producer: Producer = kafka('orchestrator-test-producer').producer({
    createPartitioner: Partitioners.DefaultPartitioner,
  });

  connect(): Promise<void> {
    return this.producer.connect();
  }

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }

  async send(
    topic: string,
    key: string,
    value: unknown,
    type: string,
    source: string,
  ): Promise<void> {
    await this.producer.send({
      topic,
      acks: -1,
      messages: [
        {
          key,
          value: typeof value === 'string' ? value : JSON.stringify(value),
          headers: toKafkaHeaders({
            id: randomUUID(),
            type,
            source,
            subject: key,
            time: new Date().toISOString(),
          }),
        },
      ],
    });
  }

  command(command: { paymentId: string; type: string } & Record<string, unknown>): Promise<void> {
    return this.send(
      TOPICS.commands,
      command.paymentId,
      command,
      ceType.command(command.type),
      '/tests/merchant-platform',
    );
  }

  result(
    result: { paymentId: string; operation: string } & Record<string, unknown>,
  ): Promise<void> {
    return this.send(
      TOPICS.gatewayResults,
      result.paymentId,
      result,
      ceType.gatewayResult(result.operation),
      CE_SOURCES.gatewayAdapter,
    );
  }

  callback(message: { paymentId: string; kind: string } & Record<string, unknown>): Promise<void> {
    return this.send(
      TOPICS.gatewayCallbacks,
      message.paymentId,
      message,
      ceType.callback(message.kind),
      CE_SOURCES.callbackIngest,
    );
  }
}
