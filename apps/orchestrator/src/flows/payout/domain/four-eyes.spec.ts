import * as payouts from '../../../../test/kits/payout.kit';
import { approvalStep } from './four-eyes';

const FOUR_EYES: typeof payouts.POLICY = {
  ...payouts.POLICY,
  limits: {
    default: { ...payouts.POLICY.limits.default, fourEyesAboveMinor: 10_000 },
    endpoints: { '999': { fourEyesAboveMinor: 50_000 } },
  },
};

const approveAs = (id: string, by: string, role?: 'viewer' | 'operator' | 'approver') => ({
  ...payouts.approve(id, by),
  ...(role === undefined ? {} : { approverRole: role }),
});

describe('four eyes: a payout above the threshold is paid only after two approvals by different people', () => {
  it('given a payout above the threshold, when one operator approves, then the approval is recorded and nothing is reserved or sent', () => {
    const world = new payouts.PayoutWorld(FOUR_EYES);
    const id = payouts.uuid();
    world.registered(id, 20_000);
    const first = world.apply(id, payouts.command(approveAs(id, 'alice', 'operator')));
    expect(first.events).toMatchObject([
      { type: 'payout-approval-recorded', approvedBy: 'alice', fourEyesAboveMinor: 10_000 },
    ]);
    expect(first.effects).toEqual([]);
    expect(world.state(id)).toMatchObject({
      status: 'registered',
      recordedApproval: { by: 'alice' },
    });
    expect(world.paysSent(id)).toBe(0);
  });

  it('when the same person approves twice, then the second is refused (PAYOUT_SAME_APPROVER) and nothing is paid', () => {
    const world = new payouts.PayoutWorld(FOUR_EYES);
    const id = payouts.uuid();
    world.registered(id, 20_000);
    world.apply(id, payouts.command(approveAs(id, 'alice', 'approver')));
    const again = world.apply(id, payouts.command(approveAs(id, 'alice', 'approver')));
    expect(again.outcome === 'rejected' && again.rejection.code).toBe('PAYOUT_SAME_APPROVER');
    expect(world.paysSent(id)).toBe(0);
  });

  it('when a different person without the approver role approves second, then it is refused (PAYOUT_APPROVER_ROLE_REQUIRED)', () => {
    const world = new payouts.PayoutWorld(FOUR_EYES);
    const id = payouts.uuid();
    world.registered(id, 20_000);
    world.apply(id, payouts.command(approveAs(id, 'alice', 'operator')));
    const second = world.apply(id, payouts.command(approveAs(id, 'bob', 'operator')));
    expect(second.outcome === 'rejected' && second.rejection.code).toBe(
      'PAYOUT_APPROVER_ROLE_REQUIRED',
    );
    expect(world.paysSent(id)).toBe(0);
  });

  it('when a different approver approves second, then payout-pay is sent once, the event naming both people', () => {
    const world = new payouts.PayoutWorld(FOUR_EYES);
    const id = payouts.uuid();
    world.registered(id, 20_000);
    world.apply(id, payouts.command(approveAs(id, 'alice', 'operator')));
    const second = world.apply(id, payouts.command(approveAs(id, 'bob', 'approver')));
    expect(second.events[0]).toMatchObject({
      type: 'payout-approved',
      approvedBy: 'bob',
      firstApprovedBy: 'alice',
    });
    expect(world.paysSent(id)).toBe(1);
    const third = world.apply(id, payouts.command(approveAs(id, 'carol', 'approver')));
    expect(third.outcome === 'rejected' && third.rejection.code).toBe('PAYOUT_ALREADY_APPROVED');
    expect(world.paysSent(id)).toBe(1);
  });

  it('when anyone rejects after the first approval, then the payout ends rejected and nothing is paid', () => {
    const world = new payouts.PayoutWorld(FOUR_EYES);
    const id = payouts.uuid();
    world.registered(id, 20_000);
    world.apply(id, payouts.command(approveAs(id, 'alice', 'approver')));
    world.apply(id, payouts.command(payouts.reject(id)));
    expect(world.state(id).status).toBe('rejected');
    const late = world.apply(id, payouts.command(approveAs(id, 'bob', 'approver')));
    expect(late.outcome === 'rejected' && late.rejection.code).toBe('PAYOUT_REJECTED');
    expect(world.paysSent(id)).toBe(0);
  });

  it('at or below the threshold one approval pays, as before', () => {
    const world = new payouts.PayoutWorld(FOUR_EYES);
    const id = payouts.uuid();
    world.registered(id, 10_000);
    world.apply(id, payouts.command(approveAs(id, 'alice', 'operator')));
    expect(world.paysSent(id)).toBe(1);
  });

  it("an endpoint's own threshold overrides the default", () => {
    const amount = { minor: 20_000, currency: 'EUR' };
    const limits = { fourEyesAboveMinor: 50_000 };
    expect(approvalStep({ amount }, { approvedBy: 'a' }, limits)).toEqual({ kind: 'approve' });
    expect(
      approvalStep({ amount: { ...amount, minor: 50_001 } }, { approvedBy: 'a' }, limits).kind,
    ).toBe('record');
    expect(approvalStep({ amount }, { approvedBy: 'a' }, {})).toEqual({ kind: 'approve' });
  });
});
