/**
 * An operation the gateway may never have received (DESIGN.md "Truth about money", the no-trace
 * rule of domain/gateway-operation/gateway-operation.ts): "no trace" only from the gateway's answers — a status
 * query refused because the order does not exist (a request that opens the order), or the order's
 * latest request being an earlier one (a follow-up) — answered after the window since the outcome
 * became unknown. Then the same request once more only when the gateway would refuse the repeat
 * as a duplicate; otherwise, or when the repeat left no trace either, unknown with the alert for a
 * person. Never failed while money may have moved, never sent twice, never settled by an answer
 * about another request.
 */
import {
  captureCommand,
  preauthCommand,
  returnCommand,
  saleCommand,
} from '@payments/contracts/testing';
import * as payments from '../../../../test/kits/card-payment.kit';
import { cardPaymentFlow } from '../card-payment.flow';
import type { PaymentInput } from './inputs';
import { DEFAULT_POLICY, NEVER_RECEIVED_ATTEMPT } from './decision';
import type { PaymentState } from './state';

const WINDOW = 60_000;
/** The sale's endpoint declared to refuse a reused client_orderid (by default none is). */
const policy = {
  ...DEFAULT_POLICY,
  neverReceivedAfterMs: WINDOW,
  gatewayRefusesReusedOrderId: [saleCommand().merchant.endpointId],
};
const resendAttempt = NEVER_RECEIVED_ATTEMPT;

/** A status query refused: by default because the order does not exist there. */
const refusedStatus =
  (
    refusal: { message: string; orderUnknown?: true } = {
      message: 'unknown client_orderid',
      orderUnknown: true,
    },
    answeredAt?: string,
  ) =>
  (state: PaymentState, now: string): PaymentInput => {
    const input = payments.statusReply({ status: 'approved' }, answeredAt)(state, now);
    if (input.kind !== 'gateway-result') throw new Error('unexpected input');
    return {
      ...input,
      result: { ...input.result, result: { kind: 'rejected', code: '1', ...refusal } },
    };
  };
const noSuchOrder = refusedStatus();

const unknownSale = () =>
  payments.givenInputs(
    payments.command(saleCommand()),
    payments.result({ kind: 'unknown', reason: '503 before processing' }),
  );

