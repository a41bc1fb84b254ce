/**
 * What an operator's action on a saga becomes: an ordinary command of the contracts,
 * sent like any other. Pure; the admin service validates the result against the contracts, writes
 * the audit and enqueues both. Money never moves on an operator's word: "resolve an unknown
 * outcome" asks the gateway for the status (refresh-status) and the answer decides.
 */
import type { AdminAction as AdminActionName } from '@payments/contracts';

export interface ActionTarget {
  readonly id: string;
  readonly flow: string;
  readonly endpointId: string;
}

export interface ActionInput {
  readonly actor: string;
  readonly reason: string;
  readonly commandId: string;
  readonly now: string;
}

export type ActionCommand =
  | { readonly ok: true; readonly command: Record<string, unknown> & { type: string } }
  | { readonly ok: false; readonly message: string };

/** The fields every action's command carries. */
export interface CommandBase {
  readonly commandId: string;
  readonly merchant: { readonly endpointId: string };
  readonly occurredAt: string;
}

/** The command an action on one of a flow's sagas becomes. */
export type ActionBuilder = (
  saga: ActionTarget,
  input: ActionInput,
  base: CommandBase,
) => Record<string, unknown> & { type: string };

/** The actions a flow offers (its flow module), each with the command it becomes. */
export type FlowActions = Readonly<Partial<Record<AdminActionName, ActionBuilder>>>;

/** The actions of every flow the orchestrator runs, by flow name. */
export type ActionTable = Readonly<Record<string, FlowActions>>;

/**
 * A refresh is the flow's own status-refresh command: each flow has its saga id field and its
 * command family, and every one of them asks the gateway through the same rule (`refreshQuery`,
 * domain/gateway-operation.ts). Resolving an unknown outcome is the same refresh: money never
 * moves on an operator's word, the gateway's answer decides.
 */
export function refreshActions(type: string, idField: string): FlowActions {
  const refresh: ActionBuilder = (saga, _input, base) => ({ type, ...base, [idField]: saga.id });
  return { 'refresh-status': refresh, 'resolve-unknown': refresh };
}

/** The flows an action applies to, in the table's order. */
export function flowsOffering(table: ActionTable, action: AdminActionName): string[] {
  return Object.keys(table).filter((flow) => table[flow]?.[action] !== undefined);
}

/** The actions a saga of `flow` offers, in `order`. */
export function actionsOf(
  table: ActionTable,
  flow: string,
  order: readonly AdminActionName[],
): AdminActionName[] {
  return order.filter((action) => table[flow]?.[action] !== undefined);
}

export function actionCommand(
  action: AdminActionName,
  saga: ActionTarget,
  input: ActionInput,
  table: ActionTable,
): ActionCommand {
  const build = table[saga.flow]?.[action];
  if (build === undefined) {
    return {
      ok: false,
      message: `${action} applies to ${flowsOffering(table, action).join(', ')} sagas; ${saga.id} is a ${saga.flow} saga`,
    };
  }
  const base: CommandBase = {
    commandId: input.commandId,
    merchant: { endpointId: saga.endpointId },
    occurredAt: input.now,
  };
  return { ok: true, command: build(saga, input, base) };
}
