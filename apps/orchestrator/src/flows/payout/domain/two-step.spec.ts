import * as payouts from '../../../../test/kits/payout.kit';

describe('two-step payout: payout-check → registered → approval → payout-pay', () => {
  it('given a payout-check, when the gateway approves it, then it is registered awaiting approval until the window closes', () => {
    const { world, id } = payouts.opened(payouts.payoutCheck);
    expect(world.sent).toEqual([
      { payoutId: id, operation: 'payout-check', requestId: expect.any(String) },
    ]);
    world.apply(id, (s) => payouts.sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-1' }));
    const decision = world.apply(id, (s) =>
      payouts.statusReply(s, { status: 'approved', gatewayOrderId: 'G-1' }, ['payout-check']),
    );
    expect(decision.events).toMatchObject([
      {
        type: 'payout-registered',
        gatewayOrderId: 'G-1',
        approvalDeadline: payouts.at(10 * 60_000),
      },
    ]);
    expect(decision.effects).toContainEqual({
      type: 'schedule-timer',
      timer: { kind: 'approval-expiry' },
      at: payouts.at(10 * 60_000),
    });
    expect(world.state(id).status).toBe('registered');
  });

  it('when approved, then the budget is reserved and payout-pay is sent once; approved twice more, refused', () => {
    const world = new payouts.PayoutWorld();
    const id = payouts.uuid();
    world.registered(id, 5_000);
    world.apply(id, payouts.command(payouts.approve(id)));
    expect(world.types(id).slice(-2)).toEqual(['payout-approved', 'payout-requested']);
    expect(world.paysSent(id)).toBe(1);
    const again = world.apply(id, payouts.command(payouts.approve(id)));
    const third = world.apply(id, payouts.command(payouts.approve(id, 'someone-else')));
    expect([again.outcome, third.outcome]).toEqual(['rejected', 'rejected']);
    expect(again.outcome === 'rejected' && again.rejection.code).toBe('PAYOUT_ALREADY_APPROVED');
    expect(world.paysSent(id)).toBe(1);
    expect(world.budgetOfDay()).toMatchObject({ reservedMinor: 5_000 });
  });

  it('when payout-pay is approved by the gateway, then paid-out with the amount; a late callback changes nothing', () => {
    const world = new payouts.PayoutWorld();
    const id = payouts.uuid();
    world.registered(id, 7_000);
    world.apply(id, payouts.command(payouts.approve(id)));
    world.apply(id, (s) => payouts.sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-x' }));
    const paid = world.apply(id, (s) =>
      payouts.statusReply(s, { status: 'approved' }, ['payout-pay']),
    );
    expect(paid.events).toMatchObject([
      { type: 'paid-out', amount: { minor: 7_000, currency: 'EUR' } },
    ]);
    expect(world.state(id).status).toBe('paid');
    expect(
      world.apply(id, (s) => payouts.statusReply(s, { status: 'declined' }, ['payout-pay']))
        .outcome,
    ).toBe('ignored');
  });

  it('a status reply that still names the payout-check does not resolve payout-pay', () => {
    const { world, id } = payouts.registeredPayout();
    world.apply(id, payouts.command(payouts.approve(id)));
    const d = world.apply(id, (s) =>
      payouts.statusReply(s, { status: 'approved' }, ['payout-check']),
    );
    expect(d).toMatchObject({ outcome: 'ignored', reason: 'NOT_ABOUT_THIS_OPERATION' });
    expect(world.state(id).status).toBe('paying');
  });

  it('a verified callback about payout-pay is only a hint: status query now, nothing paid yet', () => {
    const { world, id } = payouts.registeredPayout();
    world.apply(id, payouts.command(payouts.approve(id)));
    const state = world.state(id);
    const d = world.apply(id, {
      kind: 'callback',
      callback: {
        kind: 'callback',
        notificationId: 'n1',
        paymentId: id,
        clientOrderId: id,
        source: 'server-callback',
        report: { status: 'approved', gatewayOrderId: `G-${id.slice(-4)}` },
        receivedAt: payouts.T0,
      },
      about: ['payout-pay'],
    });
    expect(d).toMatchObject({ outcome: 'ignored', reason: 'HINT_ONLY' });
    expect(world.state(id)).toEqual(state);
  });

  it('when payout-pay is declined, then payout-declined and the reservation is released', () => {
    const world = new payouts.PayoutWorld();
    const id = payouts.uuid();
    world.registered(id, 9_000);
    world.apply(id, payouts.command(payouts.approve(id)));
    world.apply(id, (s) =>
      payouts.statusReply(s, { status: 'declined', errorCode: '116' }, ['payout-pay']),
    );
    expect(world.state(id).status).toBe('declined');
    expect(world.budgetOfDay()).toMatchObject({ reservedMinor: 0 });
  });

  it('when rejected, then nothing is paid and a later approval is refused with PAYOUT_REJECTED', () => {
    const { world, id } = payouts.registeredPayout();
    expect(world.apply(id, payouts.command(payouts.reject(id))).events).toMatchObject([
      { type: 'payout-rejected', rejectedBy: 'ops@example.com' },
    ]);
    const late = world.apply(id, payouts.command(payouts.approve(id)));
    expect(late.outcome === 'rejected' && late.rejection.code).toBe('PAYOUT_REJECTED');
    expect(world.paysSent()).toBe(0);
  });

  it('when the approval window passes, then expired; a later approval is refused with PAYOUT_EXPIRED', () => {
    const { world, id } = payouts.registeredPayout();
    const deadline = payouts.at(payouts.POLICY.limits.default.approvalWindowMs ?? 0);
    expect(
      world.apply(id, payouts.timer({ kind: 'approval-expiry' }), deadline).events,
    ).toMatchObject([{ type: 'payout-expired', approvalDeadline: deadline }]);
    const late = world.apply(id, payouts.command(payouts.approve(id)), payouts.at(11 * 60_000));
    expect(late.outcome === 'rejected' && late.rejection.code).toBe('PAYOUT_EXPIRED');
    expect(world.paysSent()).toBe(0);
  });

  it('an approval after the deadline but before the expiry timer fired is refused too', () => {
    const { world, id } = payouts.registeredPayout();
    const late = world.apply(id, payouts.command(payouts.approve(id)), payouts.at(10 * 60_000));
    expect(late.outcome === 'rejected' && late.rejection.code).toBe('PAYOUT_EXPIRED');
  });

  it('an approval before the check has its outcome is refused with PAYOUT_NOT_REGISTERED; of an unknown payout, PAYOUT_NOT_FOUND', () => {
    const { world, id } = payouts.opened(payouts.payoutCheck);
    const early = world.apply(id, payouts.command(payouts.approve(id)));
    expect(early.outcome === 'rejected' && early.rejection.code).toBe('PAYOUT_NOT_REGISTERED');
    const nowhere = payouts.uuid();
    const missing = world.apply(nowhere, payouts.command(payouts.approve(nowhere)));
    expect(missing.outcome === 'rejected' && missing.rejection.code).toBe('PAYOUT_NOT_FOUND');
  });

  it('when the day’s budget is spent, the approval is refused and the payout stays registered', () => {
    const world = new payouts.PayoutWorld();
    const [a, b] = [payouts.uuid(), payouts.uuid()];
    world.registered(a, 60_000).registered(b, 50_000);
    world.apply(a, payouts.command(payouts.approve(a)));
    world.apply(b, payouts.command(payouts.approve(b)));
    expect(world.types(b).slice(-2)).toEqual(['payout-approved', 'payout-approval-refused']);
    expect(world.state(b).status).toBe('registered');
    expect(world.paysSent()).toBe(1);
    // a's pay declines: its reservation returns, b can now be approved.
    world.apply(a, (s) => payouts.statusReply(s, { status: 'declined' }, ['payout-pay']));
    world.apply(b, payouts.command(payouts.approve(b)));
    expect(world.paysSent(b)).toBe(1);
  });

  it('a payout-check above the limits is refused before the gateway', () => {
    const world = new payouts.PayoutWorld();
    const id = payouts.uuid();
    const d = world.apply(id, payouts.command(payouts.payoutCheck(id, 150_000)));
    expect(d.outcome === 'rejected' && d.rejection.code).toBe('DAILY_PAYOUT_LIMIT_EXCEEDED');
    const zero = world.apply(id, payouts.command(payouts.payoutCheck(id, 0)));
    expect(zero.outcome === 'rejected' && zero.rejection.code).toBe('INVALID_AMOUNT');
    expect(world.sent).toEqual([]);
  });

  it('payout-pay unknown → the status keeps describing payout-check after the window → sent once more (a repeated payout-pay is refused) → still none → unknown with the alert, reservation kept', () => {
    const world = new payouts.PayoutWorld();
    const id = payouts.uuid();
    world.registered(id, 4_000);
    const checkSerial = (() => {
      const s = world.state(id);
      return s.status === 'initial' ? undefined : s.requestSerials?.[0];
    })();
    expect(checkSerial).toBeDefined();
    world.apply(id, payouts.command(payouts.approve(id)));
    world.apply(id, (s) => payouts.sendResult(s, { kind: 'unknown', reason: 'timeout' }));
    const noTrace = (answeredAt: string) => (s: Parameters<typeof payouts.statusReply>[0]) =>
      payouts.statusReply(
        s,
        { status: 'approved', requestSerial: checkSerial },
        ['payout-check'],
        answeredAt,
      );
    expect(world.apply(id, noTrace(payouts.at(30_000)), payouts.at(30_000)).outcome).toBe(
      'ignored',
    );
    // Answered inside the window, read after it: not yet evidence.
    expect(world.apply(id, noTrace(payouts.at(59_000)), payouts.at(90_000)).outcome).toBe(
      'ignored',
    );
    const resent = world.apply(id, noTrace(payouts.at(61_000)), payouts.at(61_000));
    expect(resent.events).toMatchObject([{ type: 'payout-operation-resent', attempt: 1000 }]);
    expect(resent.effects).toContainEqual(
      expect.objectContaining({
        type: 'resend-gateway-request',
        attempt: 1000,
        afterNoTrace: true,
      }),
    );
    const alerted = world.apply(id, noTrace(payouts.at(125_000)), payouts.at(125_000));
    expect(alerted.events).toMatchObject([
      { type: 'payout-outcome-unknown', alert: true, concern: 'no-trace' },
    ]);
    expect(world.state(id).status).toBe('paying');
    // It may have paid: the day's budget keeps it until a person or reconciliation decides.
    expect(world.budgetOfDay()).toMatchObject({ reservedMinor: 4_000 });
    // A slow gateway's payout-pay shows up after all: paid out, once.
    world.apply(
      id,
      (s) =>
        payouts.statusReply(s, { status: 'approved', requestSerial: 'sn-pay' }, ['payout-pay']),
      payouts.at(200_000),
    );
    expect(world.types(id).filter((t) => t === 'paid-out')).toHaveLength(1);
  });
});
