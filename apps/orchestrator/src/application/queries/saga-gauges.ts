import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { counterMetric, gaugeMetric } from '@payments/observability';
import type { Counter, Gauge } from 'prom-client';
import type { OperationTimer } from '../../domain/gateway-operation';
import type { FlowGauge, GaugeValue, Query } from '../../flows/flow-module';
import { FLOW_MODULES } from '../../flows/registered-flows';
import { Database } from '../../persistence/database';
import { Clock } from '../../runtime/clock';
import { UNKNOWN_SINCE } from './admin-query.service';

export type { Query } from '../../flows/flow-module';

/**
 * Business gauges read from PostgreSQL when /metrics is scraped: unknown outcomes (how many, the
 * oldest's age, every flow), and the gauges each flow module offers (two-step payouts awaiting
 * approval, schedule charges due and failed). One cheap
 * query each, the readings shared for SAGA_GAUGE_CACHE_MS so a scrape storm (or several
 * Prometheus servers) makes at most one read per interval. Every orchestrator replica reports
 * the same database: aggregate with `max`, not `sum`.
 */
export const SAGA_GAUGE = {
  unknownOutcomes: 'orchestrator_unknown_outcomes',
  oldestUnknownSeconds: 'orchestrator_unknown_outcome_oldest_seconds',
  readFailures: 'orchestrator_saga_gauge_read_failures_total',
} as const;

/** How long one reading answers scrapes. */
export const SAGA_GAUGE_CACHE_MS = 5_000;

/** The gauges the flow modules offer. */
export const FLOW_GAUGES: readonly FlowGauge[] = FLOW_MODULES.flatMap((m) => m.gauges ?? []);

const STATUS_POLL: OperationTimer['kind'] = 'status-poll';

export interface SagaGaugeReadings {
  /** Operations in flight whose outcome is unknown. */
  readonly unknownOutcomes: number;
  /** Age of the oldest of them, in seconds (0 when none). */
  readonly oldestUnknownSeconds: number;
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
} as const;

/** One reading of every gauge; `now` is the orchestrator's clock (the one timers are due by). */
export async function readSagaGauges(
  query: Query,
  now: Date,
  gauges: readonly FlowGauge[] = FLOW_GAUGES,
): Promise<SagaGaugeReadings> {
  const [unknown] = await query<{ n: number; oldest: Date | null }>(SAGA_GAUGE_SQL.unknown, [
    STATUS_POLL,
  ]);
  const flows: Record<string, readonly GaugeValue[]> = {};
  for (const gauge of gauges) flows[gauge.name] = await gauge.read(query, now);
  const oldest = unknown?.oldest ?? null;
  return {
    unknownOutcomes: unknown?.n ?? 0,
    oldestUnknownSeconds:
      oldest === null ? 0 : Math.max(0, (now.getTime() - oldest.getTime()) / 1000),
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