describe('a sale or preauth the gateway may never have received', () => {
  it('stays unknown while the window runs, then is sent once more with a fresh attempt', () => {
    unknownSale()
      .when(noSuchOrder, payments.at(WINDOW - 1), policy)
      .thenIgnored('NO_NEWS')
      .thenEffects([]);
    const resent = unknownSale().when(noSuchOrder, payments.at(WINDOW), policy);
    resent
      .then([{ type: 'operation-resent', operation: 'sale', attempt: resendAttempt }])
      .thenEffects([
        { type: 'resend-gateway-request', attempt: resendAttempt, notBefore: payments.at(WINDOW) },
        // Unknown still, since the repeat: the alert is armed for a new window.
        {
          type: 'schedule-timer',
          timer: { kind: 'unknown-alert' },
          at: payments.at(WINDOW + DEFAULT_POLICY.unknownAlertAfterMs),
        },
      ])
      // Never back to requested: the first send may still reach the gateway.
      .thenState({ status: 'outcome-unknown' });
    expect(resent.after.inFlight).toMatchObject({
      stage: 'outcome-unknown',
      resent: true,
      unknownSince: payments.at(WINDOW),
    });
    // The runtime publishes the repeat: the flow still wants it.
    const requestId = resent.after.inFlight?.requestId ?? '';
    expect(cardPaymentFlow(policy).resendWanted(resent.after, requestId)).toBe(true);
  });

  it('the window is judged on when the gateway answered, not on when the answer is read', () => {
    // Answered inside the window, read long after: the request may still have been on its way.
    unknownSale()
      .when(refusedStatus(undefined, payments.at(WINDOW - 1)), payments.at(10 * WINDOW), policy)
      .thenIgnored('NO_NEWS')
      .thenEffects([]);
  });

  it('a status query refused for another reason (credentials, endpoint) is no evidence at all', () => {
    for (const refusal of [
      { message: 'invalid signature' },
      { message: 'unknown endpoint id 9' },
      { message: 'refused (injected before processing)' },
    ])
      unknownSale()
        .when(refusedStatus(refusal), payments.at(10 * WINDOW), policy)
        .thenIgnored('NO_NEWS')
        .thenEffects([]);
  });

  it('after the resend: approved once it arrives; if it never does, unknown with the alert — never failed — and a late answer still settles it', () => {
    const resent = unknownSale().and(noSuchOrder, payments.at(WINDOW), policy);
    resent
      .and(payments.acceptedResult())
      .when(payments.answer('approved'))
      .then([{ type: 'approved' }]);
    const stillNothing = resent.and(
      payments.result({ kind: 'unknown', reason: 'timeout' }, resendAttempt),
      payments.at(WINDOW + 1_000),
    );
    const alerted = stillNothing.when(noSuchOrder, payments.at(2 * WINDOW + 1_000), policy);
    alerted
      .then([{ type: 'outcome-unknown', operation: 'sale', alert: true, concern: 'no-trace' }])
      .thenState({ status: 'outcome-unknown' });
    const waiting = stillNothing.and(noSuchOrder, payments.at(2 * WINDOW + 1_000), policy);
    // Raised once; the polls go on.
    waiting.when(noSuchOrder, payments.at(3 * WINDOW), policy).thenIgnored('NO_NEWS');
    // The slow gateway charged it after all: its status settles the sale, once.
    waiting
      .when(
        payments.statusReply({
          status: 'approved',
          transactionType: 'sale',
          requestSerial: 'sn-late',
        }),
        payments.at(4 * WINDOW),
        policy,
      )
      .then([{ type: 'accepted-by-gateway', serialNumber: 'sn-late' }, { type: 'approved' }]);
  });

  it('the repeat refused by the gateway (a duplicate of a send that arrived after all) is not a failure', () => {
    const resent = unknownSale().and(noSuchOrder, payments.at(WINDOW), policy);
    const refused = resent.when(
      payments.result(
        { kind: 'rejected', code: '2', message: 'client_orderid already used' },
        resendAttempt,
      ),
      payments.at(WINDOW + 1_000),
    );
    // Unknown it stays (nothing new to say), polled: never failed.
    refused.thenIgnored('DUPLICATE_RESULT').thenEffects([]);
    expect(refused.after).toMatchObject({ status: 'outcome-unknown' });
    resent
      .and(
        payments.result(
          { kind: 'rejected', code: '2', message: 'client_orderid already used' },
          resendAttempt,
        ),
        payments.at(WINDOW + 1_000),
      )
      .when(payments.answer('approved'), payments.at(WINDOW + 5_000))
      .then([{ type: 'approved' }]);
  });

  it.each([
    ['by default (no endpoint declared)', { ...DEFAULT_POLICY, neverReceivedAfterMs: WINDOW }],
    ['declared false', { ...policy, gatewayRefusesReusedOrderId: false }],
    ['only another endpoint declared', { ...policy, gatewayRefusesReusedOrderId: ['999999'] }],
  ])(
    'a gateway that may charge a reused client_orderid again (%s): never resent, unknown with the alert',
    (_name, rules) => {
      unknownSale()
        .when(noSuchOrder, payments.at(WINDOW), rules)
        .then([{ type: 'outcome-unknown', alert: true, concern: 'no-trace' }])
        .thenEffects([{ type: 'cancel-timer', timer: 'unknown-alert' }]);
    },
  );

  it('the repeat not sent (429, breaker open) is never failed: unknown, polled, alerted, and the first send settles it (issue 32 item 1)', () => {
    const resent = unknownSale().and(noSuchOrder, payments.at(WINDOW), policy);
    for (const notSent of [
      { kind: 'not-sent' as const, reason: 'gateway 429', retryAt: payments.at(WINDOW + 2_000) },
      { kind: 'not-sent' as const, reason: 'circuit open' },
    ]) {
      const refused = resent.when(
        payments.result(notSent, resendAttempt),
        payments.at(WINDOW + 1_000),
        policy,
      );
      refused.thenIgnored().thenEffects([]);
      expect(refused.decision.events.map((e) => e.type)).not.toContain('failed');
      expect(refused.after).toMatchObject({ status: 'outcome-unknown' });
      // The first send, held long by the gateway, charged: its status settles the sale, once.
      resent
        .and(payments.result(notSent, resendAttempt), payments.at(WINDOW + 1_000), policy)
        .when(
          payments.statusReply({
            status: 'approved',
            transactionType: 'sale',
            requestSerial: 'sn-1',
          }),
          payments.at(2 * WINDOW),
          policy,
        )
        .then([{ type: 'accepted-by-gateway' }, { type: 'approved' }]);
    }
    // Still polled after the refused repeat: the poll timer asks again.
    const requestId = resent.state.inFlight?.requestId ?? '';
    resent
      .and(payments.result({ kind: 'not-sent', reason: 'gateway 429' }, resendAttempt))
      .when(
        payments.timer({ kind: 'status-poll', requestId, attempt: 3 }),
        payments.at(WINDOW + 5_000),
      )
      .thenIgnored('NO_NEWS')
      .thenEffects([
        { type: 'send-gateway-request', request: { operation: 'status' } },
        { type: 'schedule-timer', timer: { kind: 'status-poll', requestId } },
      ]);
  });

  it('a capture whose repeat is not sent stays unknown, never failed (issue 32 item 1)', () => {
    const resent = payments
      .authorized()
      .and(payments.command(captureCommand()))
      .and(payments.result({ kind: 'unknown', reason: '503 before processing' }))
      .and(
        payments.statusReply({ status: 'approved', transactionType: 'preauth' }),
        payments.at(WINDOW),
        policy,
      );
    expect(resent.state.inFlight).toMatchObject({ operation: 'capture', resent: true });
    const refused = resent.when(
      payments.result({ kind: 'not-sent', reason: 'gateway 429' }, resendAttempt),
      payments.at(WINDOW + 1_000),
      policy,
    );
    refused.thenIgnored();
    expect(refused.after.inFlight).toMatchObject({
      operation: 'capture',
      stage: 'outcome-unknown',
    });
  });

  it('is never resent while the gateway knows the order (processing), nor when no outcome is unknown', () => {
    unknownSale()
      .and(payments.statusReply({ status: 'processing' }))
      .when(noSuchOrder, payments.at(2 * WINDOW), policy)
      .thenIgnored('NO_NEWS')
      .thenEffects([]);
    payments
      .givenInputs(payments.command(preauthCommand()), payments.acceptedResult())
      .when(noSuchOrder, payments.at(2 * WINDOW), policy)
      .thenIgnored('NO_NEWS')
      .thenEffects([]);
  });
});

