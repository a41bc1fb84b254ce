/**
 * A payout's operation settled by a decision of two people (a case, issue 33), by the shared rule
 * (domain/gateway-operation/decided-operation.ts, single-operation.ts's settlementDecision):
 * "not done" releases the day's reservation, "done" keeps it; nothing is sent to the gateway; a
 * later contradicting answer reopens the case.
 */
import type { PayoutInput, PayoutState } from './model';
import * as payouts from '../../../../test/kits/payout.kit';

const CASE_ID = '20000000-0000-4000-8000-00000000ca5e';

const decided =
  (decision: 'done' | 'not-done', amountMinor?: number) =>
  (state: PayoutState): PayoutInput => {
    if (state.status === 'initial') throw new Error('no payout');
    return {
      kind: 'command',
      command: {
        type: 'payout-settle-by-decision',
        commandId: payouts.uuid(),
        payoutId: state.payoutId,
        merchant: state.merchant,
        occurredAt: payouts.T0,
        requestId: state.inFlight?.requestId ?? payouts.uuid(),
        caseId: CASE_ID,
        decision,
        ...(amountMinor === undefined ? {} : { amount: { minor: amountMinor, currency: 'EUR' } }),
        decidedBy: 'alice',
        approvedBy: 'bob',
        reason: 'no trace at the gateway; the acquirer confirms nothing was paid',
      },
    };
  };

describe('a payout settled by decision (a case)', () => {
  it('given an unknown one-step payout holding its reservation, when "not done" is decided, then settled-by-decision, nothing sent, the day\'s budget released', () => {
    const world = new payouts.PayoutWorld();
    const [a, b] = [payouts.uuid(), payouts.uuid()];
    world.payout(a, 70_000);
    world.apply(a, (s) => payouts.sendResult(s, { kind: 'unknown', reason: 'timeout' }));
    expect(world.book.reservedOn()).toBe(70_000);
    const settled = world.apply(a, decided('not-done'));
    expect(settled.events).toMatchObject([
      {
        type: 'payout-settled-by-decision',
        operation: 'payout',
        decision: 'not-done',
        caseId: CASE_ID,
        decidedBy: 'alice',
        approvedBy: 'bob',
      },
    ]);
    expect(settled.effects).toContainEqual(expect.objectContaining({ type: 'release-budget' }));
    expect(settled.effects.map((e) => e.type)).not.toContain('send-gateway-request');
    expect(world.state(a)).toMatchObject({ status: 'failed' });
    expect(world.book.reservedOn()).toBe(0);
    expect(world.sent).toHaveLength(1);
    // The freed amount takes the next payout.
    world.payout(b, 60_000);
    expect(world.state(b).status).toBe('paying');
  });

  it('"done" keeps the reservation and says paid; a later decline reopens the case, once', () => {
    const { world, id } = payouts.opened(payouts.oneStepPayout);
    world.apply(id, (s) => payouts.sendResult(s, { kind: 'unknown', reason: 'timeout' }));
    const requestId = (world.state(id) as { inFlight?: { requestId: string } }).inFlight?.requestId;
    const done = world.apply(id, decided('done', 5_000));
    expect(done.events).toMatchObject([
      { type: 'payout-settled-by-decision', decision: 'done', amount: { minor: 5_000 } },
    ]);
    expect(done.effects).not.toContainEqual(expect.objectContaining({ type: 'release-budget' }));
    expect(world.state(id)).toMatchObject({ status: 'paid' });
    expect(world.book.reservedOn()).toBe(5_000);
    const lateDecline = (s: PayoutState): PayoutInput => {
      const input = payouts.statusReply(s, { status: 'declined', requestSerial: 'sn-x' }, [
        'payout',
      ]);
      return input.kind === 'gateway-result' && input.result.operation === 'status'
        ? { ...input, result: { ...input.result, subjectRequestId: requestId ?? '' } }
        : input;
    };
    const reopened = world.apply(id, lateDecline);
    expect(reopened.events).toMatchObject([
      { type: 'payout-case-reopened', caseId: CASE_ID, answer: 'declined', alert: true },
    ]);
    // Nothing rewritten: still paid by decision, the reservation kept; a second says nothing new.
    expect(world.state(id)).toMatchObject({ status: 'paid' });
    expect(world.apply(id, lateDecline).outcome).toBe('ignored');
  });

  it('refuses a decision while the operation is still processing (its answer will settle it)', () => {
    const { world, id } = payouts.opened(payouts.oneStepPayout);
    world.apply(id, (s) => payouts.sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-1' }));
    const refused = world.apply(id, decided('not-done'));
    expect(refused.outcome === 'rejected' && refused.rejection.code).toBe('CASE_OPERATION_SETTLED');
    expect(world.book.reservedOn()).toBe(5_000);
  });
});
