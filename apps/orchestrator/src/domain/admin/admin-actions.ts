/**
 * What an operator's action on a saga becomes: an ordinary command of the contracts,
 * sent like any other. Pure; the admin service validates the result against the contracts, asks
 * the saga's own flow whether it would take it now (`actionVerdict`), writes the audit and enqueues
 * both. Money never moves on an operator's word: "resolve an unknown outcome" asks the gateway for
 * the status (refresh-status) and the answer decides.
 */
import type { AdminAction as AdminActionName, AdminRole } from '@payments/contracts';

export interface ActionTarget {
  readonly id: string;
  readonly flow: string;
  readonly endpointId: string;
}

export interface ActionInput {
  readonly actor: string;
  /** The actor's role: an approval carries it (four eyes: the second approval needs `approver`). */
  readonly role: AdminRole;
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
 * domain/gateway-operation/gateway-operation.ts). Resolving an unknown outcome is the same refresh: money never
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

/** A saga's state as far as the generic rules read it: whether an outcome is unknown, since when. */
export interface ActionState {
  readonly unknownSince: string | null;
}

/**
 * The earliest `unknownSince` anywhere in a saga's state: every flow marks an operation whose
 * outcome is unknown with it (a payment's or payout's `inFlight`, a schedule's registration or the
 * confirmation of a charge the gateway made), so the admin API need not know each flow's shape.
 */
export function unknownSinceIn(state: unknown, depth = 0): string | null {
  if (typeof state !== 'object' || state === null || depth > 6) return null;
  let earliest: string | null = null;
  for (const [key, value] of Object.entries(state)) {
    const found =
      key === 'unknownSince' && typeof value === 'string'
        ? value
        : unknownSinceIn(value, depth + 1);
    if (found !== null && (earliest === null || found < earliest)) earliest = found;
  }
  return earliest;
}

/** The saga's flow, asked with the action's command (its decider, dry run: nothing is kept). */
export type FlowAnswer =
  | { readonly outcome: 'accepted' }
  | { readonly outcome: 'rejected'; readonly code: string; readonly message: string }
  | { readonly outcome: 'ignored'; readonly reason: string };

export type ActionVerdict =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly code: string; readonly message: string };

/** The HTTP code of an action the saga's state does not take now. */
export const ACTION_NOT_ALLOWED_IN_STATE = 'ACTION_NOT_ALLOWED_IN_STATE';

/**
 * Refusals that are about who acts, not about the saga's state: answered with the flow's own
 * code (the same person approving twice, a second approval without the approver role).
 */
const ACTOR_REFUSALS: ReadonlySet<string> = new Set([
  'PAYOUT_SAME_APPROVER',
  'PAYOUT_APPROVER_ROLE_REQUIRED',
]);

/**
 * Whether an action is allowed now: by the saga's own flow (its decider's answer to the very
 * command the action becomes, so the admin API and the saga can never disagree), and
 * `resolve-unknown` only while an outcome is unknown. A paid payout refuses approve
 * (PAYOUT_ALREADY_APPROVED), a cancelled schedule everything, a payment with nothing in flight a
 * refresh (NOTHING_TO_REFRESH): each answered as ACTION_NOT_ALLOWED_IN_STATE with the flow's
 * reason, before any command is produced.
 */
export function actionVerdict(
  action: AdminActionName,
  state: ActionState,
  answer: FlowAnswer,
): ActionVerdict {
  if (action === 'resolve-unknown' && state.unknownSince === null) {
    return {
      allowed: false,
      code: ACTION_NOT_ALLOWED_IN_STATE,
      message:
        'no outcome of this saga is unknown: nothing to resolve (refresh-status asks anyway)',
    };
  }
  switch (answer.outcome) {
    case 'accepted':
      return { allowed: true };
    case 'rejected':
      return ACTOR_REFUSALS.has(answer.code)
        ? { allowed: false, code: answer.code, message: answer.message }
        : {
            allowed: false,
            code: ACTION_NOT_ALLOWED_IN_STATE,
            message: `${action} is not allowed now: ${answer.code}: ${answer.message}`,
          };
    case 'ignored':
      return {
        allowed: false,
        code: ACTION_NOT_ALLOWED_IN_STATE,
        message: `${action} would change nothing now (${answer.reason})`,
      };
    default: {
      const never: never = answer;
      throw new Error(`unhandled answer ${JSON.stringify(never)}`);
    }
  }
}
