import { captureCommand, returnCommand, saleCommand } from '@payments/contracts/testing';
import {
  acceptedResult,
  answer,
  approvedSale,
  authorized,
  command,
  eur,
  givenInputs,
} from '../../../../test/kits/card-payment.kit';

describe('return', () => {
  it('partial returns of a sale, cumulative, never above what was captured', () => {
    const o = approvedSale()
      .when(command(returnCommand({ amount: eur(3_000), comment: 'one item back' })))
      .then([{ type: 'operation-requested', operation: 'return', amount: eur(3_000) }])
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: expect.objectContaining({
            operation: 'return',
            gatewayOrderId: 'gw-777',
            amount: eur(3_000),
            comment: 'one item back',
          }),
        },
      ]);
    expect(o.after.status).toBe('approved');

    const after30 = approvedSale()
      .and(command(returnCommand({ amount: eur(3_000) })))
      .and(acceptedResult());
    after30
      .when(answer('approved', { transactionType: 'reversal' }))
      .then([
        {
          type: 'returned',
          amount: eur(3_000),
          totalReturned: eur(3_000),
          remainingBalance: eur(7_000),
          holdReleased: false,
        },
      ])
      .thenState({ status: 'partially-returned', returned: 3_000 });

    const partially = after30.and(answer('approved'));
    partially
      .when(command(returnCommand({ amount: eur(7_001) })))
      .thenRejected('AMOUNT_EXCEEDS_CAPTURED');
    const full = partially
      .and(command(returnCommand()))
      .and(acceptedResult())
      .and(answer('approved'));
    expect(full.state).toMatchObject({ status: 'returned', returned: 10_000 });
    full.when(command(returnCommand({ amount: eur(1) }))).thenRejected('INVALID_STATE');
  });

  it('full return without amount returns the remaining balance', () => {
    approvedSale()
      .when(command(returnCommand()))
      .then([{ type: 'operation-requested', operation: 'return', amount: eur(10_000) }]);
  });

  it('on an uncaptured preauth a return releases the whole hold', () => {
    authorized()
      .and(command(returnCommand()))
      .and(acceptedResult())
      .when(answer('approved'))
      .then([
        { type: 'returned', amount: eur(10_000), holdReleased: true, remainingBalance: eur(0) },
      ])
      .thenEffects([
        { type: 'cancel-timer', timer: 'status-poll' },
        { type: 'cancel-timer', timer: 'unknown-alert' },
        { type: 'cancel-timer', timer: 'hold-expiry' },
      ])
      .thenState({ status: 'returned', holdReleased: true, captured: 0 });
    authorized()
      .when(command(returnCommand({ amount: eur(100) })))
      .thenRejected('PARTIAL_HOLD_RELEASE_NOT_SUPPORTED');
  });

  it('on a partially captured preauth, returns are bounded by the captured amount', () => {
    const captured40 = authorized()
      .and(command(captureCommand({ amount: eur(4_000) })))
      .and(acceptedResult())
      .and(answer('approved'));
    captured40
      .when(command(returnCommand({ amount: eur(4_001) })))
      .thenRejected('AMOUNT_EXCEEDS_CAPTURED');
    captured40
      .when(command(returnCommand()))
      .then([{ type: 'operation-requested', amount: eur(4_000) }]);
  });

  it('a declined return changes nothing', () => {
    approvedSale()
      .and(command(returnCommand({ amount: eur(100) })))
      .and(acceptedResult())
      .when(answer('declined'))
      .then([{ type: 'declined', operation: 'return' }])
      .thenState({ status: 'approved', returned: 0 });
  });

  it.each([
    [
      'before the sale has an outcome',
      () => givenInputs(command(saleCommand()), acceptedResult()),
      'INVALID_STATE',
    ],
    [
      'after a decline',
      () => givenInputs(command(saleCommand()), answer('declined')),
      'INVALID_STATE',
    ],
    ['on an unknown payment', () => givenInputs(), 'PAYMENT_NOT_FOUND'],
    [
      'while another return is in flight',
      () => approvedSale().and(command(returnCommand({ amount: eur(1) }))),
      'OPERATION_IN_PROGRESS',
    ],
  ] as const)('rejected %s', (_name, scenario, code) => {
    scenario().when(command(returnCommand())).thenRejected(code);
  });

  it('zero and wrong-currency returns are rejected', () => {
    approvedSale()
      .when(command(returnCommand({ amount: eur(0) })))
      .thenRejected('INVALID_AMOUNT');
    approvedSale()
      .when(command(returnCommand({ amount: { minor: 1, currency: 'USD' } })))
      .thenRejected('CURRENCY_MISMATCH');
  });
});
