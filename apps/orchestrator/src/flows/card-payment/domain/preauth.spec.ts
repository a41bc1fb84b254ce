import {
  captureCommand,
  preauthCommand,
  saleCommand,
  voidCommand,
} from '@payments/contracts/testing';
import {
  acceptedResult,
  at,
  answer,
  command,
  givenInputs,
  timer,
} from '../../../../test/kits/card-payment.kit';

const authorized = () =>
  givenInputs(command(preauthCommand()), acceptedResult(), answer('approved'));
const eur = (minor: number) => ({ minor, currency: 'EUR' });

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

  it('partial captures add up to the authorization, not beyond', () => {
    const after40 = authorized()
      .and(command(captureCommand({ amount: eur(4_000) })))
      .and(answer('approved'));
    expect(after40.state).toMatchObject({ status: 'captured', captured: 4_000 });
    after40
      .when(command(captureCommand({ amount: eur(6_001) })))
      .thenRejected('AMOUNT_EXCEEDS_AUTHORIZED');
    const after100 = after40
      .and(command(captureCommand({ amount: eur(6_000) })))
      .and(answer('approved'));
    expect(after100.state.captured).toBe(10_000);
    after100.when(command(captureCommand())).thenRejected('INVALID_AMOUNT');
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
      () => authorized().and(command(voidCommand())).and(answer('approved')),
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
      .when(answer('approved', { transactionType: 'void' }))
      .then([{ type: 'voided', amount: eur(10_000) }])
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
      'after a capture',
      () =>
        authorized()
          .and(command(captureCommand({ amount: eur(1_000) })))
          .and(answer('approved')),
      voidCommand(),
      'INVALID_STATE',
    ],
    [
      'on a sale',
      () => givenInputs(command(saleCommand()), answer('approved')),
      voidCommand(),
      'NOT_A_PREAUTH',
    ],
    [
      'twice',
      () => authorized().and(command(voidCommand())).and(answer('approved')),
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
      .and(answer('approved'))
      .when(timer({ kind: 'hold-expiry', action: 'void' }))
      .thenIgnored('TIMER_OBSOLETE');
  });
});
