import { randomUUID } from 'node:crypto';
import { Consumer, Kafka, logLevel, Partitioners, Producer } from 'kafkajs';
import {
  PaymentCommand,
  PaymentEvent,
  TOPICS,
  fromKafkaHeaders,
  parseEvent,
} from '@payments/contracts';

/**
 * What an internal service and a finance consumer do with the topics: produce commands
 * (key = payment id) and read the authoritative event stream. Used by the demo, the e2e tests and
 * the benchmark; nothing here is part of the apps.
 */
export interface ReceivedEvent {
  readonly event: PaymentEvent;
  readonly ceId: string;
  readonly ceType: string;
  readonly partition: number;
  readonly offset: string;
  readonly receivedAt: number;
}

export class CommandProducer {
  private readonly producer: Producer;

  constructor(kafka: Kafka) {
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  /** Sends commands as an internal service would: JSON value, key = payment id. */
  async send(commands: readonly PaymentCommand[] | readonly unknown[], raw = false): Promise<void> {
    await this.producer.send({
      topic: TOPICS.commands,
      acks: -1,
      messages: commands.map((command) => {
        const c = command as { paymentId?: string; commandId?: string };
        return {
          key: c.paymentId ?? randomUUID(),
          value: raw && typeof command === 'string' ? command : JSON.stringify(command),
          headers: { 'content-type': 'application/json' },
        };
      }),
    });
  }

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }
}

/** Reads payments.events.v1 from the beginning and indexes what arrives by payment id. */
export class EventCollector {
  private readonly consumer: Consumer;
  private readonly byPayment = new Map<string, ReceivedEvent[]>();
  private readonly listeners = new Set<() => void>();
  readonly all: ReceivedEvent[] = [];
  readonly invalid: { offset: string; error: string }[] = [];

  constructor(
    kafka: Kafka,
    private readonly onEvent?: (received: ReceivedEvent) => void,
  ) {
    this.consumer = kafka.consumer({ groupId: `observer-${randomUUID()}`, maxWaitTimeInMs: 100 });
  }

  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: TOPICS.events, fromBeginning: true });
    await this.consumer.run({
      eachMessage: async ({ message, partition }) => {
        const headers = fromKafkaHeaders(message.headers ?? {});
        if (!headers.ok) {
          this.invalid.push({ offset: message.offset, error: `headers: ${headers.reason}` });
          return;
        }
        const parsed = parseEvent(JSON.parse(message.value?.toString('utf8') ?? 'null'));
        if (!parsed.ok) {
          this.invalid.push({ offset: message.offset, error: JSON.stringify(parsed) });
          return;
        }
        const received: ReceivedEvent = {
          event: parsed.event,
          ceId: headers.envelope.id,
          ceType: headers.envelope.type,
          partition,
          offset: message.offset,
          receivedAt: Date.now(),
        };
        this.all.push(received);
        const list = this.byPayment.get(parsed.event.paymentId) ?? [];
        list.push(received);
        this.byPayment.set(parsed.event.paymentId, list);
        this.onEvent?.(received);
        for (const listener of this.listeners) listener();
        await Promise.resolve();
      },
    });
  }

  eventsOf(paymentId: string): ReceivedEvent[] {
    return [...(this.byPayment.get(paymentId) ?? [])];
  }

  /** Resolves with the first event of the payment that matches, waiting up to timeoutMs. */
  async waitFor(
    paymentId: string,
    predicate: (event: PaymentEvent) => boolean,
    timeoutMs = 60_000,
  ): Promise<ReceivedEvent> {
    const find = () => this.eventsOf(paymentId).find((r) => predicate(r.event));
    const found = find();
    if (found) return found;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        const seen = this.eventsOf(paymentId).map((r) => `${r.event.version}:${r.event.type}`);
        reject(
          new Error(
            `no matching event for ${paymentId} within ${timeoutMs} ms; seen [${seen.join(', ')}]`,
          ),
        );
      }, timeoutMs);
      const check = () => {
        const hit = find();
        if (hit) {
          clearTimeout(timer);
          this.listeners.delete(check);
          resolve(hit);
        }
      };
      this.listeners.add(check);
    });
  }

  waitForType(paymentId: string, types: readonly string[], timeoutMs?: number) {
    return this.waitFor(paymentId, (e) => types.includes(e.type), timeoutMs);
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
  }
}

export function kafkaClient(brokers: readonly string[], clientId: string): Kafka {
  return new Kafka({ clientId, brokers: [...brokers], logLevel: logLevel.NOTHING });
}

/** One message as stored on a topic (`timestamp`: the producer's create time, epoch ms). */
export interface StoredMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly timestamp: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, string>>;
}

/** High watermark of every partition of `topics`, keyed `<topic>/<partition>`. */
export async function topicEndOffsets(
  kafka: Kafka,
  topics: readonly string[],
): Promise<Map<string, number>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const ends = new Map<string, number>();
    for (const topic of topics) {
      for (const p of await admin.fetchTopicOffsets(topic)) {
        ends.set(`${topic}/${p.partition}`, Number(p.high));
      }
    }
    return ends;
  } finally {
    await admin.disconnect();
  }
}

/** The topics whose names start with `prefix` (e.g. `payments.`: every topic and its DLQ). */
export async function listTopics(kafka: Kafka, prefix: string): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.listTopics()).filter((t) => t.startsWith(prefix)).sort();
  } finally {
    await admin.disconnect();
  }
}

/**
 * Reads every message of `topics` from `from` (offsets keyed `<topic>/<partition>`; the beginning
 * when absent) up to the end offsets taken when called, handing each to `visit` in partition
 * order, without keeping them. A throw-away consumer group; nothing is committed that matters.
 */
export async function scanTopics(
  kafka: Kafka,
  topics: readonly string[],
  visit: (message: StoredMessage) => void,
  from: ReadonlyMap<string, number> = new Map(),
  timeoutMs = 300_000,
): Promise<number> {
  const ends = await topicEndOffsets(kafka, topics);
  const left = new Set<string>();
  for (const [key, end] of ends) if (end > (from.get(key) ?? 0)) left.add(key);
  if (left.size === 0) return 0;
  const consumer = kafka.consumer({ groupId: `scan-${randomUUID()}`, maxWaitTimeInMs: 100 });
  let count = 0;
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [...topics], fromBeginning: true });
    const done = new Promise<void>((resolve) => {
      void consumer.run({
        autoCommit: false,
        eachMessage: async ({ topic, partition, message }) => {
          const key = `${topic}/${partition}`;
          const offset = Number(message.offset);
          const end = ends.get(key) ?? 0;
          if (offset >= (from.get(key) ?? 0) && offset < end) {
            const headers: Record<string, string> = {};
            for (const [name, value] of Object.entries(message.headers ?? {})) {
              headers[name] = Array.isArray(value)
                ? value.map((v) => v.toString()).join(',')
                : (value?.toString() ?? '');
            }
            count += 1;
            visit({
              topic,
              partition,
              offset: message.offset,
              timestamp: Number(message.timestamp),
              key: message.key,
              value: message.value,
              headers,
            });
          }
          if (offset >= end - 1 && left.delete(key) && left.size === 0) resolve();
          await Promise.resolve();
        },
      });
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      done,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`scanTopics: ${[...left].join(', ')} not read to the end`)),
          timeoutMs,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    return count;
  } finally {
    await consumer.disconnect();
  }
}
