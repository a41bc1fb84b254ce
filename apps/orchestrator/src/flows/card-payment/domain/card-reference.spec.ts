import type {
  CardReferenceCommand,
  GatewayResult,
  PaymentEvent,
  RefreshStatusCommand,
} from '@payments/contracts';
import {
  createScheduleCommand,
  MERCHANT,
  PAYMENT_ID,
  rebillCommand,
  SCHEDULE_ID,
  saleCommand,
  testUuid,
} from '@payments/contracts/testing';
import * as payments from '../../../../test/kits/card-payment.kit';
import { derivedUuid } from '../../../domain';
import type { RuntimeEffect, SagaInput } from '../../../runtime/flow';
import { cardPaymentFlow } from '../card-payment.flow';
import { DEFAULT_POLICY, fold, initialState, type PaymentInput, type PaymentState } from '.';

const CARD = { bin: '444444', lastFour: '4448', brand: 'VISA' };

const cmd = (c: CardReferenceCommand): PaymentInput => ({ kind: 'command', command: c });

const createCardRef = (): CardReferenceCommand => ({
  type: 'create-card-ref',
  commandId: testUuid(),
  paymentId: PAYMENT_ID,
  merchant: MERCHANT,
  occurredAt: payments.T0,
});

const refreshOf = (): RefreshStatusCommand => ({
  type: 'refresh-status',
  commandId: testUuid(),
  paymentId: PAYMENT_ID,
  merchant: MERCHANT,
  occurredAt: payments.T0,
});

/** A command as the runtime hands it to the flow's binding. */
const asSaga = (c: CardReferenceCommand | RefreshStatusCommand): SagaInput => ({
  kind: 'command',
  command: {
    type: c.type,
    commandId: c.commandId,
    sagaId: PAYMENT_ID,
    endpointId: '1234',
    body: c,
  },
});

const getCardInfo = (): CardReferenceCommand => ({
  type: 'get-card-info',
  commandId: testUuid(),
  paymentId: PAYMENT_ID,
  merchant: MERCHANT,
  occurredAt: payments.T0,
});

/** The result of the card-reference request waiting for its answer. */
const referenceResult =
  (classification: GatewayResult['result'], attempt = 1) =>
  (state: PaymentState): PaymentInput => {
    const pending = state.status === 'initial' ? undefined : state.cardRefRequest;
    return {
      kind: 'gateway-result',
      result: {
        requestId: pending?.requestId ?? testUuid(),
        paymentId: PAYMENT_ID,
        operation: pending?.operation ?? 'create-card-ref',
        attempt,
        result: classification,
        completedAt: payments.T0,
      },
    };
  };

const approvedSale = () =>
  payments.givenInputs(
    payments.command(saleCommand()),
    payments.acceptedResult(),
    payments.callback('approved', { card: CARD, transactionType: 'sale' }),
  );

