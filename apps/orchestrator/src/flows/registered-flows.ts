import type { OrchestratorConfig } from '../config';
import type { ActionTable } from '../domain/admin/admin-actions';
import type { Flow } from '../runtime/flow';
import { cardPaymentModule } from './card-payment/module';
import type { FlowModule } from './flow-module';
import { panEligibilityModule } from './pan-eligibility/module';
import { payoutBudgetModule } from './payout-budget/module';
import { payoutModule } from './payout/module';
import { recurringScheduleModule } from './recurring-schedule/module';
import { transferModule } from './transfer/module';

/**
 * The flows the orchestrator hosts, one line each. Everything that depends on the set of flows
 * iterates this list: the runtime's `FLOWS` (app.module.ts), the outcome metrics' money events,
 * reconciliation (`application/reconciliation/reconciled-flows.ts`), the saga gauges and the
 * admin API's actions.
 */
export const FLOW_MODULES: readonly FlowModule[] = [
  cardPaymentModule,
  payoutModule,
  payoutBudgetModule,
  recurringScheduleModule,
  transferModule,
  panEligibilityModule,
];

/** The flows the saga runtime hosts (the `FLOWS` provider), each with its money events. */
export function registeredFlows(
  config: OrchestratorConfig,
  modules: readonly FlowModule[] = FLOW_MODULES,
): Flow[] {
  return modules.map((module) => ({ ...module.flow(config), moneyEvents: module.moneyEvents }));
}

/** The admin actions each flow's sagas offer, by flow name. */
export const FLOW_ACTIONS: ActionTable = Object.fromEntries(
  FLOW_MODULES.map((module) => [module.name, module.actions ?? {}]),
);
