import {
  captureCommand,
  preauthCommand,
  returnCommand,
  saleCommand,
  voidCommand,
} from '@payments/contracts/testing';
import {
  acceptedResult,
  answer,
  at,
  authorized,
  command,
  eur,
  givenInputs,
  timer,
} from '../../../../test/kits/card-payment.kit';

describe('preauth', () => {
  it('approved preauth → authorized, hold-expiry timer scheduled', () => {
    givenInputs(command(preauthCommand()), acceptedResult())
      .when(answer('approved'))
      .then([{ type: 'authorized', amount: eur(10_000) }])
      .thenState({ status: 'authorized', authorized: 10_000, captured: 0 });
  });
});

describe('capture', () => {
  it('full capture (no amount) → request for the remaining authorization; success → captured', () => {
    const o = authorized()
      .when(command(captureCommand()))
      .then([{ type: 'operation-requested', operation: 'capture', amount: eur(10_000) }])
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: expect.objectContaining({
            operation: 'capture',
            gatewayOrderId: 'gw-777',
            amount: eur(10_000),
          }),
        },
      ])
      .thenState({ status: 'authorized' });
    expect(o.after.inFlight?.operation).toBe('capture');
    authorized()
      .and(command(captureCommand()))
      .and(acceptedResult())
      .when(answer('approved', { transactionType: 'capture' }))
      .then([
        {
          type: 'captured',
          amount: eur(10_000),
          totalCaptured: eur(10_000),
          remainingAuthorized: eur(0),
        },
      ])
      .thenEffects([
        { type: 'cancel-timer', timer: 'status-poll' },
        { type: 'cancel-timer', timer: 'unknown-alert' },
        { type: 'cancel-timer', timer: 'hold-expiry' },
      ])
      .thenState({ status: 'captured', captured: 10_000 });
  });

  it('a partial capture settles its amount and releases the rest of the hold; no second capture', () => {
    // The gateway (and the sandbox) captures an authorization once.
    authorized()
      .when(command(captureCommand({ amount: eur(10_001) })))
      .thenRejected('AMOUNT_EXCEEDS_AUTHORIZED');
    const capturing = authorized()
      .and(command(captureCommand({ amount: eur(4_000) })))
      .and(acceptedResult());
    const after40 = capturing.and(answer('approved'));
    capturing
      .when(answer('approved'))
      .then([
        {
          type: 'captured',
          amount: eur(4_000),
          totalCaptured: eur(4_000),
          remainingAuthorized: eur(0),
          released: eur(6_000),
        },
      ])
      .thenEffects([
        { type: 'cancel-timer', timer: 'status-poll' },
        { type: 'cancel-timer', timer: 'unknown-alert' },
        { type: 'cancel-timer', timer: 'hold-expiry' },
      ]);
    expect(after40.state).toMatchObject({ status: 'captured', captured: 4_000 });
    after40.when(command(captureCommand({ amount: eur(6_000) }))).thenRejected('INVALID_STATE');
    after40.when(command(captureCommand())).thenRejected('INVALID_STATE');
  });

  it('capture declined → the authorization stands and can be captured again', () => {
    const declined = authorized().and(command(captureCommand())).and(acceptedResult());
    declined
      .when(answer('declined'))
      .then([{ type: 'declined', operation: 'capture' }])
      .thenState({ status: 'authorized', inFlight: undefined });
    declined
      .and(answer('declined'))
      .when(command(captureCommand()))
      .then([{ type: 'operation-requested', operation: 'capture' }]);
  });

  it.each([
    ['on an unknown payment', () => givenInputs(), captureCommand(), 'PAYMENT_NOT_FOUND'],
    [
      'on a sale',
      () => givenInputs(command(saleCommand()), answer('approved')),
      captureCommand(),
      'NOT_A_PREAUTH',
    ],
    [
      'before authorization',
      () => givenInputs(command(preauthCommand()), acceptedResult()),
      captureCommand(),
      'INVALID_STATE',
    ],
    [
      'while a capture is in flight',
      () => authorized().and(command(captureCommand({ amount: eur(1) }))),
      captureCommand(),
      'OPERATION_IN_PROGRESS',
    ],
    [
      'in another currency',
      authorized,
      captureCommand({ amount: { minor: 1, currency: 'USD' } }),
      'CURRENCY_MISMATCH',
    ],
    [
      'from another endpoint',
      authorized,
      captureCommand({ merchant: { endpointId: '999' } }),
      'MERCHANT_MISMATCH',
    ],
    [
      'after a void',
      () => authorized().and(command(voidCommand())).and(acceptedResult()).and(answer('approved')),
      captureCommand(),
      'INVALID_STATE',
    ],
    [
      'after a decline',
      () => givenInputs(command(preauthCommand()), answer('declined')),
      captureCommand(),
      'INVALID_STATE',
    ],
  ] as const)('rejected %s', (_name, scenario, cmd, code) => {
    scenario().when(command(cmd)).thenRejected(code);
  });
});

