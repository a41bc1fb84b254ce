import { PLACEHOLDER_SEALED_CARD } from '@payments/contracts/testing';
import * as transfers from '../../../../test/kits/transfer.kit';
import * as payouts from '../../../../test/kits/payout.kit';

describe('transfer (v4 transfer, transfer-by-ref)', () => {
  it.each(['transfer', 'transfer-by-ref'] as const)(
    'given a %s command, its request goes out once with the sealed cards; approved → transferred with the amount',
    (type) => {
      const world = transfers.transferWorld();
      const id = payouts.uuid();
      expect(world.when(transfers.transfer(id, type)).decision.effects).toContainEqual({
        type: 'send-gateway-request',
        held: true,
        request: expect.objectContaining({
          operation: type,
          clientOrderId: id,
          sealedDestinationCard: PLACEHOLDER_SEALED_CARD,
          ...(type === 'transfer' ? { sealedCard: PLACEHOLDER_SEALED_CARD } : {}),
        }),
      });
      world
        .given(transfers.transferSent({ kind: 'accepted', gatewayOrderId: 'T-1' }))
        .when(transfers.transferStatus('approved'))
        .then([
          { type: 'transferred', operation: type, amount: { minor: 1_500, currency: 'EUR' } },
        ]);
      expect(world.types()).toEqual([
        'transfer-requested',
        'transfer-accepted-by-gateway',
        'transferred',
      ]);
      expect(world.sentOperations()).toEqual([type]);
      // A late declined reply cannot move a final transfer back.
      world.when(transfers.transferStatus('declined')).thenIgnored();
    },
  );

  it('an unknown outcome is resolved only by a status reply; the transfer is sent once', () => {
    const world = transfers.transferWorld().given(transfers.transfer(payouts.uuid()));
    world
      .when(transfers.transferSent({ kind: 'unknown', reason: 'timeout' }))
      .then([{ type: 'transfer-outcome-unknown', alert: false }])
      .thenStatus('transferring');
    world.when(transfers.transferStatus('declined')).thenStatus('declined');
    expect(world.sentOperations()).toEqual(['transfer']);
  });

  it("an operator's refresh of an unknown transfer asks the gateway now; the status reply decides, nothing is sent again", () => {
    const world = transfers.transferWorld();
    const id = payouts.uuid();
    world.when(transfers.refreshTransfer(id)).thenRejected('TRANSFER_NOT_FOUND');
    world.given(
      transfers.transfer(id),
      transfers.transferSent({ kind: 'unknown', reason: 'timeout' }),
    );
    const op = world.state();
    const requestId = op.status === 'initial' ? undefined : op.inFlight?.requestId;
    // No event: asking is not news; only the answer is.
    world
      .when(transfers.refreshTransfer(id))
      .then([])
      .thenEffectsEqual([
        {
          type: 'send-gateway-request',
          request: expect.objectContaining({
            operation: 'status',
            paymentId: id,
            clientOrderId: id,
            subjectRequestId: requestId,
            subjectOperation: 'transfer',
          }),
        },
      ]);
    world.when(transfers.refreshTransfer(id, '9999')).thenRejected('MERCHANT_MISMATCH');
    world.given(transfers.transferStatus('approved'));
    expect(world.types()).toEqual([
      'transfer-requested',
      'transfer-outcome-unknown',
      'transferred',
    ]);
    expect(world.sentOperations()).toEqual(['transfer']);
    // Settled: nothing left to ask about.
    world.when(transfers.refreshTransfer(id)).thenRejected('NOTHING_TO_REFRESH');
  });

  it('refuses before the gateway: an amount above the endpoint maximum, the same transfer id again', () => {
    const world = transfers.transferWorld();
    const id = payouts.uuid();
    world.when(transfers.transfer(id, 'transfer', 10 ** 12)).thenRejected('AMOUNT_ABOVE_MAXIMUM');
    world.given(transfers.transfer(id));
    world.when(transfers.transfer(id, 'transfer-by-ref')).thenRejected('TRANSFER_ALREADY_EXISTS');
    expect(world.sentOperations()).toEqual(['transfer']);
  });
});