describe('rebill (a card reference charged, cardholder absent)', () => {
  it('→ operation-requested (rebill, the reference, the schedule cycle) and a make-rebill request without card data', () => {
    const rebill = rebillCommand({ schedule: { scheduleId: SCHEDULE_ID, cycle: 3, attempt: 2 } });
    payments
      .given()
      .when(cmd(rebill))
      .then([
        {
          type: 'operation-requested',
          version: 1,
          operation: 'rebill',
          clientOrderId: PAYMENT_ID,
          cardRef: { refId: '10901' },
          schedule: { scheduleId: SCHEDULE_ID, cycle: 3, attempt: 2 },
          merchant: MERCHANT,
        },
      ])
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: {
            operation: 'rebill',
            requestId: expect.any(String) as string,
            paymentId: PAYMENT_ID,
            merchant: MERCHANT,
            clientOrderId: PAYMENT_ID,
            attempt: 1,
            requestedAt: payments.T0,
            cardRefId: '10901',
            amount: { minor: 1_500, currency: 'EUR' },
            orderDescription: 'Monthly plan',
          },
        },
      ])
      .thenState({ status: 'requested', kind: 'rebill', cardRef: { refId: '10901' } });
  });

  it('is approved on a verified callback the gateway names a sale: approved, the money taken', () => {
    payments
      .givenInputs(cmd(rebillCommand()), payments.acceptedResult())
      .when(payments.callback('approved', { transactionType: 'sale', card: CARD }))
      .then([{ type: 'approved', amount: { minor: 1_500, currency: 'EUR' }, card: CARD }])
      .thenState({ status: 'approved', captured: 1_500 });
  });

  it('is declined on the gateway’s decline; nothing moved', () => {
    payments
      .givenInputs(cmd(rebillCommand()), payments.acceptedResult())
      .when(payments.answer('declined', { errorCode: '116', errorMessage: 'insufficient funds' }))
      .then([{ type: 'declined', operation: 'rebill', code: '116' }])
      .thenState({ status: 'declined', captured: 0 });
  });

  it('an unknown outcome stays unknown until a status reply about it resolves it', () => {
    const unknown = payments.givenInputs(
      cmd(rebillCommand()),
      payments.result({ kind: 'unknown', reason: 'timeout' }),
    );
    expect(unknown.state.status).toBe('outcome-unknown');
    unknown
      .when(
        payments.statusReply({
          status: 'approved',
          gatewayOrderId: 'gw-777',
          transactionType: 'sale',
        }),
      )
      .then([{ type: 'approved' }]);
  });

  it('a second rebill for the same payment is refused', () => {
    payments
      .givenInputs(cmd(rebillCommand()))
      .when(cmd(rebillCommand()))
      .thenRejected('PAYMENT_ALREADY_EXISTS');
  });
});

