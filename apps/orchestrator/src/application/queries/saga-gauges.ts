import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { counterMetric, gaugeMetric } from '@payments/observability';
import type { Counter, Gauge } from 'prom-client';
import type { OperationTimer } from '../../domain/gateway-operation';
import type { PayoutStatus } from '../../flows/payout/domain/model';
import { PAYOUT_FLOW } from '../../flows/payout/payout.flow';
import { CHARGE_TIMER, type ScheduleStatus } from '../../flows/recurring-schedule/domain/state';
import { RECURRING_SCHEDULE_FLOW } from '../../flows/recurring-schedule/recurring-schedule.flow';
import { Database } from '../../persistence/database';
import { Clock } from '../../runtime/clock';
import { UNKNOWN_SINCE } from './admin-query.service';

/**
 * Business gauges read from PostgreSQL when /metrics is scraped: unknown outcomes (how many, the
 * oldest's age), two-step payouts awaiting approval, schedule charges due and failed. One cheap
 * query each, the readings shared for SAGA_GAUGE_CACHE_MS so a scrape storm (or several
 * Prometheus servers) makes at most one read per interval. Every orchestrator replica reports
 * the same database: aggregate with `max`, not `sum`.
 */
export const SAGA_GAUGE = {
  unknownOutcomes: 'orchestrator_unknown_outcomes',
  oldestUnknownSeconds: 'orchestrator_unknown_outcome_oldest_seconds',
  payoutsAwaitingApproval: 'orchestrator_payouts_awaiting_approval',
  scheduleChargesDue: 'orchestrator_schedule_charges_due',
  scheduleChargesFailed: 'orchestrator_schedule_charges_failed',
  readFailures: 'orchestrator_saga_gauge_read_failures_total',
} as const;

/** How long one reading answers scrapes. */
export const SAGA_GAUGE_CACHE_MS = 5_000;

type FailedScheduleStatus = Extract<ScheduleStatus, 'past-due' | 'suspended'>;
const FAILED_SCHEDULE_STATUSES: readonly FailedScheduleStatus[] = ['past-due', 'suspended'];
const AWAITING_APPROVAL: PayoutStatus = 'registered';
const STATUS_POLL: OperationTimer['kind'] = 'status-poll';

export interface SagaGaugeReadings {
  /** Operations in flight whose outcome is unknown. */
  readonly unknownOutcomes: number;
  /** Age of the oldest of them, in seconds (0 when none). */
  readonly oldestUnknownSeconds: number;
  /** Two-step payouts the gateway registered, waiting for approve or reject. */
  readonly payoutsAwaitingApproval: number;
  /** Schedule charge timers due and not fired yet (the timer worker is behind or failing). */
  readonly scheduleChargesDue: number;
  /** Schedules whose cycle charge failed: past-due (dunning retries ahead) or suspended. */
  readonly scheduleChargesFailed: Readonly<Record<FailedScheduleStatus, number>>;
}

/** A read-only SQL runner (an EntityManager's `query`). */
export type Query = <Row>(sql: string, params: unknown[]) => Promise<Row[]>;

/**
 * The queries. Unknown outcomes read only sagas that have a status-poll timer: an operation in
 * flight is polled until it has its outcome (the poll timer is cancelled only then), and the
 * timers table holds live work alone, so the millions of settled sagas are never scanned. The
 * other three use the `(flow, status)` index or the small timers table.
 */
export const SAGA_GAUGE_SQL = {
  unknown: `SELECT count(*)::int AS n, min((${UNKNOWN_SINCE})::timestamptz) AS oldest
    FROM sagas s
   WHERE s.id IN (SELECT t.saga_id FROM timers t WHERE t.kind = $1)
     AND ${UNKNOWN_SINCE} IS NOT NULL`,
  awaitingApproval: `SELECT count(*)::int AS n FROM sagas WHERE flow = $1 AND status = $2`,
  chargesDue: `SELECT count(*)::int AS n FROM timers WHERE flow = $1 AND kind = $2 AND due_at <= $3`,
  chargesFailed: `SELECT status, count(*)::int AS n FROM sagas
   WHERE flow = $1 AND status = ANY($2) GROUP BY status`,
} as const;

/** One reading of every gauge; `now` is the orchestrator's clock (the one timers are due by). */
export async function readSagaGauges(query: Query, now: Date): Promise<SagaGaugeReadings> {
  const [unknown] = await query<{ n: number; oldest: Date | null }>(SAGA_GAUGE_SQL.unknown, [
    STATUS_POLL,
  ]);
  const [awaiting] = await query<{ n: number }>(SAGA_GAUGE_SQL.awaitingApproval, [
    PAYOUT_FLOW,
    AWAITING_APPROVAL,
  ]);
  const [due] = await query<{ n: number }>(SAGA_GAUGE_SQL.chargesDue, [
    RECURRING_SCHEDULE_FLOW,
    CHARGE_TIMER,
    now,
  ]);
  const failed = await query<{ status: string; n: number }>(SAGA_GAUGE_SQL.chargesFailed, [
    RECURRING_SCHEDULE_FLOW,
    FAILED_SCHEDULE_STATUSES,
  ]);
  const oldest = unknown?.oldest ?? null;
  const failedCount = (status: FailedScheduleStatus) =>
    failed.find((row) => row.status === status)?.n ?? 0;
  return {
    unknownOutcomes: unknown?.n ?? 0,
    oldestUnknownSeconds:
      oldest === null ? 0 : Math.max(0, (now.getTime() - oldest.getTime()) / 1000),
    payoutsAwaitingApproval: awaiting?.n ?? 0,
    scheduleChargesDue: due?.n ?? 0,
    scheduleChargesFailed: {
      'past-due': failedCount('past-due'),
      suspended: failedCount('suspended'),
    },
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
  readonly payoutsAwaitingApproval: Gauge;
  readonly scheduleChargesDue: Gauge;
  readonly scheduleChargesFailed: Gauge<'status'>;
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
export function sagaGaugeMetrics(): SagaGaugeMetrics {
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
    payoutsAwaitingApproval: readingGauge(
      SAGA_GAUGE.payoutsAwaitingApproval,
      'Two-step payouts registered by the gateway and awaiting approve-payout or reject-payout',
      [],
      (g, r) => g.set(r.payoutsAwaitingApproval),
    ),
    scheduleChargesDue: readingGauge(
      SAGA_GAUGE.scheduleChargesDue,
      'Recurring-schedule charges due and not started yet (charge timers past their due time)',
      [],
      (g, r) => g.set(r.scheduleChargesDue),
    ),
    scheduleChargesFailed: readingGauge(
      SAGA_GAUGE.scheduleChargesFailed,
      'Schedules whose cycle charge failed, by status: past-due (dunning retries ahead) or suspended (retries exhausted)',
      ['status'],
      (g, r) => {
        for (const status of FAILED_SCHEDULE_STATUSES) {
          g.set({ status }, r.scheduleChargesFailed[status]);
        }
      },
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
