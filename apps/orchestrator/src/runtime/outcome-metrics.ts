import type { Money } from '@payments/contracts';
import { counterMetric, histogramMetric } from '@payments/observability';
import type { Counter, Histogram } from 'prom-client';
import type { SagaEvent, SagaInput } from './flow';

/**
 * Business counters of the saga runtime, on the default registry (the one /metrics serves):
 * every outcome event a committed unit of work wrote, and the money its events say moved. Labels
 * are bounded: flow and event type (and currency); never ids, amounts or free text.
 */
export const OUTCOME_METRIC = {
  events: 'orchestrator_saga_events_total',
  moneyMoved: 'orchestrator_money_moved_minor_units_total',
  timeToTruth: 'orchestrator_time_to_truth_seconds',
} as const;

/**
 * Buckets of time to truth, in seconds: a callback's or a reply's truth is reported within tens
 * of milliseconds to a few seconds; a status poll's within its cadence; the tail up to the unknown
 * alert (an hour).
 */
export const TIME_TO_TRUTH_BUCKETS = [
  0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600,
] as const;

export interface OutcomeMetrics {
  /** Events committed, by flow and event type (all flows: payments, payouts, transfers …). */
  readonly events: Counter<'flow' | 'type'>;
  /** Integer minor units of the events that say money moved, by flow, event type and currency. */
  readonly moneyMoved: Counter<'flow' | 'type' | 'currency'>;
  /**
   * Seconds from a gateway answer (the adapter got the reply or status reply, callback-ingest the
   * callback) to the commit of the events that report it, by flow, the operation answered and the
   * answer's source.
   */
  readonly timeToTruth: Histogram<'flow' | 'operation' | 'source'>;
}

export function outcomeMetrics(): OutcomeMetrics {
  return {
    events: counterMetric({
      name: OUTCOME_METRIC.events,
      help: 'Outcome events committed by the saga runtime (counted after the commit), by flow and event type.',
      labelNames: ['flow', 'type'],
    }),
    moneyMoved: counterMetric({
      name: OUTCOME_METRIC.moneyMoved,
      help: 'Money the committed events say moved, in integer minor units of the currency: approved (charged), captured, returned (refunded), paid-out, transferred.',
      labelNames: ['flow', 'type', 'currency'],
    }),
    timeToTruth: histogramMetric({
      name: OUTCOME_METRIC.timeToTruth,
      help: "Seconds from the gateway's answer (when the adapter got its reply or status reply, or callback-ingest its callback) to the commit of the outcome events that report it, by flow, operation answered and source (reply, status, callback, browser-return)",
      labelNames: ['flow', 'operation', 'source'],
      buckets: [...TIME_TO_TRUTH_BUCKETS],
    }),
  };
}

/**
 * The event types of a flow's event union that can say money moved: those carrying an `amount`
 * (a flow module types its `moneyEvents` with it, so the compiler checks each carries one).
 * Holds (`authorized`, a capture's `released`, `voided`), registrations, requests and
 * bookkeeping (a schedule's `cycle-charged`) carry amounts too, yet move no money: a flow
 * module leaves them out.
 */
export type MoneyEventType<Event extends SagaEvent> = Extract<Event, { amount: Money }>['type'];

/** The money an event says moved (its type one of `moneyEvents`), or undefined when none. */
export function moneyMoved(event: SagaEvent, moneyEvents: readonly string[]): Money | undefined {
  if (!moneyEvents.includes(event.type)) return undefined;
  const { amount } = event as SagaEvent & { amount?: Partial<Money> };
  if (
    amount === undefined ||
    !Number.isSafeInteger(amount.minor) ||
    (amount.minor ?? 0) < 0 ||
    typeof amount.currency !== 'string'
  ) {
    return undefined;
  }
  return { minor: amount.minor as number, currency: amount.currency };
}

/** Where a gateway answer came from: a request's reply, a status reply, a verified callback. */
export type AnswerSource = 'reply' | 'status' | 'callback' | 'browser-return';

