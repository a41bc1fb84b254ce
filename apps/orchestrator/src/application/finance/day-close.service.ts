import { Inject, Injectable } from '@nestjs/common';
import {
  CE_SOURCES,
  ceType,
  type DayClosedEvent,
  type DayClosedTotal,
  TOPICS,
  toKafkaHeaders,
} from '@payments/contracts';
import type { EntityManager } from 'typeorm';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../../config';
import { derivedUuid } from '../../domain';
import { dayBounds, dayOf, previousDay, timeZoneOf } from '../../domain/journal';
import { Database } from '../../persistence/database';
import { Clock } from '../../runtime/clock';
import { OutboxWriter } from '../../runtime/outbox/outbox.writer';

/** A merchant's day that is not over yet (in its zone) cannot be closed. */
export class DayNotOverError extends Error {
  constructor(endpointId: string, day: string, zone: string) {
    super(`the day ${day} of endpoint ${endpointId} (${zone}) is not over`);
    this.name = 'DayNotOverError';
  }
}

interface DayCloseRow {
  endpoint_id: string;
  day: string;
  close_id: string;
  time_zone: string;
  from_at: Date;
  to_at: Date;
  totals: DayClosedTotal[];
  count: number;
  last_seq: string;
  closed_at: Date;
  closed_by: string;
}

export interface DayClose {
  readonly event: DayClosedEvent;
  readonly closedBy: string;
  /** False: the day was closed before (its event is the one published then). */
  readonly fresh: boolean;
}

/**
 * Closes a merchant's day (issue #35 item 2): the count and sum of the day's money events per type
 * and currency (`merchant_money_events`, in the merchant's time zone) and the highest
 * `merchantSeq` up to the day's end, stored in `day_closes` and published as `day-closed` on the
 * events topic (through the outbox, in the same transaction). A day closes once: a second close
 * (another replica, an operator) returns the stored one and publishes nothing.
 */
@Injectable()
export class DayCloseService {
  constructor(
    private readonly db: Database,
    private readonly outbox: OutboxWriter,
    private readonly clock: Clock,
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
  ) {}

  zoneOf(endpointId: string): string {
    return timeZoneOf(this.config.finance.merchantTimeZones, endpointId);
  }

  async close(endpointId: string, day: string, by: string): Promise<DayClose> {
    const zone = this.zoneOf(endpointId);
    const { from, to } = dayBounds(day, zone);
    const now = this.clock.now();
    if (to.getTime() > now.getTime()) throw new DayNotOverError(endpointId, day, zone);
    return this.db.transaction(async (tx) => {
      const before = await this.stored(tx, endpointId, day);
      if (before !== undefined) return { ...before, fresh: false };
      const totals = await tx.query<
        Array<{ event_type: string; currency: string; count: number; sum: string }>
      >(
        `SELECT event_type, currency, count(*)::int AS count, sum(minor)::text AS sum
           FROM merchant_money_events
          WHERE endpoint_id = $1 AND occurred_at >= $2 AND occurred_at < $3
          GROUP BY event_type, currency ORDER BY event_type, currency`,
        [endpointId, from, to],
      );
      const [last] = await tx.query<Array<{ seq: string }>>(
        `SELECT COALESCE(max(merchant_seq), 0)::text AS seq FROM merchant_money_events
          WHERE endpoint_id = $1 AND occurred_at < $2`,
        [endpointId, to],
      );
      const event: DayClosedEvent = {
        type: 'day-closed',
        closeId: derivedUuid(`day-close:${endpointId}:${day}`),
        merchant: { endpointId },
        day,
        timeZone: zone,
        from: from.toISOString(),
        to: to.toISOString(),
        totals: totals.map((t) => ({
          eventType: t.event_type,
          currency: t.currency,
          count: t.count,
          sumMinor: t.sum,
        })),
        count: totals.reduce((n, t) => n + t.count, 0),
        lastMerchantSeq: Number(last?.seq ?? '0'),
        occurredAt: now.toISOString(),
      };
      const inserted = await tx.query<unknown[]>(
        `INSERT INTO day_closes (endpoint_id, day, close_id, time_zone, from_at, to_at, totals,
                count, last_seq, closed_at, closed_by)
         VALUES ($1, $2::date, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11)
         ON CONFLICT DO NOTHING RETURNING 1`,
        [
          endpointId,
          day,
          event.closeId,
          zone,
          from,
          to,
          JSON.stringify(event.totals),
          event.count,
          event.lastMerchantSeq,
          now,
          by,
        ],
      );
      if (inserted.length === 0) {
        const other = await this.stored(tx, endpointId, day);
        if (other !== undefined) return { ...other, fresh: false };
      }
      await this.outbox.enqueue(tx, [
        {
          id: event.closeId,
          topic: TOPICS.events,
          key: endpointId,
          headers: toKafkaHeaders({
            id: event.closeId,
            type: ceType.event(event.type),
            source: CE_SOURCES.orchestrator,
            subject: endpointId,
            time: event.occurredAt,
          }),
          payload: event,
          aggregateId: `day-close:${endpointId}`,
        },
      ]);
      return { event, closedBy: by, fresh: true };
    });
  }

