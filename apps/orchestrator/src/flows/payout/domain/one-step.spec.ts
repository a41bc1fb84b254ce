import {
  approve,
  command,
  oneStepPayout,
  payoutForm,
  PayoutWorld,
  sendResult,
  statusReply,
  uuid,
} from '../../../../test/kits/payout.kit';

describe('one-step payout (v2 payout, v4 payout): sent at once, paid on the gateway answer', () => {
  it.each(['payout', 'payout-v4'] as const)(
    'given a %s command, then its request goes out once; approved by the gateway, then paid-out with the amount',
    (type) => {
      const world = new PayoutWorld();
      const id = uuid();
      world.apply(id, command(oneStepPayout(id, 4_200, type)));
      expect(world.sent).toEqual([
        { payoutId: id, operation: type, requestId: expect.any(String) },
      ]);
      expect(world.state(id)).toMatchObject({ status: 'paying', mode: 'one-step' });
      world.apply(id, (s) => sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-7' }));
      const paid = world.apply(id, (s) =>
        statusReply(s, { status: 'approved', gatewayOrderId: 'G-7' }, [type]),
      );
      expect(paid.events).toMatchObject([
        { type: 'paid-out', amount: { minor: 4_200, currency: 'EUR' }, gatewayOrderId: 'G-7' },
      ]);
      expect(world.types(id)).toEqual([
        'payout-requested',
        'payout-accepted-by-gateway',
        'paid-out',
      ]);
      expect(world.state(id).status).toBe('paid');
    },
  );

  it('declined by the gateway: payout-declined with the code, nothing paid, no budget touched', () => {
    const world = new PayoutWorld();
    const id = uuid();
    world.apply(id, command(oneStepPayout(id)));
    world.apply(id, (s) => sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-8' }));
    const declined = world.apply(id, (s) =>
      statusReply(s, { status: 'declined', errorCode: '116', errorMessage: 'no funds' }, [
        'payout',
      ]),
    );
    expect(declined.events).toMatchObject([
      { type: 'payout-declined', operation: 'payout', code: '116' },
    ]);
    expect(declined.effects).not.toContainEqual(
      expect.objectContaining({ type: 'release-budget' }),
    );
    expect(world.state(id).status).toBe('declined');
  });

  it('an unknown outcome stays unknown until a status reply about it resolves it; paid once', () => {
    const world = new PayoutWorld();
    const id = uuid();
    world.apply(id, command(oneStepPayout(id)));
    const unknown = world.apply(id, (s) => sendResult(s, { kind: 'unknown', reason: 'timeout' }));
    expect(unknown.events).toMatchObject([{ type: 'payout-outcome-unknown', operation: 'payout' }]);
    const paid = world.apply(id, (s) => statusReply(s, { status: 'approved' }, ['payout']));
    // The status reply names the request's serial, kept before the outcome.
    expect(paid.events).toMatchObject([
      { type: 'payout-accepted-by-gateway', serialNumber: expect.any(String) },
      { type: 'paid-out' },
    ]);
    expect(world.sent.filter((r) => r.operation === 'payout')).toHaveLength(1);
  });

  it('an approval of a one-step payout is refused (PAYOUT_NOT_TWO_STEP); nothing else is sent', () => {
    const world = new PayoutWorld();
    const id = uuid();
    world.apply(id, command(oneStepPayout(id)));
    const refused = world.apply(id, command(approve(id)));
    expect(refused.outcome === 'rejected' && refused.rejection.code).toBe('PAYOUT_NOT_TWO_STEP');
    expect(world.sent).toHaveLength(1);
  });

  it('the same payout id again is refused (PAYOUT_ALREADY_EXISTS), as a payout-check would be', () => {
    const world = new PayoutWorld();
    const id = uuid();
    world.apply(id, command(oneStepPayout(id)));
    const again = world.apply(id, command(oneStepPayout(id, 5_000, 'payout-v4')));
    expect(again.outcome === 'rejected' && again.rejection.code).toBe('PAYOUT_ALREADY_EXISTS');
    expect(world.sent).toHaveLength(1);
  });
});

describe('payout form (v2 payout-form): the payee enters the card on the hosted form', () => {
  it('the form URL is published once as payout-action-required; the approved payout is paid-out', () => {
    const world = new PayoutWorld();
    const id = uuid();
    world.apply(id, command(payoutForm(id, 3_100)));
    expect(world.sent).toEqual([
      { payoutId: id, operation: 'payout-form', requestId: expect.any(String) },
    ]);
    const form = 'https://gateway.example/hpp/t0k3n';
    const accepted = world.apply(id, (s) =>
      sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-9', redirectUrl: form }),
    );
    expect(accepted.events).toMatchObject([
      { type: 'payout-accepted-by-gateway', operation: 'payout-form' },
      { type: 'payout-action-required', action: { kind: 'redirect', url: form } },
    ]);
    // Polled while the payee is on the form: the same URL is not announced again.
    const polled = world.apply(id, (s) =>
      statusReply(s, { status: 'processing', redirectUrl: form }, ['payout-form']),
    );
    expect(polled.outcome).toBe('ignored');
    const paid = world.apply(id, (s) => statusReply(s, { status: 'approved' }, ['payout-form']));
    expect(paid.events).toMatchObject([
      { type: 'paid-out', amount: { minor: 3_100, currency: 'EUR' } },
    ]);
    expect(world.types(id)).toEqual([
      'payout-requested',
      'payout-accepted-by-gateway',
      'payout-action-required',
      'paid-out',
    ]);
  });
});

describe('a payout the gateway reports with another amount', () => {
  it('a status reply saying 1 USD never settles a 7,000 EUR payout as paid: unknown with the alert', () => {
    const world = new PayoutWorld();
    const id = uuid();
    world.apply(id, command(oneStepPayout(id, 7_000)));
    world.apply(id, (s) => sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-9' }));
    const decision = world.apply(id, (s) =>
      statusReply(s, { status: 'approved', amount: { minor: 100, currency: 'USD' } }, ['payout']),
    );
    expect(decision.events).toMatchObject([
      {
        type: 'payout-outcome-unknown',
        alert: true,
        concern: 'amount-mismatch',
        reportedAmount: { minor: 100, currency: 'USD' },
      },
    ]);
    expect(world.types(id)).not.toContain('paid-out');
    expect(world.state(id).status).toBe('paying');
    // The gateway's own amount settles it.
    const paid = world.apply(id, (s) =>
      statusReply(s, { status: 'approved', amount: { minor: 7_000, currency: 'EUR' } }, ['payout']),
    );
    expect(paid.events).toMatchObject([{ type: 'paid-out', amount: { minor: 7_000 } }]);
  });
});
