import type { FlowFamily } from '@payments/contracts';
import type { OrchestratorConfig } from '../config';
import type { FlowActions } from '../domain/admin/admin-actions';
import type { Reconciliation } from '../domain/reconciliation/flow-reconciliation';
import type { Flow } from '../runtime/flow';

/** A read-only SQL runner (an EntityManager's `query`). */
export type Query = <Row>(sql: string, params: unknown[]) => Promise<Row[]>;

/** One value of a gauge, with its labels (bounded: statuses, never ids). */
export interface GaugeValue {
  readonly labels?: Readonly<Record<string, string>>;
  readonly value: number;
}

/**
 * A business gauge a flow offers, read from PostgreSQL when /metrics is scraped (one cheap query:
 * the `(flow, status)` index or the timers table, never a scan of settled sagas).
 */
export interface FlowGauge {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly string[];
  /** Every label set the gauge reports, each read (0 when no row has it). */
  readonly read: (query: Query, now: Date) => Promise<readonly GaugeValue[]>;
}

/**
 * A flow as the orchestrator hosts it: the flow the saga runtime runs, and what it offers the
 * operator tools around it (reconciliation, money metrics, gauges, admin actions). app.module,
 * reconciliation, the outcome metrics, the gauges and the admin API iterate the registry of these
 * (`registered-flows.ts`): a new flow is its folder, its contracts module and one line there.
 */
export interface FlowModule {
  readonly name: string;
  /**
   * Its contracts family (one of `FLOW_FAMILIES`): the commands its flow owns, every one of them
   * (`registeredFlows` refuses to start otherwise), and the events it writes.
   */
  readonly family: FlowFamily;
  /** The flow the runtime hosts, from the orchestrator's configuration. */
  readonly flow: (config: OrchestratorConfig) => Flow;
  /** How reconciliation checks its sagas, or `moves-no-money` said out loud. */
  readonly reconciliation: Reconciliation;
  /**
   * Its event types that say money moved, each carrying its `amount`
   * (`orchestrator_money_moved_minor_units_total`); a flow listing one must be reconciled.
   */
  readonly moneyEvents: readonly string[];
  /** The admin actions its sagas offer (none: an operator has nothing to ask of them). */
  readonly actions?: FlowActions;
  /** Its business gauges. */
  readonly gauges?: readonly FlowGauge[];
}
