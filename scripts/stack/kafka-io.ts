import { randomUUID } from 'node:crypto';
import { Consumer, Kafka, logLevel, Partitioners } from 'kafkajs';
import { IdempotentSender } from '@payments/kafka';
import { onStoppedForGood } from './kafka-crash';
import {
  type AnyEvent,
  CARD_PAYMENT_FAMILY,
  CONTROL_EVENT_SCHEMAS,
  DayClosedEvent,
  FLOW_FAMILIES,
  type FlowFamily,
  type PayerAction,
  PaymentCommand,
  PaymentEvent,
  SCHEDULE_FAMILY,
  ScheduleEvent,
  PayoutBudgetEvent,
  PayoutEvent,
  TOPICS,
  fromKafkaHeaders,
  sagaIdOf,
  PanEligibilityEvent,
  TransferEvent,
} from '@payments/contracts';

/**
 * What an internal service and a finance consumer do with the topics: produce commands
 * (key = payment id) and read the authoritative event stream. Used by the demo, the e2e tests and
 * the benchmark; nothing here is part of the apps.
 */

/** A card payment's final outcome types (a preauth's `authorized` is not final). */
export const CARD_PAYMENT_FINAL: readonly string[] = ['approved', 'declined', 'failed'];
export interface ReceivedEvent {
  readonly event: PaymentEvent;
  readonly ceId: string;
  readonly ceType: string;
  readonly partition: number;
  readonly offset: string;
  readonly receivedAt: number;
  /** The event's W3C traceparent header (its trace: tracing e2e). */
  readonly traceparent?: string;
}

/** A recurring schedule's event, keyed by its schedule id. */
export interface ReceivedScheduleEvent {
  readonly event: ScheduleEvent;
  readonly ceId: string;
  readonly receivedAt: number;
}

/**
 * An event of any other family (payouts, payout budgets, transfers, PAN-eligibility, and any
 * family added to FLOW_FAMILIES) as received, keyed by its saga id.
 */
export interface ReceivedPayoutEvent extends Omit<ReceivedEvent, 'event'> {
  readonly event: PayoutEvent | PayoutBudgetEvent | TransferEvent | PanEligibilityEvent;
}

/** The saga an event belongs to: its family's saga id field (contracts' `sagaIdOf`). */
export function eventSagaId(event: PaymentEvent | ReceivedPayoutEvent['event']): string {
  return sagaIdOf(event) ?? '';
}

/** An event of `payments.events.v1` as the contracts define it, or why it is not one. */
export type StreamEvent =
  | {
      readonly ok: true;
      /** The name of its family in FLOW_FAMILIES. */
      readonly family: string;
      readonly sagaId: string;
      readonly event: AnyEvent | ScheduleEvent | DayClosedEvent;
    }
  | { readonly ok: false; readonly error: string };

/** The `family` parseStreamEvent names for the control events (`day-closed`). */
export const CONTROL_EVENTS = 'control';

/**
 * Parses an event with the schema of its type in the family that defines it (FLOW_FAMILIES: no
 * list of its own here) and names its saga with the contracts' `sagaIdOf`. The one exception the
 * contracts document: a schedule's `command-rejected` is the card payments' type addressed by
 * `scheduleId` (schedules.ts `ScheduleEvent`).
 */