describe('void', () => {
  it('void of an authorization → whole-amount void request without amount; success → voided', () => {
    authorized()
      .when(command(voidCommand({ comment: 'customer cancelled' })))
      .then([{ type: 'operation-requested', operation: 'void', amount: eur(10_000) }])
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: expect.not.objectContaining({ amount: expect.anything() }),
        },
      ]);
    authorized()
      .and(command(voidCommand()))
      .and(acceptedResult())
      .when(answer('approved', { transactionType: 'void' }))
      .then([{ type: 'voided', amount: eur(10_000) }])
      .thenState({ status: 'voided' });
  });

  it('void of an approved sale or of a capture (before settlement) → voided for the whole charge', () => {
    // The spec: "Void can only be processed for Sale and Capture transactions in the final
    // successful status"; the gateway declines it once settled, and a return is the way then.
    const sale = givenInputs(command(saleCommand()), answer('approved'));
    sale
      .when(command(voidCommand()))
      .then([{ type: 'operation-requested', operation: 'void', amount: eur(10_000) }]);
    sale
      .and(command(voidCommand()))
      .and(acceptedResult())
      .when(answer('approved'))
      .then([{ type: 'voided', amount: eur(10_000) }])
      .thenState({ status: 'voided' });
    sale
      .and(command(voidCommand()))
      .and(acceptedResult())
      .and(answer('approved'))
      .when(command(returnCommand()))
      .thenRejected('INVALID_STATE');
    sale
      .and(command(voidCommand()))
      .and(acceptedResult())
      .when(answer('declined'))
      .then([{ type: 'declined', operation: 'void' }])
      .thenState({ status: 'approved', captured: 10_000 });
    const captured = authorized()
      .and(command(captureCommand({ amount: eur(4_000) })))
      .and(acceptedResult())
      .and(answer('approved'));
    captured
      .and(command(voidCommand()))
      .and(acceptedResult())
      .when(answer('approved'))
      .then([{ type: 'voided', amount: eur(4_000) }])
      .thenState({ status: 'voided' });
  });

  it('an amount equal to the authorization is a whole void', () => {
    authorized()
      .when(command(voidCommand({ amount: eur(10_000) })))
      .then([{ type: 'operation-requested', operation: 'void' }]);
  });

  it.each([
    [
      'partial amount',
      authorized,
      voidCommand({ amount: eur(5_000) }),
      'PARTIAL_VOID_NOT_SUPPORTED',
    ],
    [
      'partial amount of a capture',
      () =>
        authorized()
          .and(command(captureCommand({ amount: eur(1_000) })))
          .and(acceptedResult())
          .and(answer('approved')),
      voidCommand({ amount: eur(500) }),
      'PARTIAL_VOID_NOT_SUPPORTED',
    ],
    [
      'on a sale partly returned',
      () =>
        givenInputs(command(saleCommand()), answer('approved'))
          .and(command(returnCommand({ amount: eur(1_000) })))
          .and(acceptedResult())
          .and(answer('approved')),
      voidCommand(),
      'INVALID_STATE',
    ],
    [
      'on a declined sale',
      () => givenInputs(command(saleCommand()), answer('declined')),
      voidCommand(),
      'INVALID_STATE',
    ],
    [
      'twice',
      () => authorized().and(command(voidCommand())).and(acceptedResult()).and(answer('approved')),
      voidCommand(),
      'INVALID_STATE',
    ],
  ] as const)('rejected: %s', (_name, scenario, cmd, code) => {
    scenario().when(command(cmd)).thenRejected(code);
  });
});

describe('hold expiry', () => {
  const policy = (action: 'void' | 'report') => ({
    maxSendAttempts: 5,
    unknownAlertAfterMs: 3_600_000,
    holdExpiry: { afterMs: 86_400_000, action },
  });

  it('authorization schedules the hold-expiry timer from the policy', () => {
    givenInputs(command(preauthCommand()), acceptedResult())
      .when(answer('approved'), at(0), policy('report'))
      .thenEffects([
        { type: 'cancel-timer', timer: 'status-poll' },
        { type: 'cancel-timer', timer: 'unknown-alert' },
        {
          type: 'schedule-timer',
          timer: { kind: 'hold-expiry', action: 'report' },
          at: at(86_400_000),
        },
      ]);
  });

  it('action void → hold-expired and a void request', () => {
    authorized()
      .when(timer({ kind: 'hold-expiry', action: 'void' }))
      .then([
        { type: 'hold-expired', action: 'void', amount: eur(10_000) },
        { type: 'operation-requested', operation: 'void' },
      ])
      .thenEffects([
        { type: 'send-gateway-request', request: expect.objectContaining({ operation: 'void' }) },
      ]);
  });

  it('action report → only hold-expired, once', () => {
    const o = authorized()
      .when(timer({ kind: 'hold-expiry', action: 'report' }))
      .then([{ type: 'hold-expired', action: 'report' }]);
    expect(o.after.holdExpired).toBe(true);
    authorized()
      .and(timer({ kind: 'hold-expiry', action: 'report' }))
      .when(timer({ kind: 'hold-expiry', action: 'report' }))
      .thenIgnored('TIMER_OBSOLETE');
  });

  it('after capture the timer is obsolete', () => {
    authorized()
      .and(command(captureCommand()))
      .and(acceptedResult())
      .and(answer('approved'))
      .when(timer({ kind: 'hold-expiry', action: 'void' }))
      .thenIgnored('TIMER_OBSOLETE');
  });
});
