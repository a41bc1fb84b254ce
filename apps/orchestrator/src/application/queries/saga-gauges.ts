import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { counterMetric, gaugeMetric } from '@payments/observability';
import type { Counter, Gauge } from 'prom-client';
import type { OperationTimer } from '../../domain/gateway-operation/gateway-operation';
import type { FlowGauge, GaugeValue, Query } from '../../flows/flow-module';
import { FLOW_MODULES } from '../../flows/registered-flows';
import { Database } from '../../persistence/database';
import { Clock } from '../../runtime/clock';
import { UNKNOWN_SINCE } from './admin-query.service';

export type { Query } from '../../flows/flow-module';

/**
 * Business gauges read from PostgreSQL when /metrics is scraped: unknown outcomes (how many, the
 * oldest's age, every flow), operations in flight per flow (how many, the oldest's age), and the gauges each flow module offers (two-step payouts awaiting
 * approval, schedule charges due and failed). One cheap
 * query each, the readings shared for SAGA_GAUGE_CACHE_MS so a scrape storm (or several
 * Prometheus servers) makes at most one read per interval. Every orchestrator replica reports
 * the same database: aggregate with `max`, not `sum`.
 */
export const SAGA_GAUGE = {
  unknownOutcomes: 'orchestrator_unknown_outcomes',
  oldestUnknownSeconds: 'orchestrator_unknown_outcome_oldest_seconds',
  inFlight: 'orchestrator_in_flight_operations',
  oldestInFlightSeconds: 'orchestrator_in_flight_oldest_seconds',
  readFailures: 'orchestrator_saga_gauge_read_failures_total',
} as const;

/** How long one reading answers scrapes. */
export const SAGA_GAUGE_CACHE_MS = 5_000;

/** The gauges the flow modules offer. */
export const FLOW_GAUGES: readonly FlowGauge[] = FLOW_MODULES.flatMap((m) => m.gauges ?? []);

/** The hosted flows: each has an in-flight series, 0 when nothing of it is in flight. */
export const FLOW_NAMES: readonly string[] = FLOW_MODULES.map((m) => m.name);

/**
 * When a saga's operation in flight was first requested, where the flows keep it: a payment's,
 * payout's or transfer's `inFlight`, a payment's card-reference request, a schedule's
 * registration (resends keep it: the age is the operation's, not the last attempt's).
 */
export const IN_FLIGHT_SINCE = `COALESCE(s.state->'inFlight'->>'requestedAt', s.state->'cardRefRequest'->>'requestedAt', s.state->'registration'->>'requestedAt')`;

const STATUS_POLL: OperationTimer['kind'] = 'status-poll';

export interface SagaGaugeReadings {
  /** Operations in flight whose outcome is unknown. */
  readonly unknownOutcomes: number;
  /** Age of the oldest of them, in seconds (0 when none). */
  readonly oldestUnknownSeconds: number;
  /**
   * Per hosted flow: operations in flight (polled until their outcome), and the age of the
   * oldest since it was requested, in seconds (0 when none).
   */
  readonly inFlight: Readonly<
    Record<string, { readonly count: number; readonly oldestSeconds: number }>
  >;
  /** Each flow gauge's values, by metric name. */
  readonly flows: Readonly<Record<string, readonly GaugeValue[]>>;
}

/**
 * The queries. Unknown outcomes read only sagas that have a status-poll timer: an operation in
 * flight is polled until it has its outcome (the poll timer is cancelled only then), and the
 * timers table holds live work alone, so the millions of settled sagas are never scanned.
 */
export const SAGA_GAUGE_SQL = {
  unknown: `SELECT count(*)::int AS n, min((${UNKNOWN_SINCE})::timestamptz) AS oldest
    FROM sagas s
   WHERE s.id IN (SELECT t.saga_id FROM timers t WHERE t.kind = $1)
     AND ${UNKNOWN_SINCE} IS NOT NULL`,
  inFlight: `SELECT s.flow, count(*)::int AS n, min((${IN_FLIGHT_SINCE})::timestamptz) AS oldest
    FROM sagas s
   WHERE s.id IN (SELECT t.saga_id FROM timers t WHERE t.kind = $1)
   GROUP BY s.flow`,
} as const;

/** Seconds from `since` to `now`, never negative; 0 when there is none. */
const ageSeconds = (since: Date | null | undefined, now: Date): number =>
  since === null || since === undefined ? 0 : Math.max(0, (now.getTime() - since.getTime()) / 1000);

/** One reading of every gauge; `now` is the orchestrator's clock (the one timers are due by). */
export async function readSagaGauges(
  query: Query,
  now: Date,
  gauges: readonly FlowGauge[] = FLOW_GAUGES,
  flowNames: readonly string[] = FLOW_NAMES,
): Promise<SagaGaugeReadings> {
  const [unknown] = await query<{ n: number; oldest: Date | null }>(SAGA_GAUGE_SQL.unknown, [
    STATUS_POLL,
  ]);
  const inFlightRows = await query<{ flow: string; n: number; oldest: Date | null }>(
    SAGA_GAUGE_SQL.inFlight,
    [STATUS_POLL],
  );
  const inFlight: Record<string, { count: number; oldestSeconds: number }> = {};
  for (const flow of flowNames) inFlight[flow] = { count: 0, oldestSeconds: 0 };
  for (const row of inFlightRows) {
    inFlight[row.flow] = { count: row.n, oldestSeconds: ageSeconds(row.oldest, now) };
  }
  const flows: Record<string, readonly GaugeValue[]> = {};
  for (const gauge of gauges) flows[gauge.name] = await gauge.read(query, now);
  return {
    unknownOutcomes: unknown?.n ?? 0,
    oldestUnknownSeconds: ageSeconds(unknown?.oldest, now),
    inFlight,
    flows,
  };
}

