import type { PaymentOperation, PayoutOperation } from '@payments/contracts';
import {
  cardPaymentExpectation,
  type CheckTime,
  type ExpectationOrSkip,
  gatewayChargesOf,
  type HistoryEvent,
  type OperationEvents,
  operationsOf,
  payoutExpectation,
  type SagaOrder,
  type SettledOperation,
  transferExpectation,
} from '../../domain/reconciliation';
import { CARD_PAYMENT_FLOW } from '../../flows/card-payment/card-payment.flow';
import { isMainOperation, type PaymentState } from '../../flows/card-payment/domain/state';
import { CARD_PAYMENT_OPERATIONS } from '../../flows/card-payment/gateway-vocabulary';
import { PAN_ELIGIBILITY_FLOW } from '../../flows/pan-eligibility/pan-eligibility.flow';
import { PAYOUT_BUDGET_FLOW } from '../../flows/payout-budget/payout-budget.flow';
import { opensPayoutOrder, type PayoutState } from '../../flows/payout/domain/model';
import { PAYOUT_OPERATIONS } from '../../flows/payout/gateway-vocabulary';
import { PAYOUT_FLOW } from '../../flows/payout/payout.flow';
import type { ScheduleState } from '../../flows/recurring-schedule/domain/state';
import { RECURRING_SCHEDULE_FLOW } from '../../flows/recurring-schedule/recurring-schedule.flow';
import type { TransferState } from '../../flows/transfer/domain/model';
import { TRANSFER_FLOW, TRANSFER_OPERATIONS } from '../../flows/transfer/transfer.flow';
import { transactionTypes } from '../../runtime/flow-binding';

/** How reconciliation reads one flow's sagas and the gateway's answers about them. */
export interface FlowReconciliation {
  /** What the saga's state says of its order; undefined while nothing was ever sent. */
  readonly order: (state: unknown) => SagaOrder | undefined;
  /** The history event types {@link operations} reads (the only ones a run loads). */
  readonly historyEvents: readonly string[];
  /** The saga's settled operations, from its history. */
  readonly operations: (events: readonly HistoryEvent[]) => SettledOperation[];
  /**
   * The check of its latest operation, from its state: for an outcome unknown for over an hour,
   * and for operations without a known serial. Undefined: the flow's money moves only on orders
   * of their own, each checked by itself.
   */
  readonly latest?: (state: unknown, at: CheckTime) => ExpectationOrSkip;
  /** The gateway's transaction type → the flow's operations it can mean. */
  readonly named: (transactionType: string | undefined) => readonly string[] | undefined;
}

/**
 * Every flow the orchestrator runs, and how reconciliation checks it — or `moves-no-money`, said
 * out loud. A flow missing here fails `reconciled-flows.spec.ts`, which walks the flows the app
 * registers: a new flow cannot go unreconciled by being forgotten.
 */
export type Reconciliation = FlowReconciliation | 'moves-no-money';

const historyEventsOf = (names: OperationEvents): string[] => [
  names.requested,
  names.accepted,
  ...names.succeeded,
  ...names.declined,
  ...names.failed,
];

function requestFlow(names: OperationEvents) {
  return {
    historyEvents: historyEventsOf(names),
    operations: (events: readonly HistoryEvent[]) => operationsOf(events, names),
  };
}

/** An open state's order, in the field names every gateway flow's state uses. */
function orderOf(state: {
  status: string;
  clientOrderId?: string;
  gatewayOrderId?: string;
}): SagaOrder | undefined {
  if (state.status === 'initial' || state.clientOrderId === undefined) return undefined;
  return {
    status: state.status,
    clientOrderId: state.clientOrderId,
    ...(state.gatewayOrderId === undefined ? {} : { gatewayOrderId: state.gatewayOrderId }),
  };
}

