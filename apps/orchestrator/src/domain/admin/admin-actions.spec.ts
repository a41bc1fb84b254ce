import { ADMIN_ACTIONS, type AdminAction } from '@payments/contracts';
import { contractCommands } from '../../flows/command-catalogue';
import { FLOW_ACTIONS } from '../../flows/registered-flows';
import {
  actionCommand as build,
  type ActionInput,
  type ActionTarget,
  actionVerdict,
  flowsOffering,
  unknownSinceIn,
} from './admin-actions';

const actionCommand = (action: AdminAction, target: ActionTarget, given: ActionInput) =>
  build(action, target, given, FLOW_ACTIONS);

const input = {
  actor: 'alice',
  role: 'operator' as const,
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
    // Payouts, transfers and schedules: their own refresh command, addressed by their saga id field.
    for (const action of ['refresh-status', 'resolve-unknown'] as const) {
      expect(actionCommand(action, saga('payout'), input)).toEqual({
        ok: true,
        command: { type: 'refresh-payout-status', ...base, payoutId: id },
      });
      expect(actionCommand(action, saga('transfer'), input)).toEqual({
        ok: true,
        command: { type: 'refresh-transfer-status', ...base, transferId: id },
      });
      expect(actionCommand(action, saga('recurring-schedule'), input)).toEqual({
        ok: true,
        command: { type: 'refresh-schedule-status', ...base, scheduleId: id },
      });
    }
    expect(actionCommand('approve', saga('payout'), input)).toEqual({
      ok: true,
      command: {
        type: 'approve-payout',
        ...base,
        payoutId: id,
        approvedBy: 'alice',
        approverRole: 'operator',
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
      const result = actionCommand(action, saga('pan-eligibility'), input);
      expect(result).toEqual({
        ok: false,
        message: `${action} applies to ${flowsOffering(FLOW_ACTIONS, action).join(', ')} sagas; ${saga('x').id} is a pan-eligibility saga`,
      });
    }
    expect(actionCommand('approve', saga('transfer'), input)).toMatchObject({ ok: false });
  });

  it('builds for every flow an action applies to a command the contracts accept', () => {
    for (const action of ADMIN_ACTIONS) {
      for (const flow of flowsOffering(FLOW_ACTIONS, action)) {
        const built = actionCommand(action, saga(flow), input);
        if (!built.ok) throw new Error(built.message);
        const parsed = contractCommands.parse(built.command);
        expect({ action, flow, ok: parsed.ok }).toEqual({ action, flow, ok: true });
      }
    }
  });

  it('allows what the flow accepts; refuses the rest as not allowed in state, or with the four-eyes code', () => {
    const unknown = { unknownSince: '2026-11-24T09:00:00.000Z' };
    const known = { unknownSince: null };
    expect(actionVerdict('approve', known, { outcome: 'accepted' })).toEqual({ allowed: true });
    expect(
      actionVerdict('approve', known, {
        outcome: 'rejected',
        code: 'PAYOUT_ALREADY_APPROVED',
        message: 'the payout was approved (paid)',
      }),
    ).toEqual({
      allowed: false,
      code: 'ACTION_NOT_ALLOWED_IN_STATE',
      message:
        'approve is not allowed now: PAYOUT_ALREADY_APPROVED: the payout was approved (paid)',
    });
    expect(
      actionVerdict('approve', known, {
        outcome: 'rejected',
        code: 'PAYOUT_SAME_APPROVER',
        message: 'alice gave the first approval',
      }),
    ).toMatchObject({ allowed: false, code: 'PAYOUT_SAME_APPROVER' });
    expect(actionVerdict('pause', known, { outcome: 'ignored', reason: 'NO_NEWS' })).toMatchObject({
      allowed: false,
      code: 'ACTION_NOT_ALLOWED_IN_STATE',
    });
    // Resolving needs an unknown outcome, whatever the flow would say of the refresh.
    expect(actionVerdict('resolve-unknown', known, { outcome: 'accepted' })).toMatchObject({
      allowed: false,
      code: 'ACTION_NOT_ALLOWED_IN_STATE',
    });
    expect(actionVerdict('resolve-unknown', unknown, { outcome: 'accepted' })).toEqual({
      allowed: true,
    });
    expect(actionVerdict('refresh-status', known, { outcome: 'accepted' })).toEqual({
      allowed: true,
    });
  });

  it('finds an unknown outcome wherever a flow keeps it, the earliest first', () => {
    expect(unknownSinceIn({ status: 'approved', version: 3 })).toBeNull();
    expect(unknownSinceIn({ inFlight: { unknownSince: '2026-01-02T00:00:00.000Z' } })).toBe(
      '2026-01-02T00:00:00.000Z',
    );
    expect(
      unknownSinceIn({
        registration: { stage: 'outcome-unknown', unknownSince: '2026-01-03T00:00:00.000Z' },
        charges: [{ op: { unknownSince: '2026-01-01T00:00:00.000Z' } }],
      }),
    ).toBe('2026-01-01T00:00:00.000Z');
  });
});