describe('a follow-up whose status shows an earlier request of the order', () => {
  const unknownCapture = () =>
    payments
      .authorized()
      .and(payments.command(captureCommand()))
      .and(payments.result({ kind: 'unknown', reason: '503 before processing' }));
  const preauthStatus = payments.statusReply({ status: 'approved', transactionType: 'preauth' });

  it('a capture is resent once after the window (the status keeps describing the preauth), never captured by it', () => {
    unknownCapture()
      .when(preauthStatus, payments.at(WINDOW - 1), policy)
      .thenIgnored('NO_NEWS');
    const resent = unknownCapture().and(preauthStatus, payments.at(WINDOW), policy);
    expect(resent.state.inFlight).toMatchObject({ operation: 'capture', resent: true });
    expect(resent.events.map((e) => e.type)).not.toContain('captured');
    resent
      .and(payments.acceptedResult())
      .when(payments.answer('approved'))
      .then([{ type: 'captured' }]);
  });

  it('a processing status naming the capture is not evidence of absence', () => {
    unknownCapture()
      .when(
        payments.statusReply({
          status: 'processing',
          transactionType: 'capture',
          requestSerial: 'sn-new',
        }),
        payments.at(2 * WINDOW),
        policy,
      )
      .then([{ type: 'accepted-by-gateway', operation: 'capture', serialNumber: 'sn-new' }]);
  });

  /** Sale 10,000 → return 3,000 (returned) → return 2,000 answered 503 before processing. */
  const secondReturnUnknown = () => {
    const sale = payments.givenInputs(
      payments.command(saleCommand()),
      payments.acceptedResult(),
      payments.answer('approved'),
    );
    const firstReturn = sale.and(
      payments.command(returnCommand({ amount: { minor: 3_000, currency: 'EUR' } })),
    );
    const firstSerial = payments.serialOf(firstReturn.state.inFlight?.requestId ?? '');
    const returned = firstReturn.and(payments.acceptedResult()).and(payments.answer('approved'));
    return {
      firstSerial,
      unknown: returned
        .and(payments.command(returnCommand({ amount: { minor: 2_000, currency: 'EUR' } })))
        .and(payments.result({ kind: 'unknown', reason: '503 before processing' })),
    };
  };

  it('a second return is never settled by the status of the first (same type, earlier serial)', () => {
    const { firstSerial, unknown } = secondReturnUnknown();
    expect(unknown.state).toMatchObject({ returned: 3_000 });
    const aboutFirst = payments.statusReply({
      status: 'approved',
      transactionType: 'reversal',
      requestSerial: firstSerial,
    });
    unknown.when(aboutFirst, payments.at(WINDOW - 1), policy).thenIgnored('NO_NEWS');
    // After the window: no trace of it. A second return cannot be refused as a duplicate (it
    // would refund again): not resent; unknown with the alert for a person.
    const alerted = unknown.when(aboutFirst, payments.at(WINDOW), policy);
    alerted
      .then([{ type: 'outcome-unknown', operation: 'return', alert: true, concern: 'no-trace' }])
      .thenEffects([{ type: 'cancel-timer', timer: 'unknown-alert' }]);
    expect(alerted.after).toMatchObject({ returned: 3_000 });
    // Raised for a person: still asked, at the slow cadence (a late answer is still caught).
    const waiting = unknown.and(aboutFirst, payments.at(WINDOW), policy);
    const requestId = waiting.state.inFlight?.requestId ?? '';
    const poll = waiting.when(
      payments.timer({ kind: 'status-poll', requestId, attempt: 4 }),
      payments.at(WINDOW + 5_000),
      policy,
    );
    poll.thenIgnored('NO_NEWS');
    const next = poll.decision.effects.find((e) => e.type === 'schedule-timer');
    expect(
      next?.type === 'schedule-timer' &&
        Date.parse(next.at) - Date.parse(payments.at(WINDOW + 5_000)),
    ).toBeGreaterThanOrEqual(5 * 60_000);
    // The gateway processes it late: the reply names a new serial of the reversal type.
    unknown
      .and(aboutFirst, payments.at(WINDOW), policy)
      .when(
        payments.statusReply({
          status: 'approved',
          transactionType: 'reversal',
          requestSerial: 'sn-2nd',
        }),
        payments.at(2 * WINDOW),
        policy,
      )
      .then([
        { type: 'accepted-by-gateway', operation: 'return', serialNumber: 'sn-2nd' },
        { type: 'returned', amount: { minor: 2_000, currency: 'EUR' } },
      ])
      .thenState({ returned: 5_000 });
  });

  it('a capture retried after a declined capture is not declined by the status of the first', () => {
    const declined = payments
      .authorized()
      .and(payments.command(captureCommand()))
      .and(payments.acceptedResult())
      .and(payments.answer('declined'));
    const state = declined.state;
    const firstSerial = state.status === 'initial' ? undefined : state.requestSerials?.at(-1);
    expect(firstSerial).toBeDefined();
    const retried = declined
      .and(payments.command(captureCommand()))
      .and(payments.result({ kind: 'unknown', reason: 'timeout' }));
    retried
      .when(
        payments.statusReply({
          status: 'declined',
          transactionType: 'capture',
          requestSerial: firstSerial,
        }),
        payments.at(1_000),
        policy,
      )
      .thenIgnored('NO_NEWS');
    retried
      .when(
        payments.statusReply({
          status: 'approved',
          transactionType: 'capture',
          requestSerial: 'sn-retry',
        }),
        payments.at(1_000),
        policy,
      )
      .then([{ type: 'accepted-by-gateway' }, { type: 'captured' }]);
  });
});

