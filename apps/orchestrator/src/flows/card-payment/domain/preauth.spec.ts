import {
  captureCommand,
  preauthCommand,
  returnCommand,
  saleCommand,
  voidCommand,
} from '@payments/contracts/testing';
import * as payments from '../../../../test/kits/card-payment.kit';

describe('preauth', () => {
  it('approved preauth → authorized, hold-expiry timer scheduled', () => {
    payments
      .givenInputs(payments.command(preauthCommand()), payments.acceptedResult())
      .when(payments.answer('approved'))
      .then([{ type: 'authorized', amount: payments.eur(10_000) }])
      .thenState({ status: 'authorized', authorized: 10_000, captured: 0 });
  });
});

describe('capture', () => {
  it('full capture (no amount) → request for the remaining authorization; success → captured', () => {
    const o = payments
      .authorized()
      .when(payments.command(captureCommand()))
      .then([{ type: 'operation-requested', operation: 'capture', amount: payments.eur(10_000) }])
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: expect.objectContaining({
            operation: 'capture',
            gatewayOrderId: 'gw-777',
            amount: payments.eur(10_000),
          }),
        },
      ])
      .thenState({ status: 'authorized' });
    expect(o.after.inFlight?.operation).toBe('capture');
    payments
      .authorized()
      .and(payments.command(captureCommand()))
      .and(payments.acceptedResult())
      .when(payments.answer('approved', { transactionType: 'capture' }))
      .then([
        {
          type: 'captured',
          amount: payments.eur(10_000),
          totalCaptured: payments.eur(10_000),
          remainingAuthorized: payments.eur(0),
        },
      ])
      .thenEffects(payments.cancelled('status-poll', 'unknown-alert', 'hold-expiry'))
      .thenState({ status: 'captured', captured: 10_000 });
  });

  it('a partial capture settles its amount and releases the rest of the hold; no second capture', () => {
    // The gateway (and the sandbox) captures an authorization once.
    payments
      .authorized()
      .when(payments.command(captureCommand({ amount: payments.eur(10_001) })))
      .thenRejected('AMOUNT_EXCEEDS_AUTHORIZED');
    const capturing = payments
      .authorized()
      .and(payments.command(captureCommand({ amount: payments.eur(4_000) })))
      .and(payments.acceptedResult());
    const after40 = capturing.and(payments.answer('approved'));
    capturing
      .when(payments.answer('approved'))
      .then([
        {
          type: 'captured',
          amount: payments.eur(4_000),
          totalCaptured: payments.eur(4_000),
          remainingAuthorized: payments.eur(0),
          released: payments.eur(6_000),
        },
      ])
      .thenEffects(payments.cancelled('status-poll', 'unknown-alert', 'hold-expiry'));
    expect(after40.state).toMatchObject({ status: 'captured', captured: 4_000 });
    after40
      .when(payments.command(captureCommand({ amount: payments.eur(6_000) })))
      .thenRejected('INVALID_STATE');
    after40.when(payments.command(captureCommand())).thenRejected('INVALID_STATE');
  });

  it('capture declined → the authorization stands and can be captured again', () => {
    const declined = payments
      .authorized()
      .and(payments.command(captureCommand()))
      .and(payments.acceptedResult());
    declined
      .when(payments.answer('declined'))
      .then([{ type: 'declined', operation: 'capture' }])
      .thenState({ status: 'authorized', inFlight: undefined });
    declined
      .and(payments.answer('declined'))
      .when(payments.command(captureCommand()))
      .then([{ type: 'operation-requested', operation: 'capture' }]);
  });

  it.each([
    ['on an unknown payment', () => payments.givenInputs(), captureCommand(), 'PAYMENT_NOT_FOUND'],
    [
      'on a sale',
      () => payments.givenInputs(payments.command(saleCommand()), payments.answer('approved')),
      captureCommand(),
      'NOT_A_PREAUTH',
    ],
    [
      'before authorization',
      () => payments.givenInputs(payments.command(preauthCommand()), payments.acceptedResult()),
      captureCommand(),
      'INVALID_STATE',
    ],
    [
      'while a capture is in flight',
      () =>
        payments.authorized().and(payments.command(captureCommand({ amount: payments.eur(1) }))),
      captureCommand(),
      'OPERATION_IN_PROGRESS',
    ],
    [
      'in another currency',
      payments.authorized,
      captureCommand({ amount: { minor: 1, currency: 'USD' } }),
      'CURRENCY_MISMATCH',
    ],
    [
      'from another endpoint',
      payments.authorized,
      captureCommand({ merchant: { endpointId: '999' } }),
      'MERCHANT_MISMATCH',
    ],
    [
      'after a void',
      () => payments.approvedFollowUp(payments.authorized(), voidCommand()),
      captureCommand(),
      'INVALID_STATE',
    ],
    [
      'after a decline',
      () => payments.givenInputs(payments.command(preauthCommand()), payments.answer('declined')),
      captureCommand(),
      'INVALID_STATE',
    ],
  ] as const)('rejected %s', (_name, scenario, cmd, code) => {
    scenario().when(payments.command(cmd)).thenRejected(code);
  });
});

