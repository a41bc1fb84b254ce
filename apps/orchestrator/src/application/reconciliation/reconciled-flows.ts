import type {
  FlowReconciliation,
  Reconciliation,
} from '../../domain/reconciliation/flow-reconciliation';
import { FLOW_MODULES } from '../../flows/registered-flows';

export type {
  FlowReconciliation,
  Reconciliation,
} from '../../domain/reconciliation/flow-reconciliation';

/**
 * Every flow the orchestrator runs, and how reconciliation checks it — or `moves-no-money`, said
 * out loud by its flow module (which cannot leave it out). `registered-flows.spec.ts` fails on a
 * flow whose events say money moved and that is not reconciled.
 */
export const RECONCILIATION: Readonly<Record<string, Reconciliation>> = Object.fromEntries(
  FLOW_MODULES.map((module) => [module.name, module.reconciliation]),
);

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

/**
 * `<flow>:<status>` of the sagas a run looks at even when nothing of theirs changed in its window
 * (they wait for what the gateway does on its own: a registered schedule's charges).
 */
export const AWAITING: readonly string[] = RECONCILED_FLOWS.flatMap((flow) =>
  (reconciliationOf(flow)?.awaitingStatuses ?? []).map((status) => `${flow}:${status}`),
);