describe('a request held back by our own breaker or limits (not-sent with retryAt)', () => {
  const held = (attempt: number, retryAt: string) =>
    payments.result({ kind: 'not-sent', reason: 'circuit open', retryAt }, attempt);

  it('waits for retryAt without spending the send attempts, far beyond GATEWAY_MAX_SEND_ATTEMPTS', () => {
    let s = payments.givenInputs(payments.command(saleCommand()));
    for (let attempt = 1; attempt <= 3 * DEFAULT_POLICY.maxSendAttempts; attempt++) {
      const now = payments.at(attempt * 10_000);
      const retryAt = payments.at(attempt * 10_000 + 30_000);
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
    payments
      .givenInputs(payments.command(saleCommand()))
      .when(held(3, payments.at(11 * 60_000)), payments.at(10 * 60_000), {
        ...DEFAULT_POLICY,
        ownLimitWaitMs: 10 * 60_000,
      })
      .then([{ type: 'failed', reason: 'not-sent', message: 'circuit open' }]);
  });

  it('a not-sent without retryAt (nothing reached the gateway for another reason) keeps its attempt limit', () => {
    payments
      .givenInputs(payments.command(saleCommand()))
      .when(
        payments.result(
          { kind: 'not-sent', reason: 'connect refused' },
          DEFAULT_POLICY.maxSendAttempts,
        ),
      )
      .then([{ type: 'failed', reason: 'not-sent' }]);
  });
});