  /**
   * The scheduled closes: for every merchant with money events, its last day that ended at least
   * the grace ago, when it is not closed yet.
   */
  async closeDueDays(): Promise<DayClose[]> {
    const graceMs = this.config.finance.dayCloseGraceSeconds * 1000;
    const now = this.clock.now();
    const endpoints = await this.db.read((db) =>
      db.query<Array<{ endpoint_id: string }>>(
        'SELECT endpoint_id FROM merchant_sequences ORDER BY endpoint_id',
      ),
    );
    const closed: DayClose[] = [];
    for (const { endpoint_id: endpointId } of endpoints) {
      const zone = this.zoneOf(endpointId);
      const day = previousDay(dayOf(new Date(now.getTime() - graceMs), zone));
      const done = await this.db.read((db) => this.stored(db, endpointId, day));
      if (done === undefined) closed.push(await this.close(endpointId, day, 'scheduler'));
    }
    return closed.filter((c) => c.fresh);
  }

  /** The closes of a day (every merchant, or one). */
  async ofDay(day: string, endpointId?: string): Promise<DayClose[]> {
    const rows = await this.db.read((db) =>
      db.query<DayCloseRow[]>(
        `SELECT endpoint_id, to_char(day, 'YYYY-MM-DD') AS day, close_id, time_zone, from_at, to_at,
                totals, count, last_seq::text AS last_seq, closed_at, closed_by
           FROM day_closes WHERE day = $1::date AND ($2::text IS NULL OR endpoint_id = $2)
          ORDER BY endpoint_id`,
        [day, endpointId ?? null],
      ),
    );
    return rows.map((r) => ({ ...fromRow(r), fresh: false }));
  }

  /** Every merchant endpoint that has had a money event. */
  async endpoints(): Promise<string[]> {
    const rows = await this.db.read((db) =>
      db.query<Array<{ endpoint_id: string }>>(
        'SELECT endpoint_id FROM merchant_sequences ORDER BY endpoint_id',
      ),
    );
    return rows.map((r) => r.endpoint_id);
  }

  private async stored(
    db: EntityManager,
    endpointId: string,
    day: string,
  ): Promise<Omit<DayClose, 'fresh'> | undefined> {
    const [row] = await db.query<DayCloseRow[]>(
      `SELECT endpoint_id, to_char(day, 'YYYY-MM-DD') AS day, close_id, time_zone, from_at, to_at,
              totals, count, last_seq::text AS last_seq, closed_at, closed_by
         FROM day_closes WHERE endpoint_id = $1 AND day = $2::date`,
      [endpointId, day],
    );
    return row === undefined ? undefined : fromRow(row);
  }
}

function fromRow(r: DayCloseRow): Omit<DayClose, 'fresh'> {
  return {
    closedBy: r.closed_by,
    event: {
      type: 'day-closed',
      closeId: r.close_id,
      merchant: { endpointId: r.endpoint_id },
      day: r.day,
      timeZone: r.time_zone,
      from: r.from_at.toISOString(),
      to: r.to_at.toISOString(),
      totals: r.totals,
      count: r.count,
      lastMerchantSeq: Number(r.last_seq),
      occurredAt: r.closed_at.toISOString(),
    },
  };
}