describe('create-card-ref', () => {
  it('after an approved sale: card-ref-requested, create-card-ref with the sale’s order; the answer keeps id, BIN, last four, brand', () => {
    const requested = approvedSale().when(cmd(createCardRef()));
    requested.then([{ type: 'card-ref-requested' }]).thenEffects([
      {
        type: 'send-gateway-request',
        request: expect.objectContaining({
          operation: 'create-card-ref',
          gatewayOrderId: 'gw-777',
          clientOrderId: PAYMENT_ID,
        }) as object,
      },
    ]);
    approvedSale()
      .and(cmd(createCardRef()))
      .when(referenceResult({ kind: 'accepted', cardReference: { refId: '10901' } }))
      .then([{ type: 'card-ref-created', cardRef: { refId: '10901' }, card: CARD }])
      .thenState({ status: 'approved', cardRef: { refId: '10901' }, cardRefRequest: undefined });
  });

  it('is refused before the sale succeeded, after a decline, while one is pending, and once a reference exists', () => {
    payments
      .givenInputs(payments.command(saleCommand()))
      .when(cmd(createCardRef()))
      .thenRejected('INVALID_STATE');
    payments
      .givenInputs(
        payments.command(saleCommand()),
        payments.acceptedResult(),
        payments.callback('declined'),
      )
      .when(cmd(createCardRef()))
      .thenRejected('INVALID_STATE');
    approvedSale()
      .and(cmd(createCardRef()))
      .when(cmd(createCardRef()))
      .thenRejected('OPERATION_IN_PROGRESS');
    approvedSale()
      .and(cmd(createCardRef()))
      .and(referenceResult({ kind: 'accepted', cardReference: { refId: '10901' } }))
      .when(cmd(createCardRef()))
      .thenRejected('INVALID_STATE');
    payments.given().when(cmd(createCardRef())).thenRejected('PAYMENT_NOT_FOUND');
  });

  it('a refusal is reported as rejected; a reply without id is not a reference', () => {
    const pending = () => approvedSale().and(cmd(createCardRef()));
    pending()
      .when(referenceResult({ kind: 'rejected', code: '2', message: 'no such order' }))
      .then([{ type: 'card-reference-failed', reason: 'rejected', code: '2' }]);
    pending()
      .when(referenceResult({ kind: 'accepted', cardReference: {} }))
      .then([{ type: 'card-reference-failed', reason: 'rejected' }]);
  });

  it.each([
    ['create-card-ref', createCardRef],
    ['get-card-info', getCardInfo],
  ] as const)(
    'a %s not sent (breaker open, gateway down) is sent again by the shared rule and answered; nothing later is blocked',
    (_operation, ask) => {
      const flow = cardPaymentFlow(DEFAULT_POLICY);
      const withRef = () =>
        ask === getCardInfo
          ? approvedSale()
              .and(cmd(createCardRef()))
              .and(referenceResult({ kind: 'accepted', cardReference: { refId: '10901' } }))
          : approvedSale();
      const pending = withRef().and(cmd(ask()));
      const requestId =
        (pending.state.status !== 'initial' && pending.state.cardRefRequest?.requestId) || '';
      pending
        .when(referenceResult({ kind: 'not-sent', reason: 'circuit open', retryAt: payments.T0 }))
        .thenIgnored('NO_NEWS')
        .thenEffects([
          { type: 'resend-gateway-request', requestId, attempt: 2, notBefore: payments.T0 },
        ]);
      // The runtime sends the resend only while the flow still wants it: the request is waiting.
      expect(flow.resendWanted(pending.state, requestId)).toBe(true);
      const answered = pending.and(
        referenceResult(
          ask === getCardInfo
            ? { kind: 'accepted', cardReference: { card: CARD } }
            : { kind: 'accepted', cardReference: { refId: '10901' } },
        ),
      );
      expect(flow.resendWanted(answered.state, requestId)).toBe(false);
      answered.when(cmd(getCardInfo())).then([{ type: 'card-info-requested' }]);
    },
  );

  describe('a lost reply (unknown outcome)', () => {
    const HOUR = 60 * 60 * 1000;
    const at = (ms: number) => new Date(Date.parse(payments.T0) + ms).toISOString();
    const pending = () => approvedSale().and(cmd(createCardRef()));
    const requestIdOf = (state: PaymentState) =>
      (state.status !== 'initial' && state.cardRefRequest?.requestId) || '';
    const lost = () => pending().and(referenceResult({ kind: 'unknown', reason: 'timeout' }));

    it('stays unknown (not failed): card-reference-unknown, the same request asked again on the poll cadence, the alert armed for the window', () => {
      const requestId = requestIdOf(pending().state);
      pending()
        .when(referenceResult({ kind: 'unknown', reason: 'timeout' }))
        .then([
          {
            type: 'card-reference-unknown',
            operation: 'create-card-ref',
            requestId,
            since: payments.T0,
            alert: false,
          },
        ])
        .thenEffects([
          {
            type: 'resend-gateway-request',
            requestId,
            attempt: 2,
            notBefore: at(3_000),
            afterNoTrace: true,
          },
          { type: 'schedule-timer', timer: { kind: 'card-ref-alert', requestId }, at: at(HOUR) },
        ])
        .thenState({ cardRef: undefined });
      expect(lost().state).toMatchObject({
        cardRefRequest: { requestId, unknownSince: payments.T0 },
      });
      // The request is still waiting: the runtime sends the re-ask.
      expect(cardPaymentFlow(DEFAULT_POLICY).resendWanted(lost().state, requestId)).toBe(true);
    });

    it('the re-ask gets the reference the lost reply carried (the gateway keeps one per order): created, alert dropped, nothing blocked', () => {
      lost()
        .and(referenceResult({ kind: 'unknown', reason: 'timeout' }, 2))
        .when(referenceResult({ kind: 'accepted', cardReference: { refId: '10901' } }, 3))
        .then([{ type: 'card-ref-created', cardRef: { refId: '10901' } }])
        .thenEffects([{ type: 'cancel-timer', timer: 'card-ref-alert' }])
        .thenState({ cardRef: { refId: '10901' }, cardRefRequest: undefined });
    });

    it('a re-ask lost again or not sent is asked again, no new event', () => {
      const requestId = requestIdOf(lost().state);
      lost()
        .when(referenceResult({ kind: 'unknown', reason: 'timeout' }, 2), at(3_000))
        .thenIgnored('NO_NEWS')
        .thenEffects([
          { type: 'resend-gateway-request', requestId, attempt: 3, afterNoTrace: true },
        ]);
      lost()
        .when(
          referenceResult({ kind: 'not-sent', reason: 'circuit open', retryAt: at(30_000) }, 2),
          at(3_000),
        )
        .thenIgnored('NO_NEWS')
        .thenEffects([
          { type: 'resend-gateway-request', requestId, attempt: 3, notBefore: at(30_000) },
        ]);
    });

    it('a re-ask refused, or answered without the reference, is not a failure: the first attempt may have made it (issue 32 item 11)', () => {
      const requestId = requestIdOf(lost().state);
      for (const reply of [
        { kind: 'rejected' as const, code: '429', message: 'too many requests' },
        { kind: 'accepted' as const },
      ]) {
        const refused = lost().when(referenceResult(reply, 2), at(3_000));
        refused
          .thenIgnored('NO_NEWS')
          .thenEffects([
            { type: 'resend-gateway-request', requestId, attempt: 3, afterNoTrace: true },
          ]);
        expect(refused.after).toMatchObject({
          cardRefRequest: { requestId, unknownSince: payments.T0 },
        });
        // The next re-ask brings the reference the first attempt made.
        lost()
          .and(referenceResult(reply, 2), at(3_000))
          .when(referenceResult({ kind: 'accepted', cardReference: { refId: '10901' } }, 3))
          .then([{ type: 'card-ref-created', cardRef: { refId: '10901' } }]);
      }
    });

    it('unknown for the same window as a payment raises the unknown-outcome alert once', () => {
      const requestId = requestIdOf(lost().state);
      const alertTimer = payments.timer({ kind: 'card-ref-alert', requestId });
      expect(DEFAULT_POLICY.unknownAlertAfterMs).toBe(HOUR);
      lost()
        .when(alertTimer, at(HOUR - 60_000))
        .thenIgnored('NO_NEWS')
        .thenEffects([{ type: 'schedule-timer', at: at(HOUR) }]);
      lost()
        .when(alertTimer, at(HOUR))
        .then([{ type: 'card-reference-unknown', requestId, since: payments.T0, alert: true }])
        .thenState({ cardRefRequest: expect.objectContaining({ alerted: true }) as never });
      lost()
        .and(alertTimer, at(HOUR))
        .when(alertTimer, at(2 * HOUR))
        .thenIgnored('TIMER_OBSOLETE');
      // Answered before the hour: the timer finds nothing to alert about.
      lost()
        .and(referenceResult({ kind: 'accepted', cardReference: { refId: '10901' } }, 2))
        .when(alertTimer, at(HOUR))
        .thenIgnored('TIMER_OBSOLETE');
    });

    it("an operator's refresh makes the pending re-ask of that very request now (no event); only its reply settles it", () => {
      const requestId = requestIdOf(lost().state);
      lost()
        .when(payments.command(refreshOf()), at(6 * 60_000))
        .then([])
        .thenEffects([{ type: 'hasten-resend', requestId }])
        .thenState({ cardRefRequest: expect.objectContaining({ requestId }) as never });
      // In the runtime's vocabulary: the saga's deferred resend of that request brought forward.
      const flow = cardPaymentFlow(DEFAULT_POLICY);
      const decision = flow.decide(
        asSaga(refreshOf()),
        lost().state,
        payments.testContext(at(6 * 60_000)),
      );
      expect(decision.effects).toEqual([{ type: 'hasten-resend', requestId }]);
      // The reply to the hastened re-ask settles it, as any reply to that request does.
      lost()
        .and(payments.command(refreshOf()), at(6 * 60_000))
        .when(referenceResult({ kind: 'accepted', cardReference: { refId: '10901' } }, 9))
        .then([{ type: 'card-ref-created', requestId, cardRef: { refId: '10901' } }]);
      // A reply about another request (a status reply, another card-reference request) does not.
      lost()
        .and(payments.command(refreshOf()), at(6 * 60_000))
        .when(payments.statusReply({ status: 'approved', cardRefId: '10901' } as never))
        .thenIgnored();
    });

    it('a refresh while the reply is still on its way, or once answered, has nothing to ask', () => {
      pending().when(payments.command(refreshOf())).thenRejected('NOTHING_TO_REFRESH');
      lost()
        .and(referenceResult({ kind: 'accepted', cardReference: { refId: '10901' } }, 2))
        .when(payments.command(refreshOf()))
        .thenRejected('NOTHING_TO_REFRESH');
    });

    it('get-card-info: the same (it only reads)', () => {
      const withRef = approvedSale()
        .and(cmd(createCardRef()))
        .and(referenceResult({ kind: 'accepted', cardReference: { refId: '10901' } }))
        .and(cmd(getCardInfo()));
      withRef
        .when(referenceResult({ kind: 'unknown', reason: 'timeout' }))
        .then([{ type: 'card-reference-unknown', operation: 'get-card-info', alert: false }]);
    });
  });

  it('a result for another request changes nothing', () => {
    approvedSale()
      .and(cmd(createCardRef()))
      .when({
        kind: 'gateway-result',
        result: {
          requestId: testUuid(),
          paymentId: PAYMENT_ID,
          operation: 'create-card-ref',
          attempt: 1,
          result: { kind: 'accepted', cardReference: { refId: '666' } },
          completedAt: payments.T0,
        },
      })
      .thenIgnored('STALE_REQUEST');
  });
});

