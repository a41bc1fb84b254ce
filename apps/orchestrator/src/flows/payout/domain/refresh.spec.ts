import * as payouts from '../../../../test/kits/payout.kit';
import type { PayoutDecision } from './model';

/** The status query a decision asks for (the only effect of a refresh). */
function asked(decision: PayoutDecision) {
  expect(decision).toMatchObject({ outcome: 'accepted', events: [] });
  expect(decision.effects).toHaveLength(1);
  const [effect] = decision.effects;
  if (effect?.type !== 'send-gateway-request' || effect.request.operation !== 'status')
    throw new Error(`not a status query: ${JSON.stringify(effect)}`);
  return effect.request;
}

describe("refresh-payout-status (an operator's refresh-status / resolve-unknown): asks the gateway now, its answer decides", () => {
  it.each([
    ['payout', (id: string) => payouts.oneStepPayout(id, 4_100, 'payout')],
    ['payout-v4', (id: string) => payouts.oneStepPayout(id, 4_100, 'payout-v4')],
    ['payout-form', (id: string) => payouts.payoutForm(id, 4_100)],
  ] as const)(
    'a one-step %s left unknown: a status query about it, no event; the approved reply pays it out once',
    (operation, opening) => {
      const world = new payouts.PayoutWorld();
      const id = payouts.uuid();
      world.apply(id, payouts.command(opening(id)));
      world.apply(id, (s) => payouts.sendResult(s, { kind: 'unknown', reason: 'timeout' }));
      const state = world.state(id);
      const inFlight = state.status === 'initial' ? undefined : state.inFlight;
      const request = asked(world.apply(id, payouts.command(payouts.refreshPayout(id))));
      expect(request).toMatchObject({
        paymentId: id,
        clientOrderId: id,
        subjectRequestId: inFlight?.requestId,
        subjectOperation: operation,
      });
      // Asking changes nothing: still unknown until the gateway answers.
      expect(world.state(id)).toMatchObject({ inFlight: { stage: 'outcome-unknown' } });
      world.apply(id, (s) =>
        payouts.statusReply(s, { status: 'approved', gatewayOrderId: 'G-9' }, [operation]),
      );
      expect(world.types(id).filter((t) => t === 'paid-out')).toHaveLength(1);
      expect(world.sent.filter((r) => r.payoutId === id)).toHaveLength(1);
    },
  );

  it('a payout-check left unknown, then a payout-pay left unknown: each asked about by its own request', () => {
    const { world, id } = payouts.opened((id) => payouts.payoutCheck(id, 5_000));
    world.apply(id, (s) => payouts.sendResult(s, { kind: 'unknown', reason: 'timeout' }));
    expect(asked(world.apply(id, payouts.command(payouts.refreshPayout(id))))).toMatchObject({
      subjectOperation: 'payout-check',
    });
    world.apply(id, (s) =>
      payouts.statusReply(s, { status: 'approved', gatewayOrderId: 'G-2' }, ['payout-check']),
    );
    expect(world.state(id).status).toBe('registered');
    // Registered, awaiting approval: nothing in flight to ask about.
    expect(world.apply(id, payouts.command(payouts.refreshPayout(id)))).toMatchObject({
      outcome: 'rejected',
      rejection: { code: 'NOTHING_TO_REFRESH' },
    });
    world.apply(id, payouts.command(payouts.approve(id)));
    world.apply(id, (s) => payouts.sendResult(s, { kind: 'unknown', reason: 'timeout' }));
    const request = asked(world.apply(id, payouts.command(payouts.refreshPayout(id))));
    expect(request).toMatchObject({ subjectOperation: 'payout-pay', gatewayOrderId: 'G-2' });
    world.apply(id, (s) => payouts.statusReply(s, { status: 'declined' }, ['payout-pay']));
    expect(world.state(id).status).toBe('declined');
    expect(world.types(id)).not.toContain('paid-out');
  });

  it('refused for a payout that does not exist or belongs to another endpoint', () => {
    const world = new payouts.PayoutWorld();
    const id = payouts.uuid();
    expect(world.apply(id, payouts.command(payouts.refreshPayout(id)))).toMatchObject({
      rejection: { code: 'PAYOUT_NOT_FOUND' },
    });
    world.apply(id, payouts.command(payouts.oneStepPayout(id)));
    expect(world.apply(id, payouts.command(payouts.refreshPayout(id, '9999')))).toMatchObject({
      rejection: { code: 'MERCHANT_MISMATCH' },
    });
  });
});
