/**
 * An operation the gateway never received (issue #10 items 1 and 2, DESIGN.md "Truth about
 * money"): no trace at the gateway for the whole safe window → the same request once more under
 * the same client_orderid; no trace of that one either → failed, not-sent. Never left unknown for
 * good, never sent twice inside the window, never resolved by a status about another operation.
 */
import { captureCommand, preauthCommand, saleCommand } from '@payments/contracts/testing';
import {
  acceptedResult,
  answer,
  at,
  command,
  givenInputs,
  result,
  statusReply,
} from '../../../../test/kits/card-payment.kit';
import type { PaymentInput } from './inputs';
import { DEFAULT_POLICY, NEVER_RECEIVED_ATTEMPT } from './decision';
import type { PaymentState } from './state';

const WINDOW = 60_000;
const policy = { ...DEFAULT_POLICY, neverReceivedAfterMs: WINDOW };
const resendAttempt = NEVER_RECEIVED_ATTEMPT;

/** The gateway refuses to describe the order: it does not exist there. */
const noSuchOrder = (state: PaymentState): PaymentInput => {
  const input = statusReply({ status: 'approved' })(state);
  if (input.kind !== 'gateway-result') throw new Error('unexpected input');
  return {
    ...input,
    result: {
      ...input.result,
      result: { kind: 'rejected', code: '1', message: 'unknown client_orderid' },
    },
  };
};

const unknownSale = () =>
  givenInputs(command(saleCommand()), result({ kind: 'unknown', reason: '503 before processing' }));

describe('a sale or preauth the gateway never received', () => {
  it('stays unknown while the window runs, then is sent once more with a fresh attempt', () => {
    unknownSale()
      .when(noSuchOrder, at(WINDOW - 1), policy)
      .thenIgnored('NO_NEWS')
      .thenEffects([]);
    const resent = unknownSale().when(noSuchOrder, at(WINDOW), policy);
    resent
      .then([{ type: 'operation-resent', operation: 'sale', attempt: resendAttempt }])
      .thenEffects([
        { type: 'resend-gateway-request', attempt: resendAttempt, notBefore: at(WINDOW) },
        { type: 'cancel-timer', timer: 'unknown-alert' },
      ])
      .thenState({ status: 'requested' });
    expect(resent.after.inFlight).toMatchObject({ stage: 'requested', resent: true });
  });

  it('after the resend: approved once it arrives; failed as not-sent if it never does', () => {
    const resent = unknownSale().and(noSuchOrder, at(WINDOW), policy);
    resent
      .and(acceptedResult())
      .when(answer('approved'))
      .then([{ type: 'approved' }]);
    resent
      .and(result({ kind: 'unknown', reason: 'timeout' }, resendAttempt), at(WINDOW + 1_000))
      .when(noSuchOrder, at(2 * WINDOW + 1_000), policy)
      .then([{ type: 'failed', operation: 'sale', reason: 'not-sent' }])
      .thenState({ status: 'failed' });
  });

  it('is never resent while the gateway knows the order (processing), nor when no outcome is unknown', () => {
    unknownSale()
      .and(statusReply({ status: 'processing' }))
      .when(noSuchOrder, at(2 * WINDOW), policy)
      .thenIgnored('NO_NEWS')
      .thenEffects([]);
    givenInputs(command(preauthCommand()), acceptedResult())
      .when(noSuchOrder, at(2 * WINDOW), policy)
      .thenIgnored('NO_NEWS')
      .thenEffects([]);
  });
});

describe('a capture the order status shows never arrived', () => {
  const unknownCapture = () =>
    givenInputs(command(preauthCommand()), acceptedResult(), answer('approved'))
      .and(command(captureCommand()))
      .and(result({ kind: 'unknown', reason: '503 before processing' }));
  const preauthStatus = statusReply({ status: 'approved', transactionType: 'preauth' });

  it('is resent once after the window (the status keeps describing the preauth), never captured by it', () => {
    unknownCapture()
      .when(preauthStatus, at(WINDOW - 1), policy)
      .thenIgnored('NO_NEWS');
    const resent = unknownCapture().and(preauthStatus, at(WINDOW), policy);
    expect(resent.state.inFlight).toMatchObject({ operation: 'capture', resent: true });
    expect(resent.events.map((e) => e.type)).not.toContain('captured');
    resent.when(answer('approved')).then([{ type: 'captured' }]);
  });

  it('a processing status naming the capture is not evidence of absence', () => {
    unknownCapture()
      .when(
        statusReply({ status: 'processing', transactionType: 'capture' }),
        at(2 * WINDOW),
        policy,
      )
      .then([{ type: 'accepted-by-gateway', operation: 'capture' }]);
  });
});

describe('a request held back by our own breaker or limits (not-sent with retryAt)', () => {
  const held = (attempt: number, retryAt: string) =>
    result({ kind: 'not-sent', reason: 'circuit open', retryAt }, attempt);

  it('waits for retryAt without spending the send attempts, far beyond GATEWAY_MAX_SEND_ATTEMPTS', () => {
    let s = givenInputs(command(saleCommand()));
    for (let attempt = 1; attempt <= 3 * DEFAULT_POLICY.maxSendAttempts; attempt++) {
      const now = at(attempt * 10_000);
      const retryAt = at(attempt * 10_000 + 30_000);
      s.when(held(attempt, retryAt), now)
        .thenIgnored('NO_NEWS')
        .thenEffects([
          { type: 'resend-gateway-request', attempt: attempt + 1, notBefore: retryAt },
        ]);
      s = s.and(held(attempt, retryAt), now);
    }
    expect(s.state.status).toBe('requested');
  });

  it('fails as not-sent once it waited longer than the bound', () => {
    givenInputs(command(saleCommand()))
      .when(held(3, at(11 * 60_000)), at(10 * 60_000), {
        ...DEFAULT_POLICY,
        ownLimitWaitMs: 10 * 60_000,
      })
      .then([{ type: 'failed', reason: 'not-sent', message: 'circuit open' }]);
  });

  it('a not-sent without retryAt (nothing reached the gateway for another reason) keeps its attempt limit', () => {
    givenInputs(command(saleCommand()))
      .when(result({ kind: 'not-sent', reason: 'connect refused' }, DEFAULT_POLICY.maxSendAttempts))
      .then([{ type: 'failed', reason: 'not-sent' }]);
  });
});