describe("transfers draw on the endpoint's daily payout budget before their request goes out", () => {
  it('given a transfer, its request is written held with the reservation and published once granted', () => {
    const world = transfers.transferWorld();
    const id = payouts.uuid();
    world.when(transfers.transfer(id, 'transfer', 30_000)).thenEffectsEqual([
      expect.objectContaining({ type: 'send-gateway-request', held: true }),
      {
        type: 'reserve-budget',
        payoutId: id,
        merchant: { endpointId: '1234' },
        amount: { minor: 30_000, currency: 'EUR' },
        day: payouts.T0.slice(0, 10),
      },
    ]);
    expect(world.sentOperations()).toEqual(['transfer']);
    expect(world.types(id)).toEqual(['transfer-requested']);
    expect(world.book.reservedOn()).toBe(30_000);
  });

  it('three transfers of 40,000 under a daily limit of 100,000: two sent, the third refused, nothing sent for it', () => {
    const [a, b, c] = [payouts.uuid(), payouts.uuid(), payouts.uuid()];
    const world = transfers
      .transferWorld()
      .given(
        transfers.transfer(a, 'transfer', 40_000),
        transfers.transfer(b, 'transfer-by-ref', 40_000),
        transfers.transfer(c, 'transfer', 40_000),
      );
    expect(world.sent.map((s) => s.sagaId)).toEqual([a, b]);
    expect(world.types(c)).toEqual(['transfer-requested', 'transfer-refused']);
    expect(world.events(c).at(-1)).toMatchObject({
      type: 'transfer-refused',
      reason: 'DAILY_PAYOUT_LIMIT_EXCEEDED',
      reservedToday: { minor: 80_000, currency: 'EUR' },
      dailyLimit: { minor: 100_000, currency: 'EUR' },
    });
    expect(world.state(c)).toMatchObject({ status: 'refused' });
    expect(world.state(c)).not.toHaveProperty('inFlight');
    expect(world.book.reservedOn()).toBe(80_000);
  });

  it('payouts and transfers share one budget: a transfer after 80,000 of one-step payouts is refused for 30,000', () => {
    const payoutWorld = new payouts.PayoutWorld();
    const world = transfers.transferWorld(payoutWorld.book);
    const [p1, p2, t] = [payouts.uuid(), payouts.uuid(), payouts.uuid()];
    payoutWorld.payout(p1, 40_000);
    payoutWorld.payout(p2, 40_000);
    world.given(transfers.transfer(t, 'transfer', 30_000));
    expect(world.types(t)).toEqual(['transfer-requested', 'transfer-refused']);
    expect(world.sentOperations()).toEqual([]);
    expect(payoutWorld.book.reservedOn()).toBe(80_000);
  });

  it.each([
    ['declined', transfers.transferStatus('declined'), 'transfer-declined'],
    [
      'failed (rejected by the gateway)',
      transfers.transferSent({ kind: 'rejected', code: '300', message: 'no' }),
      'transfer-failed',
    ],
  ] as const)('%s: its reservation is released', (_name, outcome, type) => {
    const id = payouts.uuid();
    const world = transfers.transferWorld().given(transfers.transfer(id, 'transfer', 60_000));
    expect(world.book.reservedOn()).toBe(60_000);
    const ended = world.when(outcome).then([{ type }]);
    expect(ended.decision.effects).toContainEqual({
      type: 'release-budget',
      payoutId: id,
      merchant: { endpointId: '1234' },
      currency: 'EUR',
      day: payouts.T0.slice(0, 10),
    });
    expect(world.book.reservedOn()).toBe(0);
  });

  it('an unknown outcome and a transfer made keep the reservation', () => {
    const world = transfers
      .transferWorld()
      .given(transfers.transfer(payouts.uuid(), 'transfer', 60_000));
    const unknown = world.when(transfers.transferSent({ kind: 'unknown', reason: 'timeout' }));
    expect(unknown.decision.effects).not.toContainEqual(
      expect.objectContaining({ type: 'release-budget' }),
    );
    const done = world.when(transfers.transferStatus('approved')).then([{ type: 'transferred' }]);
    expect(done.decision.effects).not.toContainEqual(
      expect.objectContaining({ type: 'release-budget' }),
    );
    expect(world.book.reservedOn()).toBe(60_000);
  });

  it('a transfer of 30,000 reported transferred as 50,000: 50,000 stays reserved (the larger)', () => {
    const world = transfers
      .transferWorld()
      .given(transfers.transfer(payouts.uuid(), 'transfer', 30_000));
    world
      .when(transfers.transferStatus('approved', { amount: { minor: 50_000, currency: 'EUR' } }))
      .then([{ type: 'transfer-outcome-unknown', concern: 'amount-mismatch' }]);
    expect(world.book.reservedOn()).toBe(50_000);
  });

  it('an amount above the whole daily limit is refused with the command (DAILY_PAYOUT_LIMIT_EXCEEDED)', () => {
    const world = transfers.transferWorld();
    world
      .when(transfers.transfer(payouts.uuid(), 'transfer', 100_001))
      .thenRejected('DAILY_PAYOUT_LIMIT_EXCEEDED');
    expect(world.book.reservedOn()).toBe(0);
  });
});
