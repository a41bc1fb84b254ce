import { PAYMENT_ID, saleCommand } from '@payments/contracts/testing';
import * as payments from '../../../../test/kits/card-payment.kit';

const sale = saleCommand();
const requested = () => payments.givenInputs(payments.command(sale));
const processing = () => requested().and(payments.acceptedResult());

describe('sale', () => {
  it('SALE → operation-requested and a gateway request with the sealed card, client order id = payment id', () => {
    payments
      .given()
      .when(payments.command(sale))
      .then([
        {
          type: 'operation-requested',
          version: 1,
          paymentId: PAYMENT_ID,
          commandId: sale.commandId,
          operation: 'sale',
          amount: { minor: 10_000, currency: 'EUR' },
          clientOrderId: PAYMENT_ID,
          merchant: sale.merchant,
        },
      ])
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: expect.objectContaining({
            operation: 'sale',
            attempt: 1,
            clientOrderId: PAYMENT_ID,
            sealedCard: sale.sealedCard,
          }),
        },
      ])
      .thenState({ status: 'requested', kind: 'sale', currency: 'EUR' });
  });

  it('the request id in the event is the one sent', () => {
    const o = payments.given().when(payments.command(sale));
    const effect = o.decision.effects[0];
    expect(effect?.type === 'send-gateway-request' && effect.request.requestId).toBe(
      o.after.inFlight?.requestId,
    );
  });

  it('a second sale for the same payment is rejected, as a versioned command-rejected event', () => {
    requested()
      .when(payments.command(saleCommand()))
      .thenRejected('PAYMENT_ALREADY_EXISTS')
      .thenState({ status: 'requested', version: 2 });
  });

  it('a zero-amount sale is rejected (account verification is its own flow)', () => {
    payments
      .given()
      .when(payments.command(saleCommand({ amount: { minor: 0, currency: 'EUR' } })))
      .thenRejected('INVALID_AMOUNT');
  });

  it('accepted by the gateway → processing, first status poll in 3 s', () => {
    requested()
      .when(payments.acceptedResult('gw-1'))
      .then([
        {
          type: 'accepted-by-gateway',
          version: 2,
          operation: 'sale',
          gatewayOrderId: 'gw-1',
          commandId: sale.commandId,
        },
      ])
      .thenEffects([
        {
          type: 'schedule-timer',
          timer: { kind: 'status-poll', attempt: 1 },
          at: payments.at(3000),
        },
      ])
      .thenState({ status: 'processing', gatewayOrderId: 'gw-1' });
  });

  it('3-D Secure: processing with redirect-to → action-required, announced once', () => {
    const report = { status: 'processing', redirectUrl: 'https://acs.example/challenge' } as const;
    const o = processing()
      .when(payments.statusReply(report))
      .then([
        {
          type: 'action-required',
          action: { kind: 'redirect', url: 'https://acs.example/challenge' },
        },
      ])
      .thenState({ status: 'action-required' });
    payments
      .given(...processing().events, ...o.decision.events)
      .when(payments.statusReply(report))
      .thenIgnored('NO_NEWS');
  });

  it('3-D Secure: processing with html → action-required (html)', () => {
    processing()
      .when(payments.statusReply({ status: 'processing', html: '<form>…</form>' }))
      .then([{ type: 'action-required', action: { kind: 'html', html: '<form>…</form>' } }]);
  });

  it('approved callback → approved with card summary, timers cancelled', () => {
    processing()
      .when(
        payments.callback('approved', {
          approvalCode: '242805',
          card: { bin: '444444', lastFour: '4448', brand: 'VISA' },
        }),
      )
      .then([
        {
          type: 'approved',
          amount: { minor: 10_000, currency: 'EUR' },
          approvalCode: '242805',
          card: { bin: '444444', lastFour: '4448', brand: 'VISA' },
        },
      ])
      .thenEffects(payments.cancelled('status-poll', 'unknown-alert'))
      .thenState({ status: 'approved', authorized: 10_000, captured: 10_000, inFlight: undefined });
  });

  it.each([
    ['declined', { type: 'declined', code: '3', message: 'issuer said no' }, 'declined'],
    ['error', { type: 'failed', reason: 'error' }, 'failed'],
    ['filtered', { type: 'failed', reason: 'filtered' }, 'failed'],
  ] as const)('%s status → %j', (status, event, finalStatus) => {
    processing()
      .when(payments.callback(status, { errorCode: '3', errorMessage: 'issuer said no' }))
      .then([event])
      .thenState({ status: finalStatus });
  });

  it('the gateway refusing the request (validation error) → failed(rejected), nothing charged', () => {
    requested()
      .when(payments.result({ kind: 'rejected', code: '1', message: 'bad zip' }))
      .then([{ type: 'failed', reason: 'rejected', code: '1', message: 'bad zip' }])
      .thenState({ status: 'failed' });
  });

  it('not sent → resend the SAME request later, no event', () => {
    const o = requested().when(payments.result({ kind: 'not-sent', reason: 'breaker open' }, 1));
    o.thenIgnored().thenEffects([
      {
        type: 'resend-gateway-request',
        requestId: o.before.inFlight!.requestId,
        attempt: 2,
        notBefore: payments.at(1000),
      },
    ]);
  });

  it('not sent on the last allowed attempt → failed(not-sent)', () => {
    requested()
      .when(payments.result({ kind: 'not-sent', reason: 'breaker open' }, 5))
      .then([{ type: 'failed', reason: 'not-sent' }])
      .thenState({ status: 'failed' });
  });

  it('a callback overtaking the send result is applied; the late result is then ignored', () => {
    const s = requested().and(payments.callback('approved'));
    expect(s.state.status).toBe('approved');
    s.when(payments.acceptedResult()).thenIgnored('NO_OPERATION_IN_FLIGHT');
  });

  it('a processing callback before the send result starts polling; the late result is a duplicate', () => {
    const o = requested()
      .when(payments.callback('processing'))
      .then([{ type: 'accepted-by-gateway' }]);
    o.thenEffects([{ type: 'schedule-timer', timer: { kind: 'status-poll' } }]);
    payments
      .given(...requested().events, ...o.decision.events)
      .when(payments.acceptedResult())
      .thenIgnored('DUPLICATE_RESULT');
  });

  it('final is never moved backwards: declined after approved is ignored', () => {
    processing()
      .and(payments.callback('approved'))
      .when(payments.callback('declined'))
      .thenIgnored('NO_OPERATION_IN_FLIGHT')
      .thenState({ status: 'approved' });
  });

  it('a callback for another order is ignored', () => {
    processing()
      .when((s) => {
        const input = payments.callback('approved')(s);
        return input.kind === 'callback'
          ? { ...input, callback: { ...input.callback, clientOrderId: 'someone-else' } }
          : input;
      })
      .thenIgnored('UNKNOWN_ORDER');
  });
});

