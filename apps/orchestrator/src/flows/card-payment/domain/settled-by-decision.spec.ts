/**
 * A card payment's operation settled by a decision of two people (a case, issue 33), by the shared
 * rule of domain/gateway-operation/decided-operation.ts: `settled-by-decision`, never an ordinary
 * success, nothing sent to the gateway; follow-ups taken again by the decided state; a later
 * gateway answer that contradicts the decision reopens the case (`case-reopened`) without
 * touching what was published.
 */
import type { SettleByDecisionCommand } from '@payments/contracts';
import { returnCommand, saleCommand } from '@payments/contracts/testing';
import * as payments from '../../../../test/kits/card-payment.kit';
import { DEFAULT_POLICY } from './decision';
import type { PaymentInput } from './inputs';
import type { PaymentState } from './state';

const WINDOW = 60_000;
const policy = { ...DEFAULT_POLICY, neverReceivedAfterMs: WINDOW };
const CASE_ID = '20000000-0000-4000-8000-00000000ca5e';

/** The case service's command about the operation in flight (or `requestId`). */
const decided =
  (
    decision: Pick<SettleByDecisionCommand, 'decision' | 'amount' | 'amountWhy'>,
    requestId?: string,
  ) =>
  (state: PaymentState): PaymentInput => {
    if (state.status === 'initial') throw new Error('no payment');
    const command: SettleByDecisionCommand = {
      type: 'settle-by-decision',
      commandId: '20000000-0000-4000-8000-0000000000d1',
      paymentId: state.paymentId,
      merchant: state.merchant,
      occurredAt: payments.T0,
      requestId: requestId ?? state.inFlight?.requestId ?? '',
      caseId: CASE_ID,
      decidedBy: 'alice',
      approvedBy: 'bob',
      reason: 'the gateway shows no trace of the return after a day; the bank confirms none',
      ...decision,
    };
    return { kind: 'command', command };
  };

/** Sale 10,000 approved → return 2,000 left without trace past the window (alerted no-trace). */
const returnLeftNoTrace = () => {
  const sale = payments.approvedSale();
  const unknown = sale
    .and(payments.command(returnCommand({ amount: payments.eur(2_000) })))
    .and(payments.result({ kind: 'unknown', reason: '503 before processing' }));
  const [requested] = sale.events;
  const saleSerial = payments.serialOf(
    requested?.type === 'operation-requested' ? requested.requestId : '',
  );
  return unknown.and(
    payments.statusReply({
      status: 'approved',
      transactionType: 'sale',
      requestSerial: saleSerial,
    }),
    payments.at(WINDOW),
    policy,
  );
};

