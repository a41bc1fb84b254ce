/**
 * The gateway-adapter as a Nest application in the test process, wired exactly as main.ts wires
 * it (AppModule.forRoot with configuration resolved from an environment object and secrets
 * checked by loadAdapterSecrets), against the real broker and a test database; plus a producer of
 * gateway requests, a collector of gateway results, and `startAdapterStack`, which starts all of
 * it with a test database and the sandbox for one suite.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Kafka, type KafkaMessage, logLevel, Partitioners, type Consumer } from 'kafkajs';
import { loadConfig } from '@payments/config';
import {
  type Card,
  CE_HEADERS,
  ceType,
  GatewayResult,
  type GatewayRequest,
  newTraceparent,
  seal,
  TOPICS,
} from '@payments/contracts';
import { getConsumerToken, type KafkaConsumerRunner } from '@payments/kafka';
import { createLogger } from '@payments/logging';
import { AppModule, CONSUMER_GROUP, SERVICE_NAME } from '../../apps/gateway-adapter/src/app.module';
import { gatewayAdapterConfigShape } from '../../apps/gateway-adapter/src/config';
import {
  type EndpointLimits,
  loadAdapterSecrets,
} from '../../apps/gateway-adapter/src/secrets/credentials';
import { SANDBOX_MERCHANT, startTestSandbox, type TestSandbox } from './adapter-sandbox';
import { createTopics, pointGroupAtEnd, testBrokers, uniqueName, waitFor } from './kafka';
import { createTestDatabase, type TestDatabase } from './postgres';

/** A throw-away sealing key pair for one test run. */
export function sealingKeys(): { publicPem: string; privatePem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

export function sealCard(card: Card, publicPem: string, paymentId: string): string {
  return seal(card, publicPem, paymentId);
}

/**
 * A sale as the orchestrator sends one to the adapter, its card (the sandbox's approving test
 * PAN, `cvv` 123 unless given) sealed with `publicPem` for a new payment; `prefix` starts its
 * client_orderid (a suite's sales are told apart in the sandbox's ledger and fault rules), and
 * `over` sets any other field (an endpoint, an amount, an address).
 */
export function saleRequest(
  publicPem: string,
  prefix: string,
  over: Partial<GatewayRequest> = {},
  cvv = '123',
): GatewayRequest {
  const paymentId = randomUUID();
  return {
    operation: 'sale',
    requestId: randomUUID(),
    paymentId,
    merchant: { endpointId: SANDBOX_MERCHANT.endpointId },
    clientOrderId: `${prefix}-${paymentId.slice(0, 8)}`,
    attempt: 1,
    requestedAt: new Date().toISOString(),
    amount: { minor: 1042, currency: 'USD' },
    orderDescription: 'Adapter test order',
    customer: { email: 'jane@example.com', ipAddress: '203.0.113.7', phone: '+15550100' },
    billingAddress: { address1: '1 Main St', city: 'Springfield', zipCode: '12345', country: 'US' },
    redirectUrl: 'https://shop.example/return',
    sealedCard: sealCard(
      {
        number: '4444555566661111',
        expiryMonth: 12,
        expiryYear: 2031,
        cvv,
        holderName: 'JANE DOE',
      },
      publicPem,
      paymentId,
    ),
    ...over,
  } as GatewayRequest;
}

export interface RunningAdapter {
  readonly app: INestApplication;
  readonly url: string;
  /** Every JSON log line the adapter wrote (level debug). */
  readonly logs: string[];
  close(): Promise<void>;
}

export async function startAdapter(env: Record<string, string>): Promise<RunningAdapter> {
  const config = loadConfig(SERVICE_NAME, gatewayAdapterConfigShape, {
    KAFKA_BROKERS: testBrokers().join(','),
    KAFKA_TOPIC_PARTITIONS: '1',
    KAFKA_CONSUMER_CONCURRENCY: '1',
    LOG_LEVEL: 'debug',
    ...env,
  });
  const secrets = loadAdapterSecrets(config);
  // The adapter's group name is fixed: start it at the end of the requests topic, so it never
  // handles what earlier tests left there (an orchestrator test's status polls, say, would spend
  // this test's status budget).
  await createTopics([TOPICS.gatewayRequests]);
  await pointGroupAtEnd(CONSUMER_GROUP, [TOPICS.gatewayRequests]);
  const logs: string[] = [];
  const logger = createLogger({
    service: SERVICE_NAME,
    version: 'test',
    level: 'debug',
    pretty: false,
    destination: { write: (line: string) => void logs.push(line) },
  });
  const app = await NestFactory.create(AppModule.forRoot(config, secrets, { logger }), {
    logger: false,
  });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  await app.get<KafkaConsumerRunner>(getConsumerToken(CONSUMER_GROUP)).whenJoined();
  return { app, url: `http://127.0.0.1:${address.port}`, logs, close: () => app.close() };
}

function kafka(): Kafka {
  return new Kafka({
    clientId: uniqueName('adapter-test'),
    brokers: testBrokers(),
    logLevel: logLevel.NOTHING,
  });
}

/** Produces gateway requests with CloudEvents headers and a traceparent, keyed by payment id. */
export async function produceRequests(
  requests: ReadonlyArray<GatewayRequest | { raw: string; key: string }>,
): Promise<{ traceparents: string[] }> {
  const producer = kafka().producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const traceparents: string[] = [];
  try {
    await producer.send({
      topic: TOPICS.gatewayRequests,
      acks: -1,
      messages: requests.map((r) => {
        if ('raw' in r) return { key: r.key, value: r.raw };
        const traceparent = newTraceparent();
        traceparents.push(traceparent);
        return {
          key: r.paymentId,
          value: JSON.stringify(r),
          headers: {
            [CE_HEADERS.specversion]: '1.0',
            [CE_HEADERS.id]: r.requestId,
            [CE_HEADERS.type]: ceType.gatewayRequest(r.operation),
            [CE_HEADERS.source]: '/payments/orchestrator',
            [CE_HEADERS.subject]: r.paymentId,
            [CE_HEADERS.time]: r.requestedAt,
            [CE_HEADERS.contentType]: 'application/json',
            [CE_HEADERS.traceparent]: traceparent,
          },
        };
      }),
    });
  } finally {
    await producer.disconnect();
  }
  return { traceparents };
}

export interface CollectedResult {
  readonly key: string | null;
  readonly headers: Record<string, string>;
  readonly raw: string;
  readonly value: GatewayResult;
}

/** Reads a topic from the beginning into memory (throw-away group) until stopped. */
export class TopicCollector {
  readonly messages: KafkaMessage[] = [];
  private consumer: Consumer | undefined;

  constructor(private readonly topic: string) {}

  async start(): Promise<void> {
    const consumer = kafka().consumer({ groupId: uniqueName('adapter-collector') });
    this.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topics: [this.topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        this.messages.push(message);
      },
    });
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
  }
}

