import * as payouts from '../../../../test/kits/payout.kit';

describe('one-step payout (v2 payout, v4 payout): sent at once, paid on the gateway answer', () => {
  it.each(['payout', 'payout-v4'] as const)(
    'given a %s command, then its request goes out once; approved by the gateway, then paid-out with the amount',
    (type) => {
      const { world, id } = payouts.opened((id) => payouts.oneStepPayout(id, 4_200, type));
      expect(world.sent).toEqual([
        { payoutId: id, operation: type, requestId: expect.any(String) },
      ]);
      expect(world.state(id)).toMatchObject({ status: 'paying', mode: 'one-step' });
      world.apply(id, (s) => payouts.sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-7' }));
      const paid = world.apply(id, (s) =>
        payouts.statusReply(s, { status: 'approved', gatewayOrderId: 'G-7' }, [type]),
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

  it('declined by the gateway: payout-declined with the code, nothing paid, its reservation released', () => {
    const { world, id } = payouts.opened(payouts.oneStepPayout);
    expect(world.book.reservedOn()).toBe(5_000);
    world.apply(id, (s) => payouts.sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-8' }));
    const declined = world.apply(id, (s) =>
      payouts.statusReply(s, { status: 'declined', errorCode: '116', errorMessage: 'no funds' }, [
        'payout',
      ]),
    );
    expect(declined.events).toMatchObject([
      { type: 'payout-declined', operation: 'payout', code: '116' },
    ]);
    expect(declined.effects).toContainEqual({
      type: 'release-budget',
      payoutId: id,
      merchant: { endpointId: '1234' },
      currency: 'EUR',
      day: payouts.T0.slice(0, 10),
    });
    expect(world.state(id).status).toBe('declined');
    expect(world.book.reservedOn()).toBe(0);
  });

  it('an unknown outcome stays unknown until a status reply about it resolves it; paid once', () => {
    const { world, id } = payouts.opened(payouts.oneStepPayout);
    const unknown = world.apply(id, (s) =>
      payouts.sendResult(s, { kind: 'unknown', reason: 'timeout' }),
    );
    expect(unknown.events).toMatchObject([{ type: 'payout-outcome-unknown', operation: 'payout' }]);
    const paid = world.apply(id, (s) => payouts.statusReply(s, { status: 'approved' }, ['payout']));
    // The status reply names the request's serial, kept before the outcome.
    expect(paid.events).toMatchObject([
      { type: 'payout-accepted-by-gateway', serialNumber: expect.any(String) },
      { type: 'paid-out' },
    ]);
    expect(world.sent.filter((r) => r.operation === 'payout')).toHaveLength(1);
  });

  it('an approval of a one-step payout is refused (PAYOUT_NOT_TWO_STEP); nothing else is sent', () => {
    const { world, id } = payouts.opened(payouts.oneStepPayout);
    const refused = world.apply(id, payouts.command(payouts.approve(id)));
    expect(refused.outcome === 'rejected' && refused.rejection.code).toBe('PAYOUT_NOT_TWO_STEP');
    expect(world.sent).toHaveLength(1);
  });

  it('the same payout id again is refused (PAYOUT_ALREADY_EXISTS), as a payout-check would be', () => {
    const { world, id } = payouts.opened(payouts.oneStepPayout);
    const again = world.apply(id, payouts.command(payouts.oneStepPayout(id, 5_000, 'payout-v4')));
    expect(again.outcome === 'rejected' && again.rejection.code).toBe('PAYOUT_ALREADY_EXISTS');
    expect(world.sent).toHaveLength(1);
  });
});

describe('payout form (v2 payout-form): the payee enters the card on the hosted form', () => {
  it('the form URL is published once as payout-action-required; the approved payout is paid-out', () => {
    const { world, id } = payouts.opened((id) => payouts.payoutForm(id, 3_100));
    expect(world.sent).toEqual([
      { payoutId: id, operation: 'payout-form', requestId: expect.any(String) },
    ]);
    const form = 'https://gateway.example/hpp/t0k3n';
    const accepted = world.apply(id, (s) =>
      payouts.sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-9', redirectUrl: form }),
    );
    expect(accepted.events).toMatchObject([
      { type: 'payout-accepted-by-gateway', operation: 'payout-form' },
      { type: 'payout-action-required', action: { kind: 'redirect', url: form } },
    ]);
    // Polled while the payee is on the form: the same URL is not announced again.
    const polled = world.apply(id, (s) =>
      payouts.statusReply(s, { status: 'processing', redirectUrl: form }, ['payout-form']),
    );
    expect(polled.outcome).toBe('ignored');
    const paid = world.apply(id, (s) =>
      payouts.statusReply(s, { status: 'approved' }, ['payout-form']),
    );
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

describe('payout form whose reply was lost: the form address never reached us', () => {
  const HOUR = 3_600_000;
  const lost = () => {
    const { world, id } = payouts.opened((id) => payouts.payoutForm(id, 2_700));
    world.apply(id, (s) => payouts.sendResult(s, { kind: 'unknown', reason: 'timeout' }));
    return { world, id };
  };

  it('"the gateway has it" (processing, no address) leaves it unknown; the alert is raised after the window', () => {
    const { world, id } = lost();
    const polled = world.apply(id, (s) =>
      payouts.statusReply(s, { status: 'processing', gatewayOrderId: 'G-4' }, ['payout-form']),
    );
    expect(polled.outcome).toBe('ignored');
    expect(polled.effects).not.toContainEqual({ type: 'cancel-timer', timer: 'unknown-alert' });
    expect(world.state(id)).toMatchObject({ inFlight: { stage: 'outcome-unknown' } });
    const at = new Date(Date.parse(payouts.T0) + HOUR).toISOString();
    const alert = world.apply(
      id,
      (s) =>
        payouts.timer({
          kind: 'unknown-alert',
          requestId: s.status === 'initial' ? '' : (s.inFlight?.requestId ?? ''),
        }),
      at,
    );
    expect(alert.events).toMatchObject([
      { type: 'payout-outcome-unknown', operation: 'payout-form', alert: true },
    ]);
    expect(world.types(id)).toEqual([
      'payout-requested',
      'payout-outcome-unknown',
      'payout-outcome-unknown',
    ]);
  });

  it('a final status still settles it: approved → paid-out once', () => {
    const { world, id } = lost();
    const paid = world.apply(id, (s) =>
      payouts.statusReply(s, { status: 'approved' }, ['payout-form']),
    );
    expect(paid.events.map((e) => e.type)).toEqual(['payout-accepted-by-gateway', 'paid-out']);
  });
});

describe('a payout the gateway reports with another amount', () => {
  it('a status reply saying 1 USD never settles a 7,000 EUR payout as paid: unknown with the alert', () => {
    const { world, id } = payouts.opened((id) => payouts.oneStepPayout(id, 7_000));
    world.apply(id, (s) => payouts.sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-9' }));
    const decision = world.apply(id, (s) =>
      payouts.statusReply(s, { status: 'approved', amount: { minor: 100, currency: 'USD' } }, [
        'payout',
      ]),
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
      payouts.statusReply(s, { status: 'approved', amount: { minor: 7_000, currency: 'EUR' } }, [
        'payout',
      ]),
    );
    expect(paid.events).toMatchObject([{ type: 'paid-out', amount: { minor: 7_000 } }]);
  });
});

describe('a payout paid at a larger amount than asked keeps the larger amount reserved', () => {
  it('4,000 paid as 9,000: 9,000 reserved on the day, so a payout that fits only under 4,000 is refused', () => {
    const world = new payouts.PayoutWorld();
    const [a, b] = [payouts.uuid(), payouts.uuid()];
    world.payout(a, 4_000);
    world.apply(a, (s) => payouts.sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-1' }));
    const mismatch = world.apply(a, (s) =>
      payouts.statusReply(s, { status: 'approved', amount: { minor: 9_000, currency: 'EUR' } }, [
        'payout',
      ]),
    );
    expect(mismatch.events).toMatchObject([
      { type: 'payout-outcome-unknown', concern: 'amount-mismatch' },
    ]);
    expect(world.book.reservedOn()).toBe(9_000);
    // 100,000 a day: 95,000 would fit beside 4,000, not beside the 9,000 the gateway paid.
    world.payout(b, 95_000);
    expect(world.types(b)).toEqual(['payout-requested', 'payout-refused']);
    expect(world.sent.map((r) => r.payoutId)).toEqual([a]);
    // Told again, the larger amount is counted once.
    world.apply(a, (s) =>
      payouts.statusReply(s, { status: 'approved', amount: { minor: 9_000, currency: 'EUR' } }, [
        'payout',
      ]),
    );
    expect(world.book.reservedOn()).toBe(9_000);
  });

  it('paid less (2,000 of 4,000) or in another currency: the requested 4,000 stays reserved', () => {
    for (const reported of [
      { minor: 2_000, currency: 'EUR' },
      { minor: 9_000, currency: 'USD' },
    ]) {
      const world = new payouts.PayoutWorld();
      const id = payouts.uuid();
      world.payout(id, 4_000);
      world.apply(id, (s) => payouts.sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-1' }));
      world.apply(id, (s) =>
        payouts.statusReply(s, { status: 'approved', amount: reported }, ['payout']),
      );
      expect(world.book.reservedOn()).toBe(4_000);
    }
  });
});

describe('one-step payouts and payout forms draw on the daily budget before their request goes out', () => {
  const openers = {
    payout: (id: string, minor: number) => payouts.oneStepPayout(id, minor, 'payout'),
    'payout-v4': (id: string, minor: number) => payouts.oneStepPayout(id, minor, 'payout-v4'),
    'payout-form': (id: string, minor: number) => payouts.payoutForm(id, minor),
  } as const;

  it.each(Object.keys(openers) as Array<keyof typeof openers>)(
    'given a %s command, its request is written held and the amount reserved on the day; published once granted',
    (type) => {
      const world = new payouts.PayoutWorld();
      const id = payouts.uuid();
      const opened = world.apply(id, payouts.command(openers[type](id, 30_000)));
      expect(opened.effects).toEqual([
        {
          type: 'send-gateway-request',
          held: true,
          request: expect.objectContaining({ operation: type, requestId: expect.any(String) }),
        },
        {
          type: 'reserve-budget',
          payoutId: id,
          merchant: { endpointId: '1234' },
          amount: { minor: 30_000, currency: 'EUR' },
          day: payouts.T0.slice(0, 10),
        },
      ]);
      // The granted answer (same transaction) published exactly that request, no event of its own.
      expect(world.sent).toEqual([
        { payoutId: id, operation: type, requestId: expect.any(String) },
      ]);
      expect(world.types(id)).toEqual(['payout-requested']);
      expect(world.book.reservedOn()).toBe(30_000);
    },
  );

  it.each(Object.keys(openers) as Array<keyof typeof openers>)(
    'three %s of 40,000 under a daily limit of 100,000: two sent, the third refused (DAILY_PAYOUT_LIMIT_EXCEEDED), nothing sent for it',
    (type) => {
      const world = new payouts.PayoutWorld();
      const [a, b, c] = [payouts.uuid(), payouts.uuid(), payouts.uuid()];
      world.apply(a, payouts.command(openers[type](a, 40_000)));
      world.apply(b, payouts.command(openers[type](b, 40_000)));
      world.apply(c, payouts.command(openers[type](c, 40_000)));
      expect(world.sent.map((r) => r.payoutId)).toEqual([a, b]);
      expect(world.types(c)).toEqual(['payout-requested', 'payout-refused']);
      expect(world.events(c).at(-1)).toMatchObject({
        type: 'payout-refused',
        reason: 'DAILY_PAYOUT_LIMIT_EXCEEDED',
        message: expect.stringContaining('80000 of 100000 already reserved'),
        reservedToday: { minor: 80_000, currency: 'EUR' },
        dailyLimit: { minor: 100_000, currency: 'EUR' },
      });
      expect(world.state(c)).toMatchObject({ status: 'refused' });
      expect(world.state(c)).not.toHaveProperty('reserved');
      expect(world.state(c)).not.toHaveProperty('inFlight');
      expect(world.book.reservedOn()).toBe(80_000);
      // Final: a refused payout takes no approval and opens no second time.
      const again = world.apply(c, payouts.command(openers[type](c, 1_000)));
      expect(again.outcome === 'rejected' && again.rejection.code).toBe('PAYOUT_ALREADY_EXISTS');
      expect(world.sent).toHaveLength(2);
    },
  );

  it('an amount above the whole daily limit is refused with the command, before anything is reserved', () => {
    const world = new payouts.PayoutWorld();
    const id = payouts.uuid();
    const refused = world.payout(id, 100_001);
    expect(refused.outcome === 'rejected' && refused.rejection.code).toBe(
      'DAILY_PAYOUT_LIMIT_EXCEEDED',
    );
    expect(refused.effects).toEqual([]);
    expect(world.book.reservedOn()).toBe(0);
  });

  it('one-step and two-step payouts share the day: an approval after 80,000 paid one-step is refused for 30,000', () => {
    const world = new payouts.PayoutWorld();
    const [a, b, two] = [payouts.uuid(), payouts.uuid(), payouts.uuid()];
    world.payout(a, 40_000);
    world.payout(b, 40_000, payouts.payoutForm);
    world.registered(two, 30_000);
    world.apply(two, payouts.command(payouts.approve(two)));
    expect(world.types(two).slice(-2)).toEqual(['payout-approved', 'payout-approval-refused']);
    expect(world.paysSent(two)).toBe(0);
    expect(world.book.reservedOn()).toBe(80_000);
  });

  it('failed (the gateway rejected the request): released, and the freed amount takes the next payout', () => {
    const world = new payouts.PayoutWorld();
    const [a, b, c] = [payouts.uuid(), payouts.uuid(), payouts.uuid()];
    world.payout(a, 60_000);
    world.payout(b, 40_000);
    const failed = world.apply(a, (s) =>
      payouts.sendResult(s, { kind: 'rejected', code: '300', message: 'invalid card' }),
    );
    expect(failed.events).toMatchObject([{ type: 'payout-failed', reason: 'rejected' }]);
    expect(failed.effects).toContainEqual(expect.objectContaining({ type: 'release-budget' }));
    expect(world.book.reservedOn()).toBe(40_000);
    world.payout(c, 60_000);
    expect(world.sent.map((r) => r.payoutId)).toEqual([a, b, c]);
  });

  it('an unknown outcome keeps the reservation (it may have paid), and so does paid-out', () => {
    const world = new payouts.PayoutWorld();
    const [a, b] = [payouts.uuid(), payouts.uuid()];
    world.payout(a, 70_000);
    const unknown = world.apply(a, (s) =>
      payouts.sendResult(s, { kind: 'unknown', reason: 'timeout' }),
    );
    expect(unknown.events).toMatchObject([{ type: 'payout-outcome-unknown' }]);
    expect(unknown.effects).not.toContainEqual(expect.objectContaining({ type: 'release-budget' }));
    expect(world.book.reservedOn()).toBe(70_000);
    const paid = world.apply(a, (s) => payouts.statusReply(s, { status: 'approved' }, ['payout']));
    expect(paid.events).toMatchObject([
      { type: 'payout-accepted-by-gateway' },
      { type: 'paid-out' },
    ]);
    expect(paid.effects).not.toContainEqual(expect.objectContaining({ type: 'release-budget' }));
    expect(world.book.reservedOn()).toBe(70_000);
    world.payout(b, 40_000);
    expect(world.state(b).status).toBe('refused');
  });

  it('a budget answer nobody awaits is refused (INVALID_STATE): a paid payout publishes nothing again', () => {
    const { world, id } = payouts.opened((id) => payouts.oneStepPayout(id, 1_000));
    world.apply(id, (s) => payouts.sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-1' }));
    const late = world.apply(id, {
      kind: 'command',
      command: {
        type: 'payout-budget-answer',
        commandId: payouts.uuid(),
        payoutId: id,
        merchant: { endpointId: '1234' },
        occurredAt: payouts.T0,
        budgetId: payouts.uuid(),
        granted: true,
        reservedMinor: 0,
        limit: { minor: 100_000, currency: 'EUR' },
      },
    });
    expect(late.outcome === 'rejected' && late.rejection.code).toBe('INVALID_STATE');
    expect(world.sent).toHaveLength(1);
  });
});