/** A gateway answer an input carried: when it came, what it came through, which operation. */
export interface GatewayAnswer {
  /** ISO instant: the result's `answeredAt` or the callback's `receivedAt`. */
  readonly at: string;
  readonly source: AnswerSource;
  /** The operation answered (a status reply's: the operation in flight it is about). */
  readonly operation: string;
}

/** Where a flow's state keeps an operation in flight (payments, payouts, transfers; card refs; registrations). */
const IN_FLIGHT_FIELDS = ['inFlight', 'cardRefRequest', 'registration'] as const;

/** The operation in flight of a saga's state, when it keeps one where the flows keep theirs. */
function operationInFlight(state: unknown): string | undefined {
  if (typeof state !== 'object' || state === null) return undefined;
  for (const field of IN_FLIGHT_FIELDS) {
    const op = (state as Record<string, unknown>)[field];
    if (typeof op === 'object' && op !== null) {
      const operation = (op as { operation?: unknown }).operation;
      if (typeof operation === 'string') return operation;
    }
  }
  return undefined;
}

/**
 * The gateway answer an input carries, or undefined when it is none: a gateway result stamped
 * `answeredAt` (the adapter got an HTTP answer; not-sent, unknown and the adapter's own answers
 * carry none) or a verified callback. Commands, hints and timers are not answers. `stateBefore`
 * (the saga's state the input was decided on) names the operation a status reply or a callback
 * is about.
 */
export function gatewayAnswerOf(input: SagaInput, stateBefore: unknown): GatewayAnswer | undefined {
  switch (input.kind) {
    case 'gateway-result': {
      const { result } = input;
      if (result.answeredAt === undefined) return undefined;
      const status = result.operation === 'status';
      return {
        at: result.answeredAt,
        source: status ? 'status' : 'reply',
        operation: status ? (operationInFlight(stateBefore) ?? 'status') : result.operation,
      };
    }
    case 'callback': {
      const { callback } = input;
      return {
        at: callback.receivedAt,
        source: callback.source === 'browser-return' ? 'browser-return' : 'callback',
        operation: operationInFlight(stateBefore) ?? 'other',
      };
    }
    case 'command':
    case 'status-check-hint':
    case 'timer':
      return undefined;
    default: {
      const never: never = input;
      throw new Error(`unhandled input ${JSON.stringify(never)}`);
    }
  }
}

/** An event a unit of work wrote, with its saga's flow and the gateway answer it reports. */
export interface OutcomeEvent {
  readonly flow: string;
  readonly event: SagaEvent;
  /** The gateway answer of the input decided on, when it was one (shared by its events). */
  readonly answer?: GatewayAnswer;
}

/**
 * Times the committed events from the gateway answers they report (call only after the commit
 * succeeded, with the time it did): one observation per answer that wrote events, however many
 * (an answer's events share its object). Events that report no answer record nothing. A clock
 * behind the answer's (another host) counts as 0, never negative.
 */
export function observeTimeToTruth(
  metrics: Pick<OutcomeMetrics, 'timeToTruth'>,
  committed: readonly OutcomeEvent[],
  committedAt: Date,
): void {
  const seen = new Set<GatewayAnswer>();
  for (const { flow, answer } of committed) {
    if (answer === undefined || seen.has(answer)) continue;
    seen.add(answer);
    const at = Date.parse(answer.at);
    if (!Number.isFinite(at)) continue;
    const seconds = Math.max(0, committedAt.getTime() - at) / 1000;
    metrics.timeToTruth.observe(
      { flow, operation: answer.operation, source: answer.source },
      seconds,
    );
  }
}

/**
 * Counts the events of a committed unit of work (call only after the commit succeeded);
 * `moneyEventsOf` names each flow's events that say money moved (its flow module's).
 */
export function countCommitted(
  metrics: OutcomeMetrics,
  committed: readonly OutcomeEvent[],
  moneyEventsOf: (flow: string) => readonly string[],
): void {
  for (const { flow, event } of committed) {
    metrics.events.inc({ flow, type: event.type });
    const money = moneyMoved(event, moneyEventsOf(flow));
    if (money !== undefined && money.minor > 0) {
      metrics.moneyMoved.inc({ flow, type: event.type, currency: money.currency }, money.minor);
    }
  }
}
