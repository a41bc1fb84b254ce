import { commandTypesOf, FLOW_FAMILIES, type FlowFamily } from '@payments/contracts';
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

/**
 * The flows the saga runtime hosts (the `FLOWS` provider), each with its money events. Refuses to
 * start (throws) unless every family has one module, every command type of every family exactly
 * one flow and every money-moving flow its reconciliation ({@link registryProblems}): what is
 * left out would otherwise only show when a command or an audit finds it.
 */
export function registeredFlows(
  config: OrchestratorConfig,
  modules: readonly FlowModule[] = FLOW_MODULES,
  families: readonly FlowFamily[] = FLOW_FAMILIES,
): Flow[] {
  const flows = modules.map((module) => ({
    ...module.flow(config),
    moneyEvents: module.moneyEvents,
  }));
  const problems = registryProblems(
    families,
    modules.map((module, i) => ({ ...module, commandTypes: flows[i].commandTypes })),
  );
  if (problems.length > 0)
    throw new Error(`the flow registry is incomplete: ${problems.join('; ')}`);
  return flows;
}

/** A hosted flow as the registry check sees it: its module, and its flow's command types. */
export type HostedFlow = Pick<FlowModule, 'name' | 'family' | 'moneyEvents' | 'reconciliation'> & {
  readonly commandTypes: readonly string[];
};

/**
 * What is wrong with the registry (nothing: an empty list): a family with no module (or two), a
 * module whose family is not registered, a command type with no flow or with two, a flow owning
 * a type its family does not define, a money event its family does not write, a flow whose
 * events say money moved and that says it moves none (reconciliation would never check it).
 */
export function registryProblems(
  families: readonly FlowFamily[],
  hosted: readonly HostedFlow[],
): string[] {
  const problems: string[] = [];
  for (const family of families) {
    const modules = hosted.filter((h) => h.family === family).map((h) => h.name);
    if (modules.length !== 1)
      problems.push(
        `family ${family.name} has ${modules.length === 0 ? 'no flow module' : `flow modules ${modules.join(', ')}`}`,
      );
  }
  const owners = new Map<string, string[]>();
  for (const h of hosted) {
    if (!families.includes(h.family))
      problems.push(`flow ${h.name}: its family ${h.family.name} is not in FLOW_FAMILIES`);
    const own = new Set<string>(commandTypesOf(h.family));
    for (const type of h.commandTypes) {
      owners.set(type, [...(owners.get(type) ?? []), h.name]);
      if (!own.has(type)) problems.push(`flow ${h.name} owns ${type}, not a command of its family`);
    }
    for (const event of h.moneyEvents) {
      if (!Object.hasOwn(h.family.events, event))
        problems.push(`flow ${h.name}: money event ${event} is not an event of its family`);
    }
    if (h.moneyEvents.length > 0 && h.reconciliation === 'moves-no-money')
      problems.push(`flow ${h.name}: its events say money moved and it says moves-no-money`);
  }
  for (const family of families) {
    for (const type of commandTypesOf(family)) {
      const flows = owners.get(type) ?? [];
      if (flows.length === 0) problems.push(`command type ${type} (${family.name}) has no flow`);
      if (flows.length > 1)
        problems.push(`command type ${type} has two flows: ${flows.join(', ')}`);
    }
  }
  return problems;
}

/** The admin actions each flow's sagas offer, by flow name. */
export const FLOW_ACTIONS: ActionTable = Object.fromEntries(
  FLOW_MODULES.map((module) => [module.name, module.actions ?? {}]),
);
