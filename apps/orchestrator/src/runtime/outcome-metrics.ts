import type { Money, PaymentEvent, PayoutEvent, TransferEvent } from '@payments/contracts';
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

type MoneyEvent = Extract<PaymentEvent | PayoutEvent | TransferEvent, { amount: Money }>;

/**
 * The event types that say money moved, each with its `amount` (the compiler checks they carry
 * one). Not counted: holds (`authorized`, a capture's `released`, `voided`, which is a released
 * hold or a cancelled charge without saying which), registrations (`payout-registered`), requests
 * (`operation-requested`, `payout-requested`, `cycle-charge-requested`) and the schedule's
 * bookkeeping `cycle-charged` (its money event is the rebill payment's own `approved`).
 */
export const MONEY_MOVED_EVENT_TYPES = [
  'approved',
  'captured',
  'returned',
  'paid-out',
  'transferred',
] as const satisfies ReadonlyArray<MoneyEvent['type']>;

const MONEY_MOVED: ReadonlySet<string> = new Set(MONEY_MOVED_EVENT_TYPES);

/** The money an event says moved, or undefined when it moved none. */
export function moneyMoved(event: SagaEvent): Money | undefined {
  if (!MONEY_MOVED.has(event.type)) return undefined;
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

/** Counts the events of a committed unit of work (call only after the commit succeeded). */
export function countCommitted(metrics: OutcomeMetrics, committed: readonly OutcomeEvent[]): void {
  for (const { flow, event } of committed) {
    metrics.events.inc({ flow, type: event.type });
    const money = moneyMoved(event);
    if (money !== undefined && money.minor > 0) {
      metrics.moneyMoved.inc({ flow, type: event.type, currency: money.currency }, money.minor);
    }
  }
}