describe('void', () => {
  it('void of an authorization → whole-amount void request without amount; success → voided', () => {
    payments
      .authorized()
      .when(payments.command(voidCommand({ comment: 'customer cancelled' })))
      .then([{ type: 'operation-requested', operation: 'void', amount: payments.eur(10_000) }])
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: expect.not.objectContaining({ amount: expect.anything() }),
        },
      ]);
    payments
      .authorized()
      .and(payments.command(voidCommand()))
      .and(payments.acceptedResult())
      .when(payments.answer('approved', { transactionType: 'void' }))
      .then([{ type: 'voided', amount: payments.eur(10_000) }])
      .thenState({ status: 'voided' });
  });

  it('void of an approved sale or of a capture (before settlement) → voided for the whole charge', () => {
    // The spec: "Void can only be processed for Sale and Capture transactions in the final
    // successful status"; the gateway declines it once settled, and a return is the way then.
    const sale = payments.givenInputs(payments.command(saleCommand()), payments.answer('approved'));
    sale
      .when(payments.command(voidCommand()))
      .then([{ type: 'operation-requested', operation: 'void', amount: payments.eur(10_000) }]);
    const voiding = sale.and(payments.command(voidCommand())).and(payments.acceptedResult());
    voiding
      .when(payments.answer('approved'))
      .then([{ type: 'voided', amount: payments.eur(10_000) }])
      .thenState({ status: 'voided' });
    voiding
      .and(payments.answer('approved'))
      .when(payments.command(returnCommand()))
      .thenRejected('INVALID_STATE');
    voiding
      .when(payments.answer('declined'))
      .then([{ type: 'declined', operation: 'void' }])
      .thenState({ status: 'approved', captured: 10_000 });
    const captured = payments.approvedFollowUp(
      payments.authorized(),
      captureCommand({ amount: payments.eur(4_000) }),
    );
    captured
      .and(payments.command(voidCommand()))
      .and(payments.acceptedResult())
      .when(payments.answer('approved'))
      .then([{ type: 'voided', amount: payments.eur(4_000) }])
      .thenState({ status: 'voided' });
  });

  it('an amount equal to the authorization is a whole void', () => {
    payments
      .authorized()
      .when(payments.command(voidCommand({ amount: payments.eur(10_000) })))
      .then([{ type: 'operation-requested', operation: 'void' }]);
  });

  it.each([
    [
      'partial amount',
      payments.authorized,
      voidCommand({ amount: payments.eur(5_000) }),
      'PARTIAL_VOID_NOT_SUPPORTED',
    ],
    [
      'partial amount of a capture',
      () =>
        payments.approvedFollowUp(
          payments.authorized(),
          captureCommand({ amount: payments.eur(1_000) }),
        ),
      voidCommand({ amount: payments.eur(500) }),
      'PARTIAL_VOID_NOT_SUPPORTED',
    ],
    [
      'on a sale partly returned',
      () =>
        payments
          .givenInputs(payments.command(saleCommand()), payments.answer('approved'))
          .and(payments.command(returnCommand({ amount: payments.eur(1_000) })))
          .and(payments.acceptedResult())
          .and(payments.answer('approved')),
      voidCommand(),
      'INVALID_STATE',
    ],
    [
      'on a declined sale',
      () => payments.givenInputs(payments.command(saleCommand()), payments.answer('declined')),
      voidCommand(),
      'INVALID_STATE',
    ],
    [
      'twice',
      () => payments.approvedFollowUp(payments.authorized(), voidCommand()),
      voidCommand(),
      'INVALID_STATE',
    ],
  ] as const)('rejected: %s', (_name, scenario, cmd, code) => {
    scenario().when(payments.command(cmd)).thenRejected(code);
  });
});

describe('hold expiry', () => {
  const policy = (action: 'void' | 'report') => ({
    maxSendAttempts: 5,
    unknownAlertAfterMs: 3_600_000,
    holdExpiry: { afterMs: 86_400_000, action },
  });

  it('authorization schedules the hold-expiry timer from the policy', () => {
    payments
      .givenInputs(payments.command(preauthCommand()), payments.acceptedResult())
      .when(payments.answer('approved'), payments.at(0), policy('report'))
      .thenEffects([
        { type: 'cancel-timer', timer: 'status-poll' },
        { type: 'cancel-timer', timer: 'unknown-alert' },
        {
          type: 'schedule-timer',
          timer: { kind: 'hold-expiry', action: 'report' },
          at: payments.at(86_400_000),
        },
      ]);
  });

  it('action void → hold-expired and a void request', () => {
    payments
      .authorized()
      .when(payments.timer({ kind: 'hold-expiry', action: 'void' }))
      .then([
        { type: 'hold-expired', action: 'void', amount: payments.eur(10_000) },
        { type: 'operation-requested', operation: 'void' },
      ])
      .thenEffects([
        { type: 'send-gateway-request', request: expect.objectContaining({ operation: 'void' }) },
      ]);
  });

  it('action report → only hold-expired, once', () => {
    const o = payments
      .authorized()
      .when(payments.timer({ kind: 'hold-expiry', action: 'report' }))
      .then([{ type: 'hold-expired', action: 'report' }]);
    expect(o.after.holdExpired).toBe(true);
    payments
      .authorized()
      .and(payments.timer({ kind: 'hold-expiry', action: 'report' }))
      .when(payments.timer({ kind: 'hold-expiry', action: 'report' }))
      .thenIgnored('TIMER_OBSOLETE');
  });

  it('after capture the timer is obsolete', () => {
    payments
      .approvedFollowUp(payments.authorized(), captureCommand())
      .when(payments.timer({ kind: 'hold-expiry', action: 'void' }))
      .thenIgnored('TIMER_OBSOLETE');
  });
});
