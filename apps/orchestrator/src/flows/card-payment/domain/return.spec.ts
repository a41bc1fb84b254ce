import { captureCommand, returnCommand, saleCommand } from '@payments/contracts/testing';
import * as payments from '../../../../test/kits/card-payment.kit';

describe('return', () => {
  it('partial returns of a sale, cumulative, never above what was captured', () => {
    const o = payments
      .approvedSale()
      .when(
        payments.command(returnCommand({ amount: payments.eur(3_000), comment: 'one item back' })),
      )
      .then([{ type: 'operation-requested', operation: 'return', amount: payments.eur(3_000) }])
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: expect.objectContaining({
            operation: 'return',
            gatewayOrderId: 'gw-777',
            amount: payments.eur(3_000),
            comment: 'one item back',
          }),
        },
      ]);
    expect(o.after.status).toBe('approved');

    const after30 = payments
      .approvedSale()
      .and(payments.command(returnCommand({ amount: payments.eur(3_000) })))
      .and(payments.acceptedResult());
    after30
      .when(payments.answer('approved', { transactionType: 'reversal' }))
      .then([
        {
          type: 'returned',
          amount: payments.eur(3_000),
          totalReturned: payments.eur(3_000),
          remainingBalance: payments.eur(7_000),
          holdReleased: false,
        },
      ])
      .thenState({ status: 'partially-returned', returned: 3_000 });

    const partially = after30.and(payments.answer('approved'));
    partially
      .when(payments.command(returnCommand({ amount: payments.eur(7_001) })))
      .thenRejected('AMOUNT_EXCEEDS_CAPTURED');
    const full = partially
      .and(payments.command(returnCommand()))
      .and(payments.acceptedResult())
      .and(payments.answer('approved'));
    expect(full.state).toMatchObject({ status: 'returned', returned: 10_000 });
    full
      .when(payments.command(returnCommand({ amount: payments.eur(1) })))
      .thenRejected('INVALID_STATE');
  });

  it('full return without amount returns the remaining balance', () => {
    payments
      .approvedSale()
      .when(payments.command(returnCommand()))
      .then([{ type: 'operation-requested', operation: 'return', amount: payments.eur(10_000) }]);
  });

  it('on an uncaptured preauth a return releases the whole hold', () => {
    payments
      .authorized()
      .and(payments.command(returnCommand()))
      .and(payments.acceptedResult())
      .when(payments.answer('approved'))
      .then([
        {
          type: 'returned',
          amount: payments.eur(10_000),
          holdReleased: true,
          remainingBalance: payments.eur(0),
        },
      ])
      .thenEffects([
        { type: 'cancel-timer', timer: 'status-poll' },
        { type: 'cancel-timer', timer: 'unknown-alert' },
        { type: 'cancel-timer', timer: 'hold-expiry' },
      ])
      .thenState({ status: 'returned', holdReleased: true, captured: 0 });
    payments
      .authorized()
      .when(payments.command(returnCommand({ amount: payments.eur(100) })))
      .thenRejected('PARTIAL_HOLD_RELEASE_NOT_SUPPORTED');
  });

  it('on a partially captured preauth, returns are bounded by the captured amount', () => {
    const captured40 = payments.approvedFollowUp(
      payments.authorized(),
      captureCommand({ amount: payments.eur(4_000) }),
    );
    captured40
      .when(payments.command(returnCommand({ amount: payments.eur(4_001) })))
      .thenRejected('AMOUNT_EXCEEDS_CAPTURED');
    captured40
      .when(payments.command(returnCommand()))
      .then([{ type: 'operation-requested', amount: payments.eur(4_000) }]);
  });

  it('a declined return changes nothing', () => {
    payments
      .approvedSale()
      .and(payments.command(returnCommand({ amount: payments.eur(100) })))
      .and(payments.acceptedResult())
      .when(payments.answer('declined'))
      .then([{ type: 'declined', operation: 'return' }])
      .thenState({ status: 'approved', returned: 0 });
  });

  it.each([
    [
      'before the sale has an outcome',
      () => payments.givenInputs(payments.command(saleCommand()), payments.acceptedResult()),
      'INVALID_STATE',
    ],
    [
      'after a decline',
      () => payments.givenInputs(payments.command(saleCommand()), payments.answer('declined')),
      'INVALID_STATE',
    ],
    ['on an unknown payment', () => payments.givenInputs(), 'PAYMENT_NOT_FOUND'],
    [
      'while another return is in flight',
      () =>
        payments.approvedSale().and(payments.command(returnCommand({ amount: payments.eur(1) }))),
      'OPERATION_IN_PROGRESS',
    ],
  ] as const)('rejected %s', (_name, scenario, code) => {
    scenario().when(payments.command(returnCommand())).thenRejected(code);
  });

  it('zero and wrong-currency returns are rejected', () => {
    payments
      .approvedSale()
      .when(payments.command(returnCommand({ amount: payments.eur(0) })))
      .thenRejected('INVALID_AMOUNT');
    payments
      .approvedSale()
      .when(payments.command(returnCommand({ amount: { minor: 1, currency: 'USD' } })))
      .thenRejected('CURRENCY_MISMATCH');
  });
});