describe('get-card-info', () => {
  it('reads BIN, last four and brand of the payment’s reference', () => {
    const withRef = () =>
      approvedSale()
        .and(cmd(createCardRef()))
        .and(referenceResult({ kind: 'accepted', cardReference: { refId: '10901' } }));
    withRef()
      .when(cmd(getCardInfo()))
      .then([{ type: 'card-info-requested', cardRef: { refId: '10901' } }])
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: expect.objectContaining({
            operation: 'get-card-info',
            cardRefId: '10901',
          }) as object,
        },
      ]);
    withRef()
      .and(cmd(getCardInfo()))
      .when(referenceResult({ kind: 'accepted', cardReference: { card: CARD } }))
      .then([{ type: 'card-info-reported', cardRef: { refId: '10901' }, card: CARD }]);
  });

  it('is refused without a reference', () => {
    approvedSale().when(cmd(getCardInfo())).thenRejected('INVALID_STATE');
  });
});

describe('a scheduled rebill reports its outcome to the schedule (binding)', () => {
  const flow = cardPaymentFlow(DEFAULT_POLICY);
  const rebill = rebillCommand({ schedule: { scheduleId: SCHEDULE_ID, cycle: 4, attempt: 1 } });
  const history = payments.givenInputs(cmd(rebill), payments.acceptedResult()).events;
  const state = fold(initialState, history);
  const callbackOf = (status: 'approved' | 'declined'): SagaInput => {
    const input = payments.callback(status, { transactionType: 'sale', errorCode: '116' })(state);
    if (input.kind !== 'callback') throw new Error('not a callback');
    return { kind: 'callback', callback: input.callback };
  };
  const starts = (effects: RuntimeEffect[]) => effects.filter((e) => e.type === 'start-saga');

  it.each(['approved', 'declined'] as const)(
    '%s → one record-cycle-outcome for (schedule, cycle, attempt) with an id derived from the payment',
    (status) => {
      const decision = flow.decide(callbackOf(status), state, payments.testContext());
      expect(starts(decision.effects)).toEqual([
        {
          type: 'start-saga',
          command: {
            type: 'record-cycle-outcome',
            commandId: derivedUuid(`${PAYMENT_ID}/record-cycle-outcome`),
            scheduleId: SCHEDULE_ID,
            merchant: MERCHANT,
            occurredAt: payments.T0,
            cycle: 4,
            attempt: 1,
            paymentId: PAYMENT_ID,
            outcome: status,
            ...(status === 'declined' ? { code: '116' } : {}),
          },
        },
      ]);
    },
  );

  it('nothing before the outcome, nothing for a duplicate callback after it, nothing for a rebill without schedule', () => {
    expect(
      starts(
        flow.decide(
          {
            kind: 'command',
            command: {
              type: 'rebill',
              commandId: rebill.commandId,
              sagaId: PAYMENT_ID,
              endpointId: '1234',
              body: rebill,
            },
          },
          initialState,
          payments.testContext(),
        ).effects,
      ),
    ).toEqual([]);
    const settled = fold(
      state,
      flow.decide(callbackOf('approved'), state, payments.testContext()).events as PaymentEvent[],
    );
    expect(
      starts(flow.decide(callbackOf('approved'), settled, payments.testContext()).effects),
    ).toEqual([]);
    const plain = fold(
      initialState,
      payments.givenInputs(cmd(rebillCommand()), payments.acceptedResult()).events,
    );
    expect(
      starts(flow.decide(callbackOf('approved'), plain, payments.testContext()).effects),
    ).toEqual([]);
  });
});