describe('an operation settled by decision (a case)', () => {
  it('given a return left no trace, when "not done" is decided, then settled-by-decision, nothing sent, and a return of the rest is taken', () => {
    const alerted = returnLeftNoTrace();
    expect(alerted.state.inFlight).toMatchObject({ alerted: true, concern: 'no-trace' });
    // Refused while the no-trace alert holds the return in flight.
    alerted
      .when(payments.command(returnCommand({ amount: payments.eur(8_000) })))
      .thenRejected('OPERATION_IN_PROGRESS');

    const settled = alerted.when(decided({ decision: 'not-done' }));
    settled
      .then([
        {
          type: 'settled-by-decision',
          operation: 'return',
          decision: 'not-done',
          caseId: CASE_ID,
          decidedBy: 'alice',
          approvedBy: 'bob',
          requestedAmount: payments.eur(2_000),
        },
      ])
      .thenState({ status: 'approved', returned: 0 });
    expect(settled.decision.effects.map((e) => e.type)).not.toContain('send-gateway-request');
    expect(settled.decision.effects.map((e) => e.type)).not.toContain('resend-gateway-request');

    // The rest (all of it: the decided return moved nothing) is taken, and refunded once.
    const rest = alerted
      .and(decided({ decision: 'not-done' }))
      .when(payments.command(returnCommand()));
    rest.then([{ type: 'operation-requested', operation: 'return', amount: payments.eur(10_000) }]);
  });

  it('given an amount mismatch, when "done at the gateway\'s amount" is decided, then the event carries both amounts and the position is the gateway\'s', () => {
    const mismatch = payments
      .givenInputs(payments.command(saleCommand()), payments.acceptedResult())
      .and(
        payments.statusReply({
          status: 'approved',
          transactionType: 'sale',
          amount: payments.eur(9_000),
        }),
      );
    expect(mismatch.state.inFlight).toMatchObject({ alerted: true, concern: 'amount-mismatch' });
    mismatch
      .when(
        decided({
          decision: 'done',
          amount: payments.eur(9_000),
          amountWhy: 'the gateway charged 9,000 (its status reply); the order asked 10,000',
        }),
      )
      .then([
        {
          type: 'settled-by-decision',
          operation: 'sale',
          decision: 'done',
          amount: payments.eur(9_000),
          requestedAmount: payments.eur(10_000),
        },
      ])
      .thenState({ status: 'approved', captured: 9_000, authorized: 9_000 });
  });

  it('refuses a decision without the amount for "done", and one about a request not in flight', () => {
    const alerted = returnLeftNoTrace();
    alerted.when(decided({ decision: 'done' })).thenRejected('CASE_DECISION_INVALID');
    alerted
      .when(decided({ decision: 'not-done', amount: payments.eur(1) }))
      .thenRejected('CASE_DECISION_INVALID');
    alerted
      .when(decided({ decision: 'not-done' }, '20000000-0000-4000-8000-00000000beef'))
      .thenRejected('CASE_OPERATION_SETTLED');
    // Settled already: a second decision finds nothing in flight.
    alerted
      .and(decided({ decision: 'not-done' }))
      .when((s) => decided({ decision: 'not-done' }, alerted.state.inFlight?.requestId)(s))
      .thenRejected('CASE_OPERATION_SETTLED');
  });

  it('given "not done" was decided, when the gateway later says the return was approved, then the case is reopened with an alert and nothing published changes', () => {
    const alerted = returnLeftNoTrace();
    const requestId = alerted.state.inFlight?.requestId ?? '';
    const settled = alerted.and(decided({ decision: 'not-done' }));
    const published = settled.events.map((e) => ({ ...e }));
    const lateApproval = (state: PaymentState, now: string): PaymentInput => {
      const input = payments.statusReply({
        status: 'approved',
        transactionType: 'reversal',
        requestSerial: 'sn-late',
        gatewayOrderId: 'gw-777',
      })(state, now);
      if (input.kind !== 'gateway-result' || input.result.operation !== 'status')
        throw new Error('unexpected input');
      return { ...input, result: { ...input.result, subjectRequestId: requestId } };
    };
    const reopened = settled.when(lateApproval);
    reopened.then([
      {
        type: 'case-reopened',
        operation: 'return',
        requestId,
        caseId: CASE_ID,
        decision: 'not-done',
        answer: 'succeeded',
        alert: true,
      },
    ]);
    // History stands: the decision's event and every earlier one are as published.
    expect(reopened.after.version).toBe(settled.state.version + 1);
    expect(settled.events).toEqual(published);
    // Once: a second contradicting answer says nothing new.
    settled.and(lateApproval).when(lateApproval).thenIgnored('NO_NEWS');
    // An answer that agrees with the decision (declined) does not reopen it.
    const lateDecline = (state: PaymentState, now: string): PaymentInput => {
      const input = lateApproval(state, now);
      if (input.kind !== 'gateway-result' || input.result.operation !== 'status')
        throw new Error('unexpected input');
      const r = input.result.result;
      return r.kind === 'accepted' && r.report !== undefined
        ? {
            ...input,
            result: {
              ...input.result,
              result: { ...r, report: { ...r.report, status: 'declined' } },
            },
          }
        : input;
    };
    settled.when(lateDecline).thenIgnored('NO_NEWS');
  });

  it('given "not done" was decided, a verified callback about the order asks the gateway about the decided request (its reply may reopen the case)', () => {
    const alerted = returnLeftNoTrace();
    const requestId = alerted.state.inFlight?.requestId ?? '';
    const settled = alerted.and(decided({ decision: 'not-done' }));
    const hinted = settled.when(payments.callback('approved', { transactionType: 'reversal' }));
    hinted.thenIgnored('HINT_ONLY');
    expect(hinted.decision.effects).toEqual([
      {
        type: 'send-gateway-request',
        request: expect.objectContaining({
          operation: 'status',
          subjectRequestId: requestId,
          subjectOperation: 'return',
          priority: 'urgent',
        }),
      },
    ]);
  });
});
