/**
 * callback-ingest started in-process (the same createCallbackIngestApp main.ts uses) on a free
 * port, with its logs captured, plus a collector of what it publishes to the real broker.
 */
import type { INestApplication } from '@nestjs/common';
import { Kafka, type KafkaMessage, logLevel } from 'kafkajs';
import { loadConfig } from '@payments/config';
import { createLogger } from '@payments/logging';
import { SERVICE_NAME } from '../../apps/callback-ingest/src/app.module';
import { createCallbackIngestApp } from '../../apps/callback-ingest/src/bootstrap';
import {
  callbackIngestConfigShape,
  resolveControlKeys,
} from '../../apps/callback-ingest/src/config';
import type { Clock } from '../../apps/callback-ingest/src/domain/clock';
import { TEST_CONTROL_KEY, TEST_ENDPOINT_ID } from './callback';
import { testBrokers, uniqueName, waitFor } from './kafka';

export const MERCHANT_PAGE = 'https://shop.example.com/payment/finished?lang=en';

export interface RunningCallbackIngest {
  readonly app: INestApplication;
  readonly base: string;
  /** The JSON log lines written (shared with other apps of the process, see below). */
  readonly logs: string[];
  close(): Promise<void>;
}

/**
 * `logs`: where the JSON lines go. nestjs-pino keeps one root logger per process, so two apps
 * started in one test process write to whichever was created last: give them the same array.
 */
export async function startCallbackIngest(
  env: Record<string, string> = {},
  options: { readonly clock?: Clock; readonly logs?: string[] } = {},
): Promise<RunningCallbackIngest> {
  const { clock } = options;
  const config = loadConfig(SERVICE_NAME, callbackIngestConfigShape, {
    KAFKA_BROKERS: testBrokers().join(','),
    CALLBACK_CONTROL_KEYS: JSON.stringify({ [TEST_ENDPOINT_ID]: TEST_CONTROL_KEY }),
    MERCHANT_RETURN_URL: MERCHANT_PAGE,
    KAFKA_TOPIC_PARTITIONS: '3',
    CALLBACK_PUBLISH_TIMEOUT_MS: '15000',
    LOG_LEVEL: 'debug',
    ...env,
  });
  const logs = options.logs ?? [];
  const logger = createLogger({
    service: SERVICE_NAME,
    version: 'test',
    level: config.log.logLevel,
    pretty: false,
    destination: {
      write: (line: string) => {
        logs.push(line);
        if (process.env.CALLBACK_TEST_LOG === '1') process.stderr.write(line);
      },
    },
  });
  const app = await createCallbackIngestApp(
    { config, controlKeys: resolveControlKeys(config) },
    { logger, ...(clock ? { clock } : {}) },
  );
  await app.listen(0, '127.0.0.1');
  const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return { app, base, logs, close: () => app.close() };
}

export type Collected = KafkaMessage & {
  readonly partition: number;
  readonly keyText: string;
  readonly headerText: Record<string, string>;
  readonly json: Record<string, unknown>;
};

/** Reads a topic from the beginning into memory for the whole test file. */
export class TopicCollector {
  readonly messages: Collected[] = [];
  private readonly consumer = new Kafka({
    clientId: 'callback-test-collector',
    brokers: testBrokers(),
    logLevel: logLevel.NOTHING,
  }).consumer({ groupId: uniqueName('callback-collector') });

  constructor(private readonly topic: string) {}

  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [this.topic], fromBeginning: true });
    await this.consumer.run({
      eachMessage: async ({ partition, message }) => {
        const headerText: Record<string, string> = {};
        for (const [k, v] of Object.entries(message.headers ?? {})) {
          if (v !== undefined) headerText[k] = v.toString();
        }
        this.messages.push({
          ...message,
          partition,
          keyText: message.key?.toString() ?? '',
          headerText,
          json: JSON.parse(message.value?.toString() ?? 'null') as Record<string, unknown>,
        });
      },
    });
  }

  forKey(key: string): Collected[] {
    return this.messages.filter((m) => m.keyText === key);
  }

  /** Waits until a message of `key` satisfies `match`, then returns every message of that key. */
  async until(key: string, match: (m: Collected) => boolean, what: string): Promise<Collected[]> {
    await waitFor(() => this.forKey(key).some(match), what, 60_000);
    return this.forKey(key);
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
  }
}