/**
 * `load` shared: every call while a load runs, and for `ttlMs` after it settled, gets the same
 * promise (every gauge of one scrape, a scrape storm); the next call after that loads again.
 */
export function sharedFor<T>(
  ttlMs: number,
  nowMs: () => number,
  load: () => Promise<T>,
): () => Promise<T> {
  let current: Promise<T> | undefined;
  let settledAt: number | undefined;
  return () => {
    if (current !== undefined && (settledAt === undefined || nowMs() - settledAt < ttlMs)) {
      return current;
    }
    const loading = load();
    current = loading;
    settledAt = undefined;
    const settle = () => {
      if (current === loading) settledAt = nowMs();
    };
    loading.then(settle, settle);
    return loading;
  };
}

export interface SagaGaugeMetrics {
  readonly unknownOutcomes: Gauge;
  readonly oldestUnknownSeconds: Gauge;
  readonly inFlight: Gauge<'flow'>;
  readonly oldestInFlightSeconds: Gauge<'flow'>;
  /** The flow modules' gauges, by metric name. */
  readonly flows: Readonly<Record<string, Gauge<string>>>;
  readonly readFailures: Counter;
}

/** The readers of the app instances in this process (tests run several); the newest answers. */
const readers: Array<() => Promise<SagaGaugeReadings | undefined>> = [];

async function latestReading(): Promise<SagaGaugeReadings | undefined> {
  const read = readers.at(-1);
  return read === undefined ? undefined : read();
}

/** A gauge set from the latest reading when scraped (left as it was when there is none). */
function readingGauge<L extends string>(
  name: string,
  help: string,
  labelNames: L[],
  set: (gauge: Gauge<L>, reading: SagaGaugeReadings) => void,
): Gauge<L> {
  return gaugeMetric<L>({
    name,
    help,
    labelNames,
    async collect() {
      const reading = await latestReading();
      if (reading !== undefined) set(this, reading);
    },
  });
}

/** The gauges (process-wide, get-or-create); their values come from the registered reader. */
export function sagaGaugeMetrics(gauges: readonly FlowGauge[] = FLOW_GAUGES): SagaGaugeMetrics {
  return {
    unknownOutcomes: readingGauge(
      SAGA_GAUGE.unknownOutcomes,
      'Operations in flight (any flow) whose outcome is unknown: polled until a status reply or a verified callback resolves them',
      [],
      (g, r) => g.set(r.unknownOutcomes),
    ),
    oldestUnknownSeconds: readingGauge(
      SAGA_GAUGE.oldestUnknownSeconds,
      'Age of the oldest unknown outcome, in seconds (0 when none)',
      [],
      (g, r) => g.set(r.oldestUnknownSeconds),
    ),
    inFlight: readingGauge(
      SAGA_GAUGE.inFlight,
      'Operations in flight per flow (requested, processing, waiting for the payer or unknown): polled until their outcome',
      ['flow'],
      (g, r) => {
        for (const [flow, { count }] of Object.entries(r.inFlight)) g.set({ flow }, count);
      },
    ),
    oldestInFlightSeconds: readingGauge(
      SAGA_GAUGE.oldestInFlightSeconds,
      'Age of the oldest operation in flight per flow, in seconds since it was requested (0 when none)',
      ['flow'],
      (g, r) => {
        for (const [flow, { oldestSeconds }] of Object.entries(r.inFlight)) {
          g.set({ flow }, oldestSeconds);
        }
      },
    ),
    flows: Object.fromEntries(
      gauges.map((gauge) => [
        gauge.name,
        readingGauge<string>(gauge.name, gauge.help, [...(gauge.labelNames ?? [])], (g, r) => {
          for (const { labels, value } of r.flows[gauge.name] ?? []) {
            if (labels === undefined) g.set(value);
            else g.set(labels, value);
          }
        }),
      ]),
    ),
    readFailures: counterMetric({
      name: SAGA_GAUGE.readFailures,
      help: 'Failed reads of the saga gauges (the gauges then keep their last values)',
    }),
  };
}

/**
 * Registers this app instance's reader for the gauges while the app runs. A failed read is
 * logged and counted; the gauges keep their last values and /metrics still answers.
 */
@Injectable()
export class SagaGauges implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(SagaGauges.name);
  private readonly metrics = sagaGaugeMetrics();
  private readonly read = sharedFor(
    SAGA_GAUGE_CACHE_MS,
    () => this.clock.now().getTime(),
    () => this.load(),
  );

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    readers.push(this.read);
  }

  onModuleDestroy(): void {
    const at = readers.indexOf(this.read);
    if (at >= 0) readers.splice(at, 1);
  }

  private async load(): Promise<SagaGaugeReadings | undefined> {
    try {
      return await this.db.read((db) =>
        readSagaGauges((sql, params) => db.query(sql, params), this.clock.now()),
      );
    } catch (error) {
      this.metrics.readFailures.inc();
      this.logger.warn(`saga gauges: read failed, keeping the last values: ${String(error)}`);
      return undefined;
    }
  }
}
