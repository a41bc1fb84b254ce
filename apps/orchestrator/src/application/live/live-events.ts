import { type LiveEvent, type LiveMinute, type LiveMinutes, sagaIdOf } from '@payments/contracts';
import { FLOW_MODULES } from '../../flows/registered-flows';
import { moneyMoved } from '../../runtime/outcome-metrics';

/** The event types that say money moved, as the flows' modules declare them. */
const MONEY_EVENTS: readonly string[] = [...new Set(FLOW_MODULES.flatMap((m) => m.moneyEvents))];

function text(value: unknown, max: number): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= max ? value : undefined;
}

function moneyOf(value: unknown): LiveEvent['amount'] {
  if (typeof value !== 'object' || value === null) return null;
  const { minor, currency } = value as { minor?: unknown; currency?: unknown };
  if (typeof minor !== 'number' || !Number.isSafeInteger(minor) || minor < 0) return null;
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) return null;
  return { minor, currency };
}

/**
 * The live projection of one record of the event topic, or undefined for a record that is not an
 * event of a saga. Only the listed fields are copied (a whitelist): whatever else an event carries
 * (a card summary, a gateway order id) never reaches a stream.
 */
export function liveEventOf(
  partition: number,
  offset: string,
  value: Buffer | null,
): LiveEvent | undefined {
  if (value === null) return undefined;
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(value.toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    body = parsed as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const type = text(body.type, 64);
  const sagaId = text(sagaIdOf(body), 64);
  const occurredAt = text(body.occurredAt, 40);
  const version = body.version;
  if (type === undefined || sagaId === undefined || occurredAt === undefined) return undefined;
  if (typeof version !== 'number' || !Number.isSafeInteger(version)) return undefined;
  const amount = moneyOf(body.amount);
  const moved =
    moneyMoved(
      { type, version, commandId: '', occurredAt, ...(amount ? { amount } : {}) },
      MONEY_EVENTS,
    ) !== undefined;
  return {
    id: `${partition}-${offset}`,
    type,
    sagaId,
    version,
    occurredAt,
    amount,
    moneyMoved: moved,
  };
}

const MINUTE_MS = 60_000;

/**
 * Events and money moved per minute of the events' own time, the last `keep` minutes. Each replica
 * reads every event (its own consumer group), so every replica counts the same once it has run a
 * full window.
 */
export class MinuteCounts {
  private readonly buckets = new Map<number, { events: number; moved: Map<string, number> }>();

  constructor(
    private readonly since: Date,
    private readonly keep = 60,
  ) {}

  record(event: LiveEvent): void {
    const at = Date.parse(event.occurredAt);
    if (Number.isNaN(at)) return;
    const minute = Math.floor(at / MINUTE_MS) * MINUTE_MS;
    let bucket = this.buckets.get(minute);
    if (bucket === undefined) {
      bucket = { events: 0, moved: new Map() };
      this.buckets.set(minute, bucket);
      this.prune();
    }
    bucket.events++;
    if (event.moneyMoved && event.amount !== null) {
      const { currency, minor } = event.amount;
      bucket.moved.set(currency, (bucket.moved.get(currency) ?? 0) + minor);
    }
  }

  /** The `minutes` whole minutes up to and including the one of `now`, oldest first, zeros kept. */
  window(now: Date, minutes: number): LiveMinutes {
    const last = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS;
    const out: LiveMinute[] = [];
    for (let i = Math.min(minutes, this.keep) - 1; i >= 0; i--) {
      const minute = last - i * MINUTE_MS;
      const bucket = this.buckets.get(minute);
      out.push({
        minute: new Date(minute).toISOString(),
        events: bucket?.events ?? 0,
        moved: Object.fromEntries([...(bucket?.moved ?? new Map<string, number>())].sort()),
      });
    }
    return { since: this.since.toISOString(), minutes: out };
  }

  private prune(): void {
    const newest = Math.max(...this.buckets.keys());
    for (const minute of this.buckets.keys()) {
      if (minute <= newest - this.keep * MINUTE_MS) this.buckets.delete(minute);
    }
  }
}
