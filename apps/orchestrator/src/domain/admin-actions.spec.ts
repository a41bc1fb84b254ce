import { ADMIN_ACTIONS } from '@payments/contracts';
import { ACTION_FLOWS, actionCommand } from './admin-actions';

const input = {
  actor: 'alice',
  reason: 'customer called',
  commandId: '00000000-0000-4000-8000-000000000001',
  now: '2026-11-24T10:00:00.000Z',
};
const saga = (flow: string) => ({
  id: '00000000-0000-4000-8000-0000000000aa',
  flow,
  endpointId: '42',
});

describe('admin actions', () => {
  it('turns each action into the command of its flow', () => {
    const base = {
      commandId: input.commandId,
      merchant: { endpointId: '42' },
      occurredAt: input.now,
    };
    const id = saga('x').id;
    expect(actionCommand('refresh-status', saga('card-payment'), input)).toEqual({
      ok: true,
      command: { type: 'refresh-status', ...base, paymentId: id },
    });
    // Resolving an unknown outcome asks the gateway: the same refresh-status, never a verdict.
    expect(actionCommand('resolve-unknown', saga('card-payment'), input)).toEqual({
      ok: true,
      command: { type: 'refresh-status', ...base, paymentId: id },
    });
    expect(actionCommand('approve', saga('payout'), input)).toEqual({
      ok: true,
      command: {
        type: 'approve-payout',
        ...base,
        payoutId: id,
        approvedBy: 'alice',
        reason: 'customer called',
      },
    });
    expect(actionCommand('reject', saga('payout'), input)).toEqual({
      ok: true,
      command: {
        type: 'reject-payout',
        ...base,
        payoutId: id,
        rejectedBy: 'alice',
        reason: 'customer called',
      },
    });
    for (const [action, type] of [
      ['pause', 'pause-schedule'],
      ['resume', 'resume-schedule'],
      ['cancel', 'cancel-schedule'],
    ] as const) {
      expect(actionCommand(action, saga('recurring-schedule'), input)).toEqual({
        ok: true,
        command: { type, ...base, scheduleId: id },
      });
    }
  });

  it('refuses an action on a saga of another flow, naming both', () => {
    for (const action of ADMIN_ACTIONS) {
      const other = ACTION_FLOWS[action] === 'payout' ? 'transfer' : 'payout';
      const result = actionCommand(action, saga(other), input);
      expect(result).toEqual({
        ok: false,
        message: `${action} applies to ${ACTION_FLOWS[action]} sagas; ${saga(other).id} is a ${other} saga`,
      });
    }
  });
});
