/**
 * A card payment's create-card-ref the gateway never cleared (its reply lost, every re-ask answered
 * without a reference, alerted), settled by a decision of two people (a case, issue 33 item 3) by
 * the shared rule (domain/gateway-operation/decided-operation.ts): "not done" only (a reference id
 * is the gateway's answer alone); nothing sent to the gateway; the payment's status untouched and a
 * new create-card-ref taken again; a reference answered afterwards reopens the case and never
 * rewrites a published event.
 */
import fc from 'fast-check';
import type {
  CardReferenceCommand,
  GatewayResult,
  PaymentEvent,
  SettleByDecisionCommand,
} from '@payments/contracts';
import { MERCHANT, PAYMENT_ID, testUuid } from '@payments/contracts/testing';
import * as payments from '../../../../test/kits/card-payment.kit';
import { cardPaymentFlow } from '../card-payment.flow';
import { DEFAULT_POLICY, type PaymentInput, type PaymentState } from '.';

const CASE_ID = '20000000-0000-4000-8000-00000000ca5c';
const HOUR = 60 * 60 * 1000;
const at = (ms: number) => new Date(Date.parse(payments.T0) + ms).toISOString();

const createCardRef = (): PaymentInput => {
  const command: CardReferenceCommand = {
    type: 'create-card-ref',
    commandId: testUuid(),
    paymentId: PAYMENT_ID,
    merchant: MERCHANT,
    occurredAt: payments.T0,
  };
  return { kind: 'command', command };
};

const pendingOf = (state: PaymentState) =>
  state.status === 'initial' ? undefined : state.cardRefRequest;

/** The case service's command about the card-reference request (or `requestId`). */
const decided =
  (decision: 'done' | 'not-done', requestId?: string) =>
  (state: PaymentState): PaymentInput => {
    if (state.status === 'initial') throw new Error('no payment');
    const command: SettleByDecisionCommand = {
      type: 'settle-by-decision',
      commandId: testUuid(),
      paymentId: state.paymentId,
      merchant: state.merchant,
      occurredAt: payments.T0,
      requestId: requestId ?? pendingOf(state)?.requestId ?? testUuid(),
      caseId: CASE_ID,
      decision,
      ...(decision === 'done' ? { amount: payments.eur(0) } : {}),
      decidedBy: 'alice',
      approvedBy: 'bob',
      reason: 'the gateway shows no reference for the order after every re-ask',
    };
    return { kind: 'command', command };
  };

/** A create-card-ref result about `requestId` (a re-ask's answer). */
const referenceResult =
  (requestId: string, classification: GatewayResult['result'], attempt = 2) =>
  (): PaymentInput => ({
    kind: 'gateway-result',
    result: {
      requestId,
      paymentId: PAYMENT_ID,
      operation: 'create-card-ref',
      attempt,
      result: classification,
      completedAt: payments.T0,
    },
  });

/** Sale approved → create-card-ref whose reply is lost and whose alert was raised an hour later. */
const alertedCardRef = () => {
  const lost = payments
    .approvedSale()
    .and(createCardRef())
    .and((s) =>
      referenceResult(pendingOf(s)?.requestId ?? '', { kind: 'unknown', reason: 'timeout' }, 1)(),
    );
  const requestId = pendingOf(lost.state)?.requestId ?? '';
  return {
    requestId,
    history: lost.and(payments.timer({ kind: 'card-ref-alert', requestId }), at(HOUR)),
  };
};