describe('create-card-ref with a schedule: the schedule starts on the new reference (binding)', () => {
  const flow = cardPaymentFlow(DEFAULT_POLICY);
  const { scheduleId, amount, description, rule } = createScheduleCommand();
  const schedule = { scheduleId, amount, description, rule };
  const request: CardReferenceCommand = { ...createCardRef(), type: 'create-card-ref', schedule };
  const starts = (effects: RuntimeEffect[]) => effects.filter((e) => e.type === 'start-saga');
  /** The reference's answer, made on `pending`, decided by the flow as the runtime hands it over. */
  const answered = (answer: (state: PaymentState) => PaymentInput, pending: PaymentState) => {
    const input = answer(pending);
    if (input.kind !== 'gateway-result') throw new Error('not a result');
    return flow.decide(
      { kind: 'gateway-result', result: input.result },
      pending,
      payments.testContext(),
    );
  };

  it('create-schedule on the reference once card-ref-created, with the payment’s merchant and an id derived from (payment, schedule)', () => {
    const approved = fold(initialState, approvedSale().events);
    const asked = flow.decide(asSaga(request), approved, payments.testContext());
    expect(starts(asked.effects)).toEqual([]);
    const pending = fold(approved, asked.events);
    const created = answered(
      referenceResult({ kind: 'accepted', cardReference: { refId: '10901' } }),
      pending,
    );
    expect(created.events).toEqual([
      expect.objectContaining({ type: 'card-ref-created', schedule }),
    ]);
    expect(starts(created.effects)).toEqual([
      {
        type: 'start-saga',
        command: {
          type: 'create-schedule',
          commandId: derivedUuid(`${PAYMENT_ID}/create-schedule/${SCHEDULE_ID}`),
          merchant: MERCHANT,
          occurredAt: payments.T0,
          cardRef: { refId: '10901' },
          ...schedule,
        },
      },
    ]);
  });

  it('no schedule when the reference was not made', () => {
    const approved = fold(initialState, approvedSale().events);
    const pending = fold(
      approved,
      flow.decide(asSaga(request), approved, payments.testContext()).events,
    );
    const failed = answered(
      referenceResult({ kind: 'rejected', code: '2', message: 'no such order' }),
      pending,
    );
    expect(failed.events).toEqual([expect.objectContaining({ type: 'card-reference-failed' })]);
    expect(starts(failed.effects)).toEqual([]);
  });
});