function headersOf(message: KafkaMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (value !== undefined) out[name] = String(Array.isArray(value) ? value[0] : value);
  }
  return out;
}

export function results(collector: TopicCollector): CollectedResult[] {
  return collector.messages.flatMap((m) => {
    const raw = m.value?.toString('utf8') ?? '';
    const parsed = GatewayResult.safeParse(JSON.parse(raw));
    return parsed.success
      ? [{ key: m.key?.toString('utf8') ?? null, headers: headersOf(m), raw, value: parsed.data }]
      : [];
  });
}

/** Waits until `count` results for the request have arrived; returns them in arrival order. */
export async function resultsFor(
  collector: TopicCollector,
  requestId: string,
  count = 1,
  timeoutMs = 60_000,
): Promise<CollectedResult[]> {
  await waitFor(
    () => results(collector).filter((r) => r.value.requestId === requestId).length >= count,
    `${count} result(s) for request ${requestId}`,
    timeoutMs,
  );
  return results(collector).filter((r) => r.value.requestId === requestId);
}

/**
 * One entry of the adapter's GATEWAY_CREDENTIALS in a suite: each field left out is the sandbox's
 * default merchant (SANDBOX_MERCHANT: endpoint 1113, its login and control key) on the suite's
 * sandbox.
 */
export interface TestEndpoint {
  readonly endpointId?: string;
  /** Default: the suite's sandbox (`TestSandbox.baseUrl`). */
  readonly baseUrl?: string;
  readonly login?: string;
  readonly controlKey?: string;
  readonly rsaPrivateKeyFile?: string;
  /** The entry's own limits over the adapter's defaults (the GATEWAY_* variables). */
  readonly limits?: Partial<EndpointLimits>;
  readonly currencyExponents?: Readonly<Record<string, number>>;
}

export interface AdapterStackOptions {
  /** The test database's prefix: `payments_test_<database>_<random>`. */
  readonly database: string;
  /** The sealing key pair of the suite's cards: the adapter opens them with the private half. */
  readonly keys: { readonly privatePem: string };
  /** GATEWAY_CREDENTIALS' entries; default one, the sandbox merchant's endpoint 1113. */
  readonly endpoints?: readonly TestEndpoint[];
}

/** A suite's adapter with its test database, sandbox and a collector of gateway results. */
export interface AdapterStack {
  readonly db: TestDatabase;
  readonly sandbox: TestSandbox;
  readonly adapter: RunningAdapter;
  /** Reads payments.gateway.results.v1 from the beginning. */
  readonly collector: TopicCollector;
  /** Stops the collector, the adapter and the sandbox, then drops the database. */
  stop(): Promise<void>;
}

/**
 * Creates the test database, starts the sandbox, the adapter (on that database, with the
 * endpoints' credentials, the sealing key and a callback URL nothing answers) and a collector
 * of its results. The suite's `beforeAll` calls it and its `afterAll` calls `stop`; a start that
 * fails stops what it had started and drops the database.
 */
export async function startAdapterStack(options: AdapterStackOptions): Promise<AdapterStack> {
  const db = await createTestDatabase(options.database);
  const collector = new TopicCollector(TOPICS.gatewayResults);
  let sandbox: TestSandbox | undefined;
  let adapter: RunningAdapter | undefined;
  const stop = async (): Promise<void> => {
    // Each cleanup runs even if an earlier one fails, so the test database is always dropped.
    await collector.stop().catch(() => undefined);
    await adapter?.close().catch(() => undefined);
    await sandbox?.close().catch(() => undefined);
    await db.drop();
  };
  try {
    sandbox = await startTestSandbox();
    const sandboxUrl = sandbox.baseUrl;
    const endpoints = (options.endpoints ?? [{}]).map((endpoint) => ({
      endpointId: SANDBOX_MERCHANT.endpointId,
      baseUrl: sandboxUrl,
      login: SANDBOX_MERCHANT.login,
      controlKey: SANDBOX_MERCHANT.controlKey,
      ...endpoint,
    }));
    adapter = await startAdapter({
      DATABASE_URL: db.url,
      GATEWAY_CREDENTIALS: JSON.stringify({ endpoints }),
      CARD_SEALING_PRIVATE_KEY: options.keys.privatePem,
      CALLBACK_BASE_URL: 'http://127.0.0.1:9/',
    });
    await collector.start();
    return { db, sandbox, adapter, collector, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