const CARD_PAYMENT: FlowReconciliation = {
  order: (state) => orderOf(state as PaymentState & { clientOrderId?: string }),
  ...requestFlow({
    requested: 'operation-requested',
    accepted: 'accepted-by-gateway',
    succeeded: ['approved', 'authorized', 'account-verified', 'captured', 'voided', 'returned'],
    declined: ['declined'],
    failed: ['failed'],
    opensOrder: (operation) => isMainOperation(operation as PaymentOperation),
  }),
  latest: (state, at) => cardPaymentExpectation(state as PaymentState, at),
  named: (t) => CARD_PAYMENT_OPERATIONS.named(t),
};

const PAYOUT: FlowReconciliation = {
  order: (state) => orderOf(state as PayoutState & { clientOrderId?: string }),
  ...requestFlow({
    requested: 'payout-requested',
    accepted: 'payout-accepted-by-gateway',
    // payout-registered: the gateway approved the payout-check (nothing paid yet).
    succeeded: ['payout-registered', 'paid-out'],
    declined: ['payout-declined'],
    failed: ['payout-failed'],
    opensOrder: (operation) => opensPayoutOrder(operation as PayoutOperation),
  }),
  latest: (state, at) => payoutExpectation(state as PayoutState, at),
  named: (t) => PAYOUT_OPERATIONS.named(t),
};

const TRANSFER: FlowReconciliation = {
  order: (state) => orderOf(state as TransferState & { clientOrderId?: string }),
  ...requestFlow({
    requested: 'transfer-requested',
    accepted: 'transfer-accepted-by-gateway',
    succeeded: ['transferred'],
    declined: ['transfer-declined'],
    failed: ['transfer-failed'],
    opensOrder: () => true,
  }),
  latest: (state, at) => transferExpectation(state as TransferState, at),
  named: (t) => TRANSFER_OPERATIONS.named(t),
};

/** A registered schedule's charges: the gateway reports each as a sale on its own order. */
const SCHEDULE_CHARGES = transactionTypes<'sale'>({ sale: ['sale'] });

/**
 * Recurring schedules: a schedule the orchestrator charges moves money only through its rebill
 * payments (card-payment sagas, reconciled as such); one registered with the gateway is charged
 * by the gateway, each charge an order of its own, checked by its order id.
 */
const RECURRING_SCHEDULE: FlowReconciliation = {
  order: (state) => {
    const s = state as ScheduleState;
    return s.status === 'initial'
      ? undefined
      : { status: s.status, clientOrderId: s.terms.scheduleId };
  },
  historyEvents: ['gateway-cycle-charged', 'gateway-cycle-declined'],
  operations: gatewayChargesOf,
  named: (t) => SCHEDULE_CHARGES.named(t),
};

export const RECONCILIATION: Readonly<Record<string, Reconciliation>> = {
  [CARD_PAYMENT_FLOW]: CARD_PAYMENT,
  [PAYOUT_FLOW]: PAYOUT,
  [TRANSFER_FLOW]: TRANSFER,
  [RECURRING_SCHEDULE_FLOW]: RECURRING_SCHEDULE,
  // The endpoint's daily payout budget: bookkeeping of reservations, no gateway request.
  [PAYOUT_BUDGET_FLOW]: 'moves-no-money',
  // pan-eligibility asks whether a card can receive a payout; the gateway moves nothing.
  [PAN_ELIGIBILITY_FLOW]: 'moves-no-money',
};

/** The flow's reconciliation, or undefined when it moves no money (or is not a flow). */
export function reconciliationOf(flow: string): FlowReconciliation | undefined {
  const found = RECONCILIATION[flow];
  return found === undefined || found === 'moves-no-money' ? undefined : found;
}

/** The flows a run checks. */
export const RECONCILED_FLOWS: readonly string[] = Object.keys(RECONCILIATION).filter(
  (flow) => reconciliationOf(flow) !== undefined,
);

/** The history event types any reconciled flow reads. */
export const RECONCILED_HISTORY_EVENTS: readonly string[] = [
  ...new Set(RECONCILED_FLOWS.flatMap((flow) => reconciliationOf(flow)?.historyEvents ?? [])),
];