export function parseStreamEvent(value: unknown): StreamEvent {
  const type =
    typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  if (typeof type !== 'string') return { ok: false, error: 'no event type' };
  // The control events of no family (day-close.ts): `family` is CONTROL_EVENTS, no saga.
  if (Object.hasOwn(CONTROL_EVENT_SCHEMAS, type)) {
    const parsed = DayClosedEvent.safeParse(value);
    return parsed.success
      ? { ok: true, family: CONTROL_EVENTS, event: parsed.data, sagaId: '' }
      : { ok: false, error: `${type}: ${parsed.error.issues.map((i) => i.message).join('; ')}` };
  }
  for (const family of FLOW_FAMILIES as readonly FlowFamily[]) {
    if (!Object.hasOwn(family.events, type)) continue;
    const parsed = family.events[type].safeParse(value);
    if (parsed.success) {
      const event = parsed.data as AnyEvent;
      return { ok: true, family: family.name, event, sagaId: sagaIdOf(event) ?? '' };
    }
    const schedule = ScheduleEvent.safeParse(value);
    if (schedule.success)
      return {
        ok: true,
        family: SCHEDULE_FAMILY.name,
        event: schedule.data,
        sagaId: schedule.data.scheduleId,
      };
    return {
      ok: false,
      error: `${type} (${family.name}): ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    };
  }
  return { ok: false, error: `${type}: no family in FLOW_FAMILIES defines it` };
}

/** Sends commands the way the services send (IdempotentSender: an acknowledgement means "in the log"). */
export class CommandProducer {
  private readonly sender: IdempotentSender;

  constructor(kafka: Kafka) {
    this.sender = new IdempotentSender(() =>
      kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        createPartitioner: Partitioners.DefaultPartitioner,
      }),
    );
  }

  connect(): Promise<void> {
    return this.sender.connect();
  }

  /** Sends commands as an internal service would: JSON value, key = payment id. */
  async send(commands: readonly PaymentCommand[] | readonly unknown[], raw = false): Promise<void> {
    await this.sender.send(
      TOPICS.commands,
      commands.map((command) => {
        const c = command as {
          paymentId?: string;
          scheduleId?: string;
          payoutId?: string;
          transferId?: string;
          checkId?: string;
          commandId?: string;
        };
        return {
          key:
            c.paymentId ?? c.scheduleId ?? c.payoutId ?? c.transferId ?? c.checkId ?? randomUUID(),
          value: raw && typeof command === 'string' ? command : JSON.stringify(command),
          headers: { 'content-type': 'application/json' },
        };
      }),
      30_000,
    );
  }

  disconnect(): Promise<void> {
    return this.sender.close();
  }
}

/** Reads payments.events.v1 from the beginning and indexes what arrives by payment id. */
/** Records once each by ce_id (delivery is at least once), in arrival order. */
function distinct<E>(records: readonly { readonly ceId: string; readonly event: E }[]): E[] {
  const seen = new Set<string>();
  return records.filter((r) => !seen.has(r.ceId) && seen.add(r.ceId)).map((r) => r.event);
}

export class EventCollector {
  private consumer: Consumer;
  private readonly groupId = `observer-${randomUUID()}`;
  /** (partition, offset) of every message taken: a restarted consumer may be given some again. */
  private readonly taken = new Set<string>();
  private stopping = false;
  /** Restarts after a crash kafkajs does not restart from. */
  restarts = 0;
  private readonly byPayment = new Map<string, ReceivedEvent[]>();
  private readonly bySchedule = new Map<string, ReceivedScheduleEvent[]>();
  private readonly byPayout = new Map<string, ReceivedPayoutEvent[]>();
  private readonly listeners = new Set<() => void>();
  readonly all: ReceivedEvent[] = [];
  readonly invalid: { offset: string; error: string }[] = [];
  /** The `day-closed` events received (control totals; one per merchant and day, maybe twice). */
  readonly dayClosed: DayClosedEvent[] = [];

  constructor(
    private readonly kafka: Kafka,
    /** Every payment, payout, payout-budget, transfer and PAN-eligibility event as it arrives. */
    private readonly onEvent?: (received: ReceivedEvent | ReceivedPayoutEvent) => void,
  ) {
    this.consumer = this.newConsumer();
  }

  private newConsumer(): Consumer {
    return this.kafka.consumer({ groupId: this.groupId, maxWaitTimeInMs: 100 });
  }

  async start(): Promise<void> {
    await connectAndSubscribe(this.consumer, [TOPICS.events]);
    this.watchCrashes(this.consumer);
    await this.consumer.run({
      eachMessage: async ({ message, partition }) => {
        const key = `${partition}:${message.offset}`;
        if (this.taken.has(key)) return;
        this.taken.add(key);
        const headers = fromKafkaHeaders(message.headers ?? {});
        if (!headers.ok) {
          this.invalid.push({ offset: message.offset, error: `headers: ${headers.reason}` });
          return;
        }
        let value: unknown;
        try {
          value = JSON.parse(message.value?.toString('utf8') ?? 'null');
        } catch {
          this.invalid.push({ offset: message.offset, error: 'not valid JSON' });
          return;
        }
        const parsed = parseStreamEvent(value);
        if (!parsed.ok) {
          this.invalid.push({ offset: message.offset, error: parsed.error });
          return;
        }
        if (parsed.family === CONTROL_EVENTS) {
          this.dayClosed.push(parsed.event as DayClosedEvent);
          for (const listener of this.listeners) listener();
          return;
        }
        if (parsed.family === SCHEDULE_FAMILY.name) {
          const list = this.bySchedule.get(parsed.sagaId) ?? [];
          list.push({
            event: parsed.event as ScheduleEvent,
            ceId: headers.envelope.id,
            receivedAt: Date.now(),
          });
          this.bySchedule.set(parsed.sagaId, list);
          for (const listener of this.listeners) listener();
          return;
        }
        if (parsed.family !== CARD_PAYMENT_FAMILY.name) {
          const id = parsed.sagaId;
          const list = this.byPayout.get(id) ?? [];
          const received: ReceivedPayoutEvent = {
            event: parsed.event as ReceivedPayoutEvent['event'],
            ceId: headers.envelope.id,
            ceType: headers.envelope.type,
            partition,
            offset: message.offset,
            receivedAt: Date.now(),
          };
          list.push(received);
          this.byPayout.set(id, list);
          this.onEvent?.(received);
          for (const listener of this.listeners) listener();
          return;
        }
        const event = parsed.event as PaymentEvent;
        const received: ReceivedEvent = {
          event,
          ceId: headers.envelope.id,
          ceType: headers.envelope.type,
          partition,
          offset: message.offset,
          receivedAt: Date.now(),
          ...(headers.envelope.traceparent === undefined
            ? {}
            : { traceparent: headers.envelope.traceparent }),
        };
        this.all.push(received);
        const list = this.byPayment.get(parsed.sagaId) ?? [];
        list.push(received);
        this.byPayment.set(parsed.sagaId, list);
        this.onEvent?.(received);
        for (const listener of this.listeners) listener();
        await Promise.resolve();
      },
    });
  }

  eventsOf(paymentId: string): ReceivedEvent[] {
    return [...(this.byPayment.get(paymentId) ?? [])];
  }

  /** A schedule's events, deduplicated by ce_id (delivery is at least once), in arrival order. */
  scheduleEventsOf(scheduleId: string): ScheduleEvent[] {
    return distinct(this.bySchedule.get(scheduleId) ?? []);
  }

  /** The payment's events once each (delivery is at least once: deduplicated by ce_id). */
  distinctEventsOf(paymentId: string): PaymentEvent[] {
    return distinct(this.eventsOf(paymentId));
  }

  /** The types of the payment's events, each event once, in arrival order. */
  typesOf(paymentId: string): string[] {
    return this.distinctEventsOf(paymentId).map((e) => e.type);
  }

  /** The payment's final outcome event (by default approved, declined or failed). */
  async finalOf(
    paymentId: string,
    timeoutMs = 90_000,
    types: readonly string[] = CARD_PAYMENT_FINAL,
  ): Promise<PaymentEvent> {
    return (await this.waitForType(paymentId, types, timeoutMs)).event;
  }

  /** Resolves with the first event of the schedule that matches, waiting up to timeoutMs. */
  waitForSchedule(
    scheduleId: string,
    predicate: (event: ScheduleEvent) => boolean,
    timeoutMs = 60_000,
  ): Promise<ScheduleEvent> {
    return this.waitUntil(
      () => this.scheduleEventsOf(scheduleId).find(predicate),
      () =>
        `${scheduleId}; seen [${this.scheduleEventsOf(scheduleId)
          .map((e) => `${e.version}:${e.type}`)
          .join(', ')}]`,
      timeoutMs,
    );
  }

  /** Resolves with the first event of the payment that matches, waiting up to timeoutMs. */
  waitFor(
    paymentId: string,
    predicate: (event: PaymentEvent) => boolean,
    timeoutMs = 60_000,
  ): Promise<ReceivedEvent> {
    return this.waitUntil(
      () => this.eventsOf(paymentId).find((r) => predicate(r.event)),
      () =>
        `${paymentId}; seen [${this.eventsOf(paymentId)
          .map((r) => `${r.event.version}:${r.event.type}`)
          .join(', ')}]`,
      timeoutMs,
    );
  }

  private async waitUntil<T>(
    find: () => T | undefined,
    describe: () => string,
    timeoutMs: number,
  ): Promise<T> {
    const found = find();
    if (found) return found;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`no matching event within ${timeoutMs} ms for ${describe()}`));
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

  /** A payout's (or a payout budget's, or a transfer's) events, in arrival order. */
  payoutEventsOf(id: string): ReceivedPayoutEvent[] {
    return [...(this.byPayout.get(id) ?? [])];
  }

  /** A payout's events once each (deduplicated by ce_id), in arrival order. */
  distinctPayoutEventsOf(payoutId: string): PayoutEvent[] {
    return distinct(this.payoutEventsOf(payoutId)) as PayoutEvent[];
  }

  /** Resolves with the payout's first event of one of `types`, waiting up to timeoutMs. */
  waitForPayout(
    id: string,
    types: readonly string[],
    timeoutMs = 60_000,
  ): Promise<ReceivedPayoutEvent> {
    const find = () => this.payoutEventsOf(id).find((r) => types.includes(r.event.type));
    const found = find();
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const check = () => {
        const hit = find();
        if (!hit) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve(hit);
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        const seen = this.payoutEventsOf(id).map((r) => `${r.event.version}:${r.event.type}`);
        reject(
          new Error(
            `no ${types.join('|')} for ${id} within ${timeoutMs} ms; seen [${seen.join(', ')}]`,
          ),
        );
      }, timeoutMs);
      this.listeners.add(check);
    });
  }

  waitForType(paymentId: string, types: readonly string[], timeoutMs?: number) {
    return this.waitFor(paymentId, (e) => types.includes(e.type), timeoutMs);
  }

  /** The payment's first `action-required` of this kind (what a front end acts on). */
  async firstAction<K extends PayerAction['kind']>(
    paymentId: string,
    kind: K,
    timeoutMs = 60_000,
  ): Promise<Extract<PayerAction, { kind: K }>> {
    const { event } = await this.waitFor(
      paymentId,
      (e) => e.type === 'action-required' && e.action.kind === kind,
      timeoutMs,
    );
    if (event.type !== 'action-required' || event.action.kind !== kind)
      throw new Error(`expected a ${kind} action, got ${JSON.stringify(event)}`);
    return event.action as Extract<PayerAction, { kind: K }>;
  }

  /** Stopped for good (onStoppedForGood): started again in its group, at its committed offsets. */
  private watchCrashes(consumer: Consumer): void {
    onStoppedForGood(consumer, () => {
      if (this.stopping || consumer !== this.consumer) return;
      this.restarts += 1;
      void (async () => {
        await consumer.disconnect().catch(() => undefined);
        if (this.stopping) return;
        this.consumer = this.newConsumer();
        await this.start();
      })().catch((error: unknown) => {
        this.invalid.push({ offset: '-', error: `observer restart failed: ${String(error)}` });
      });
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
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

/**
 * A topic the apps created moments ago on a fresh broker may still be electing its leader
 * ("This server is not the leader for that topic-partition", retriable): ask again for up to
 * 10 s instead of failing the caller's setup.
 */
async function offsetsSettled<T>(fetch: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await fetch();
    } catch (error) {
      const retriable = (error as { retriable?: boolean }).retriable === true;
      if (!retriable || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
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
      for (const p of await offsetsSettled(() => admin.fetchTopicOffsets(topic))) {
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
    await connectAndSubscribe(consumer, topics);
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

/**
 * Connects a reader and subscribes it from the beginning. On a starved machine the connection to
 * a broker that has just started can drop between the two ("Broker not connected" while fetching
 * the topics' metadata): that is retried, with a fresh connection, for up to a minute.
 */
async function connectAndSubscribe(consumer: Consumer, topics: readonly string[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [...topics], fromBeginning: true });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await consumer.disconnect().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
