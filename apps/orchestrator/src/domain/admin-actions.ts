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

/**
 * The command each action becomes, per flow it applies to (flow names as the runtime registers
 * them). A refresh is the flow's own status-refresh command: each flow has its saga id field and
 * its command family, and every one of them asks the gateway through the same rule
 * (`refreshQuery`, domain/gateway-operation.ts).
 */
const REFRESH_COMMANDS: Readonly<Record<string, { type: string; idField: string }>> = {
  'card-payment': { type: 'refresh-status', idField: 'paymentId' },
  payout: { type: 'refresh-payout-status', idField: 'payoutId' },
  transfer: { type: 'refresh-transfer-status', idField: 'transferId' },
  'recurring-schedule': { type: 'refresh-schedule-status', idField: 'scheduleId' },
};

/** The flows each action applies to. */
export const ACTION_FLOWS: Readonly<Record<AdminActionName, readonly string[]>> = {
  'refresh-status': Object.keys(REFRESH_COMMANDS),
  'resolve-unknown': Object.keys(REFRESH_COMMANDS),
  approve: ['payout'],
  reject: ['payout'],
  pause: ['recurring-schedule'],
  resume: ['recurring-schedule'],
  cancel: ['recurring-schedule'],
};

export function actionCommand(
  action: AdminActionName,
  saga: ActionTarget,
  input: ActionInput,
): ActionCommand {
  const flows = ACTION_FLOWS[action];
  if (!flows.includes(saga.flow)) {
    return {
      ok: false,
      message: `${action} applies to ${flows.join(', ')} sagas; ${saga.id} is a ${saga.flow} saga`,
    };
  }
  const base = {
    commandId: input.commandId,
    merchant: { endpointId: saga.endpointId },
    occurredAt: input.now,
  };
  switch (action) {
    case 'refresh-status':
    case 'resolve-unknown': {
      const refresh = REFRESH_COMMANDS[saga.flow];
      if (refresh === undefined) throw new Error(`no refresh command for ${saga.flow}`);
      return { ok: true, command: { type: refresh.type, ...base, [refresh.idField]: saga.id } };
    }
    case 'approve':
      return {
        ok: true,
        command: {
          type: 'approve-payout',
          ...base,
          payoutId: saga.id,
          approvedBy: input.actor,
          reason: input.reason,
        },
      };
    case 'reject':
      return {
        ok: true,
        command: {
          type: 'reject-payout',
          ...base,
          payoutId: saga.id,
          rejectedBy: input.actor,
          reason: input.reason,
        },
      };
    case 'pause':
      return { ok: true, command: { type: 'pause-schedule', ...base, scheduleId: saga.id } };
    case 'resume':
      return { ok: true, command: { type: 'resume-schedule', ...base, scheduleId: saga.id } };
    case 'cancel':
      return { ok: true, command: { type: 'cancel-schedule', ...base, scheduleId: saga.id } };
    default: {
      const never: never = action;
      throw new Error(`unhandled admin action ${String(never)}`);
    }
  }
}