describe('the gateway names another amount than was asked for', () => {
  // The sale asks for saleCommand()'s amount; the gateway's answer is what moved.
  const asked = sale.amount;

  it('a status reply of another amount or currency settles nothing: unknown with the alert', () => {
    for (const reported of [
      { minor: asked.minor - 1, currency: asked.currency },
      { minor: asked.minor, currency: asked.currency === 'USD' ? 'EUR' : 'USD' },
    ]) {
      const reply = payments.statusReply({
        status: 'approved',
        transactionType: 'sale',
        amount: reported,
      });
      const mismatch = processing().when(reply);
      mismatch
        .then([
          {
            type: 'outcome-unknown',
            operation: 'sale',
            alert: true,
            concern: 'amount-mismatch',
            reportedAmount: reported,
          },
        ])
        .thenEffects(payments.cancelled('status-poll', 'unknown-alert'))
        .thenState({ status: 'outcome-unknown' });
      expect(mismatch.after.captured).toBe(0);
      // The same answer again raises nothing new.
      processing().and(reply).when(reply).thenIgnored('NO_NEWS');
    }
  });

  it('a verified callback naming another amount (the control does not cover it) only brings the status query forward', () => {
    processing()
      .when(
        payments.callback('approved', { amount: { minor: 1, currency: asked.currency } }),
        payments.at(5_000),
      )
      .thenIgnored('HINT_ONLY')
      .thenEffects([
        { type: 'schedule-timer', timer: { kind: 'status-poll' }, at: payments.at(5_000) },
      ]);
  });

  it('the asked amount settles it', () => {
    processing()
      .when(payments.callback('approved', { amount: asked }))
      .then([{ type: 'approved', amount: asked }]);
    processing()
      .when(payments.statusReply({ status: 'approved', transactionType: 'sale', amount: asked }))
      .then([{ type: 'approved', amount: asked }]);
  });

  describe('an amount we cannot read, or none where the answer names it, is never the amount asked for', () => {
    const unreadable = [
      { amount: 'eur', currency: 'EUR' },
      { amount: '7,000.00', currency: asked.currency },
      { amount: '70.005', currency: 'USD' },
      { amount: '70.00' },
    ];

    it.each(unreadable)(
      'a status reply approving with the unreadable amount %j: unknown with the amount-mismatch alert',
      (unreadableAmount) => {
        const mismatch = processing().when(
          payments.statusReply({
            status: 'approved',
            transactionType: 'sale',
            amount: undefined,
            unreadableAmount,
          }),
        );
        mismatch
          .then([{ type: 'outcome-unknown', alert: true, concern: 'amount-mismatch' }])
          .thenState({ status: 'outcome-unknown' });
        expect(mismatch.decision.events[0]).not.toHaveProperty('reportedAmount');
        expect(mismatch.after.captured).toBe(0);
      },
    );

    it('a status reply approving with no amount at all (status replies name it): the same alert', () => {
      processing()
        .when(
          payments.statusReply({ status: 'approved', transactionType: 'sale', amount: undefined }),
        )
        .then([{ type: 'outcome-unknown', alert: true, concern: 'amount-mismatch' }])
        .thenState({ status: 'outcome-unknown' });
    });

    it.each([...unreadable.map((u) => ({ unreadableAmount: u })), {}])(
      'a verified callback approving with %j and no amount only brings the status query forward',
      (over) => {
        processing()
          .when(payments.callback('approved', { amount: undefined, ...over }), payments.at(5_000))
          .thenIgnored('HINT_ONLY')
          .thenEffects([
            { type: 'schedule-timer', timer: { kind: 'status-poll' }, at: payments.at(5_000) },
          ]);
      },
    );

    it("a send's own synchronous reply names no amount (async-response): its approval settles it", () => {
      requested()
        .when(
          payments.result({
            kind: 'accepted',
            gatewayOrderId: 'gw-777',
            report: { status: 'approved', gatewayOrderId: 'gw-777' },
          }),
        )
        .then([{ type: 'accepted-by-gateway' }, { type: 'approved', amount: asked }]);
    });

    it('a declined answer with an unreadable amount is declined (no money to compare)', () => {
      processing()
        .when(
          payments.callback('declined', { amount: undefined, unreadableAmount: { amount: 'x' } }),
        )
        .then([{ type: 'declined' }]);
    });
  });
});