describe('a create-card-ref settled by decision (a case)', () => {
  it('given an alerted create-card-ref, when "not done" is decided, then settled-by-decision (no reference), only its alert timer dropped, nothing sent', () => {
    const { history, requestId } = alertedCardRef();
    expect(pendingOf(history.state)).toMatchObject({ requestId, alerted: true });
    history
      .when(decided('not-done'))
      .then([
        {
          type: 'settled-by-decision',
          operation: 'create-card-ref',
          requestId,
          caseId: CASE_ID,
          decision: 'not-done',
          decidedBy: 'alice',
          approvedBy: 'bob',
        },
      ])
      .thenEffectsEqual([{ type: 'cancel-timer', timer: 'card-ref-alert' }])
      .thenStatus('approved')
      .thenState({ cardRefRequest: undefined, cardRef: undefined, captured: 10_000 });
  });

  it('the request no longer waits: its pending re-ask is not sent, and a new create-card-ref is taken', () => {
    const { history, requestId } = alertedCardRef();
    const after = history.and(decided('not-done'));
    expect(cardPaymentFlow(DEFAULT_POLICY).resendWanted(after.state, requestId)).toBe(false);
    after.when(createCardRef()).then([{ type: 'card-ref-requested' }]);
  });

  it('"done" is refused: a reference is the gateway\'s answer alone', () => {
    const { history } = alertedCardRef();
    history.when(decided('done')).thenRejected('CASE_DECISION_INVALID');
  });

  it('refused while the request is still waiting for its first reply, or about another request', () => {
    const pending = payments.approvedSale().and(createCardRef());
    pending.when(decided('not-done')).thenRejected('CASE_OPERATION_SETTLED');
    alertedCardRef()
      .history.when(decided('not-done', testUuid()))
      .thenRejected('CASE_OPERATION_SETTLED');
  });

  it('a reference answered afterwards reopens the case with an alert, once; the decision stands, the reference is not taken', () => {
    const { history, requestId } = alertedCardRef();
    const after = history.and(decided('not-done'));
    const late = referenceResult(
      requestId,
      { kind: 'accepted', cardReference: { refId: '10901' } },
      3,
    );
    after
      .when(late)
      .then([
        {
          type: 'case-reopened',
          operation: 'create-card-ref',
          requestId,
          caseId: CASE_ID,
          decision: 'not-done',
          answer: 'succeeded',
          alert: true,
        },
      ])
      .thenState({ cardRef: undefined });
    after.and(late).when(late).thenIgnored();
    // An answer without a reference agrees with "not done".
    after
      .when(referenceResult(requestId, { kind: 'rejected', code: '300', message: 'no such order' }))
      .thenIgnored();
  });
});

describe('card-reference decisions: properties (the case rules)', () => {
  const stepArb = fc.constantFrom(
    'lost' as const,
    'alert' as const,
    'decide-not-done' as const,
    'decide-done' as const,
    'late-reference' as const,
    'late-none' as const,
    'new-request' as const,
  );

  it('whatever is decided and answered after: no decision sends a gateway request, no card-ref-created without the gateway, published events never change', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 10 }), (steps) => {
        let history = payments.approvedSale().and(createCardRef());
        let requestId = pendingOf(history.state)?.requestId ?? '';
        let clock = 0;
        for (const step of steps) {
          const before: PaymentEvent[] = history.events.map((e) => ({ ...e }));
          requestId = pendingOf(history.state)?.requestId ?? requestId;
          clock += HOUR;
          const input =
            step === 'lost'
              ? referenceResult(requestId, { kind: 'unknown', reason: 'timeout' }, 1)
              : step === 'alert'
                ? payments.timer({ kind: 'card-ref-alert', requestId })
                : step === 'decide-not-done'
                  ? decided('not-done', requestId)
                  : step === 'decide-done'
                    ? decided('done', requestId)
                    : step === 'late-reference'
                      ? referenceResult(requestId, {
                          kind: 'accepted',
                          cardReference: { refId: '10901' },
                        })
                      : step === 'late-none'
                        ? referenceResult(requestId, {
                            kind: 'rejected',
                            code: '300',
                            message: 'none',
                          })
                        : createCardRef();
          const outcome = history.when(input, at(clock));
          const decision = outcome.decision;
          history = history.and(input, at(clock));
          // Published history is never rewritten, whatever comes.
          expect(history.events.slice(0, before.length)).toEqual(before);
          if (step === 'decide-not-done' || step === 'decide-done') {
            // A decision never asks the gateway anything, and says only settled-by-decision.
            expect(decision.effects.map((e) => e.type)).not.toContain('send-gateway-request');
            expect(decision.effects.map((e) => e.type)).not.toContain('resend-gateway-request');
            if (decision.outcome === 'accepted')
              expect(decision.events.map((e) => e.type)).toEqual(['settled-by-decision']);
            if (step === 'decide-done') expect(decision.outcome).toBe('rejected');
            // The payment's money is untouched by a card-reference decision.
            expect(outcome.after.status).toBe('approved');
            expect(decision.events.map((e) => e.type)).not.toContain('card-ref-created');
          }
          // A reference exists only on the gateway's answer carrying it.
          const state = history.state;
          if (state.status !== 'initial' && state.cardRef !== undefined)
            expect(history.events.map((e) => e.type)).toContain('card-ref-created');
        }
      }),
      { numRuns: 300 },
    );
  });
});
