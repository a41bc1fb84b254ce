import type { Money } from '@payments/contracts';
import { counterMetric } from '@payments/observability';
import type { Counter } from 'prom-client';
import type { SagaEvent } from './flow';

/**
 * Business counters of the saga runtime, on the default registry (the one /metrics serves):
 * every outcome event a committed unit of work wrote, and the money its events say moved. Labels
 * are bounded: flow and event type (and currency); never ids, amounts or free text.
 */
export const OUTCOME_METRIC = {
  events: 'orchestrator_saga_events_total',
  moneyMoved: 'orchestrator_money_moved_minor_units_total',
} as const;

export interface OutcomeMetrics {
  /** Events committed, by flow and event type (all flows: payments, payouts, transfers …). */
  readonly events: Counter<'flow' | 'type'>;
  /** Integer minor units of the events that say money moved, by flow, event type and currency. */
  readonly moneyMoved: Counter<'flow' | 'type' | 'currency'>;
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

/** An event a unit of work wrote, with its saga's flow. */
export interface OutcomeEvent {
  readonly flow: string;
  readonly event: SagaEvent;
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
