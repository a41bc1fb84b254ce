import {
  type EventOf,
  type EventType,
  EVENT_SCHEMAS_BY_TYPE,
  isEventType,
  type OutcomeEvent,
  sagaIdOf,
} from './catalogue';
import { fromKafkaHeaders } from '@payments/contracts';
import { EventSchemaMismatchError } from './errors';

/** Where an event came from, with its CloudEvents attributes. */
export interface EventMeta {
  readonly ceId: string;
  readonly ceType: string;
  readonly source: string;
  readonly subject: string;
  readonly time: string;
  readonly traceparent?: string;
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

/** Record headers as kafkajs hands them to a consumer. */
export type KafkaHeaders = Parameters<typeof fromKafkaHeaders>[0];

export interface RawRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly value: Buffer | string | null;
  readonly headers: KafkaHeaders;
}

export type Decoded = { readonly event: OutcomeEvent; readonly meta: EventMeta };

/** Reads one record of `payments.events.v1`, or says exactly why it cannot. */
export function decodeEvent(record: RawRecord): Decoded {
  const where = { topic: record.topic, partition: record.partition, offset: record.offset };
  const headers = fromKafkaHeaders(record.headers);
  if (!headers.ok) throw new EventSchemaMismatchError('BAD_HEADERS', [headers.reason], where);
  const at = { ...where, ceType: headers.envelope.type };
  let body: unknown;
  try {
    body = JSON.parse(record.value === null ? '' : record.value.toString());
  } catch {
    throw new EventSchemaMismatchError('MALFORMED', ['the value is not JSON'], at);
  }
  const type = (body as { type?: unknown } | null)?.type;
  if (!isEventType(type)) {
    throw new EventSchemaMismatchError('UNKNOWN_TYPE', [`type ${JSON.stringify(type)}`], at);
  }
  const parsed = EVENT_SCHEMAS_BY_TYPE[type].safeParse(body);
  if (!parsed.success) {
    throw new EventSchemaMismatchError(
      'SCHEMA_INVALID',
      parsed.error.issues.map((i) => `${i.path.join('.') || '$'}: ${i.message}`),
      at,
    );
  }
  const e = headers.envelope;
  return {
    event: parsed.data as OutcomeEvent,
    meta: {
      ceId: e.id,
      ceType: e.type,
      source: e.source,
      subject: e.subject,
      time: e.time,
      ...(e.traceparent === undefined ? {} : { traceparent: e.traceparent }),
      ...where,
    },
  };
}

/** Where the consumer remembers the ce_ids it has handled. Make it durable for exactly-once effects. */
export interface SeenStore {
  has(ceId: string): boolean | Promise<boolean>;
  add(ceId: string): void | Promise<void>;
}

/** The default SeenStore: the last `capacity` ids in memory (lost on restart). */
export class MemorySeenStore implements SeenStore {
  private readonly ids = new Set<string>();
  constructor(private readonly capacity = 100_000) {}
  has(ceId: string): boolean {
    return this.ids.has(ceId);
  }
  add(ceId: string): void {
    this.ids.add(ceId);
    if (this.ids.size > this.capacity) {
      const oldest = this.ids.values().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
  }
}

export type GateVerdict = 'deliver' | 'duplicate' | 'stale';

/**
 * Delivery is at least once: the same event may come again (a relay retry, a rebalance). The gate
 * lets each event through once — by ce_id — and never lets a saga go backwards: an event whose
 * version is not above the last one delivered for its saga is stale. Versions count 1, 2, 3 … per
 * saga; version 0 (a command refused before any saga existed) is judged by ce_id alone. A gap
 * (the consumer started mid-stream) is let through: records of one saga share a partition, so
 * they arrive in order and nothing is held back.
 */
export class EventGate {
  private readonly lastVersion = new Map<string, number>();
  constructor(private readonly seen: SeenStore = new MemorySeenStore()) {}

  async judge(event: OutcomeEvent, meta: EventMeta): Promise<GateVerdict> {
    if (await this.seen.has(meta.ceId)) return 'duplicate';
    const sagaId = sagaIdOf(event) ?? meta.subject;
    const version = (event as { version?: number }).version ?? 0;
    const last = this.lastVersion.get(sagaId);
    if (version > 0 && last !== undefined && version <= last) return 'stale';
    return 'deliver';
  }

  /** After the handler succeeded. */
  async delivered(event: OutcomeEvent, meta: EventMeta): Promise<void> {
    await this.seen.add(meta.ceId);
    const sagaId = sagaIdOf(event) ?? meta.subject;
    const version = (event as { version?: number }).version ?? 0;
    if (version > 0)
      this.lastVersion.set(sagaId, Math.max(version, this.lastVersion.get(sagaId) ?? 0));
  }
}

export type EventHandlers = {
  readonly [T in EventType]?: (event: EventOf<T>, meta: EventMeta) => unknown;
};
