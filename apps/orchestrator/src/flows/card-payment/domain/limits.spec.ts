/** Per-endpoint limits, checked before the gateway. */
import { preauthCommand, saleCommand } from '@payments/contracts/testing';
import * as payments from '../../../../test/kits/card-payment.kit';
import { DEFAULT_POLICY, type PaymentPolicy } from './decision';

const withLimits = (limits: PaymentPolicy['limits']): PaymentPolicy => ({
  ...DEFAULT_POLICY,
  limits,
});

describe('limits', () => {
  it('refuses without configuration a sale above 100,000,000 minor units (99,999,999,999 was charged)', () => {
    payments
      .givenInputs()
      .when(payments.command(saleCommand({ amount: payments.eur(99_999_999_999) })))
      .thenRejected('AMOUNT_ABOVE_MAXIMUM');
    payments
      .givenInputs()
      .when(payments.command(saleCommand({ amount: payments.eur(100_000_000) })))
      .then([{ type: 'operation-requested', operation: 'sale' }]);
  });

  it("applies the endpoint's minimum, maximum and currencies, over the default field by field", () => {
    const policy = withLimits({
      default: { maxMinor: 50_000, currencies: ['EUR', 'USD'] },
      endpoints: { '1113': { minMinor: 100, currencies: ['USD'] } },
    });
    const sale = (endpointId: string, amount: { minor: number; currency: string }) =>
      payments
        .givenInputs()
        .when(
          payments.command(saleCommand({ merchant: { endpointId }, amount })),
          undefined,
          policy,
        );
    sale('1113', payments.eur(1_000)).thenRejected('CURRENCY_NOT_ALLOWED');
    sale('1113', { minor: 99, currency: 'USD' }).thenRejected('AMOUNT_BELOW_MINIMUM');
    sale('1113', { minor: 50_001, currency: 'USD' }).thenRejected('AMOUNT_ABOVE_MAXIMUM');
    sale('1113', { minor: 50_000, currency: 'USD' }).then([{ type: 'operation-requested' }]);
    sale('9999', payments.eur(99)).then([{ type: 'operation-requested' }]);
    sale('9999', { minor: 1_000, currency: 'JPY' }).thenRejected('CURRENCY_NOT_ALLOWED');
    payments
      .givenInputs()
      .when(
        payments.command(
          preauthCommand({ merchant: { endpointId: '9999' }, amount: payments.eur(50_001) }),
        ),
        undefined,
        policy,
      )
      .thenRejected('AMOUNT_ABOVE_MAXIMUM');
  });
});
