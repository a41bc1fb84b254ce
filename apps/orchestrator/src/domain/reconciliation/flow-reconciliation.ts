/**
 * How reconciliation reads one flow's sagas and the gateway's answers about them: what each flow
 * offers reconciliation (in its flow module), and the helpers the flows that send gateway
 * operations build it from.
 */
import {
  check,
  type CheckTime,
  type Expectation,
  type ExpectationOrSkip,
  type HistoryEvent,
  inFlightCheck,
  type OperationEvents,
  operationsOf,
  type PlannedCheck,
  type RunScope,
  type SagaOrder,
  type SettledOperation,
  skip,
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
  /**
   * The checks of requests the saga waits for that only its state knows of (a registered
   * schedule's expected charges: the gateway makes them, no history names them), in a run.
   */
  readonly awaited?: (state: unknown, at: CheckTime, scope: RunScope) => PlannedCheck[];
  /**
   * Statuses whose sagas a run looks at even when nothing of theirs changed in its window (a
   * registered schedule: the gateway charges it whether or not the schedule hears of it).
   */
  readonly awaitingStatuses?: readonly string[];
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

/**
 * The names of a flow's operation events under its prefix (the contracts' `operationLifecycle`:
 * `<prefix>accepted-by-gateway`, `<prefix>declined`, `<prefix>failed`), with what is its own:
 * its requested event, its successes, which operations open the order and (for requests whose
 * transaction the gateway decides) which operation each success says it was.
 */
export function lifecycleEvents(
  prefix: string,
  own: Pick<OperationEvents, 'requested' | 'succeeded'> &
    Partial<Pick<OperationEvents, 'opensOrder' | 'succeededAs'>>,
): OperationEvents {
  return {
    requested: own.requested,
    accepted: `${prefix}accepted-by-gateway`,
    succeeded: own.succeeded,
    declined: [`${prefix}declined`],
    failed: [`${prefix}failed`],
    opensOrder: own.opensOrder ?? (() => true),
    ...(own.succeededAs === undefined ? {} : { succeededAs: own.succeededAs }),
  };
}

/** Where a saga with nothing in flight stands, as reconciliation reads it. */
export type SettledAs =
  | {
      readonly as: 'approved' | 'not-approved';
      /** The operation that moved (or would have moved) the money. */
      readonly operation: string;
      readonly benign?: readonly string[];
    }
  | { readonly as: 'in-flight' | 'never-sent' };

/**
 * The check of the latest operation of a saga whose money moves on one operation:
 * never sent (initial) → left out; an operation in flight → checked once its outcome has been
 * unknown long enough; otherwise as the flow's `settled` reads its status — approved with the
 * amount, not approved (nothing moved; `benign` operations may stand approved at the gateway), or
 * left out (still in flight, or refused before anything was sent).
 */
export function moneyOperationExpectation<
  State extends
    | { readonly status: 'initial' }
    | {
        readonly status: string;
        readonly clientOrderId: string;
        readonly gatewayOrderId?: string;
        readonly amount: NonNullable<Expectation['amount']>;
        readonly inFlight?: Parameters<typeof inFlightCheck>[0];
      },
>(
  state: State,
  at: CheckTime,
  settled: (state: Exclude<State, { readonly status: 'initial' }>) => SettledAs,
): ExpectationOrSkip {
  if (!('clientOrderId' in state)) return skip('never-sent');
  const base = {
    status: state.status,
    clientOrderId: state.clientOrderId,
    gatewayOrderId: state.gatewayOrderId,
  };
  if (state.inFlight !== undefined)
    return inFlightCheck(state.inFlight, { ...base, amount: state.amount }, at);
  const reading = settled(state as Exclude<State, { readonly status: 'initial' }>);
  switch (reading.as) {
    case 'approved':
      return check({
        ...base,
        operation: reading.operation,
        outcome: 'approved',
        amount: state.amount,
      });
    case 'not-approved':
      return check({
        ...base,
        operation: reading.operation,
        outcome: 'not-approved',
        ...(reading.benign === undefined ? {} : { benign: reading.benign }),
      });
    case 'in-flight':
    case 'never-sent':
      return skip(reading.as);
  }
}
