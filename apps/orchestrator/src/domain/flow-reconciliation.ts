/**
 * How reconciliation reads one flow's sagas and the gateway's answers about them: what each flow
 * offers reconciliation (in its flow module), and the helpers the flows that send gateway
 * operations build it from.
 */
import {
  type CheckTime,
  type ExpectationOrSkip,
  type HistoryEvent,
  type OperationEvents,
  operationsOf,
  type SagaOrder,
  type SettledOperation,
} from './reconciliation';

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
 * How a flow is reconciled — or `moves-no-money`, said out loud (a flow module cannot leave it
 * out, and a flow whose events say money moved cannot say it: `registered-flows.spec.ts`).
 */
export type Reconciliation = FlowReconciliation | 'moves-no-money';

const historyEventsOf = (names: OperationEvents): string[] => [
  names.requested,
  names.accepted,
  ...names.succeeded,
  ...names.declined,
  ...names.failed,
];

/** The history part of a flow whose operations are gateway requests named by `names`. */
export function requestFlow(
  names: OperationEvents,
): Pick<FlowReconciliation, 'historyEvents' | 'operations'> {
  return {
    historyEvents: historyEventsOf(names),
    operations: (events: readonly HistoryEvent[]) => operationsOf(events, names),
  };
}

/** An open state's order, in the field names every gateway flow's state uses. */
export function orderOf(state: {
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

/**
 * The reconciliation of a flow whose money moves on gateway requests named by `names`: its order
 * from its state, its settled operations from its history, the check of its latest operation
 * (`latest`, the flow's own rule), and the gateway's transaction types as its operations.
 */
export function requestReconciliation<
  State extends { status: string; clientOrderId?: string; gatewayOrderId?: string },
>(
  names: OperationEvents,
  latest: (state: State, at: CheckTime) => ExpectationOrSkip,
  operations: { named: (transactionType: string | undefined) => readonly string[] | undefined },
): FlowReconciliation {
  return {
    order: (state) => orderOf(state as State),
    ...requestFlow(names),
    latest: (state, at) => latest(state as State, at),
    named: (t) => operations.named(t),
  };
}
