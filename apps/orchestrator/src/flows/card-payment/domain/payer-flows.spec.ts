import type {
  AccountVerificationCommand,
  AccountVerificationFormCommand,
  PaymentCommand,
  SaleFormCommand,
} from '@payments/contracts';
import { captureCommand, PAYMENT_ID, saleCommand, testUuid } from '@payments/contracts/testing';
import * as payments from '../../../../test/kits/card-payment.kit';
import type { PaymentInput } from './inputs';
import type { PaymentState } from './state';

/**
 * Payer-facing branches as given/when/then: hosted forms, 3-D Secure on a sale, the uploads from the
 * merchant's front end, and account verification. Whatever the payer's browser does, money is
 * confirmed only by the gateway: a verified server callback naming the operation or a status
 * reply; the browser's return is a hint that brings the status query forward.
 */

const { sealedCard, ...saleFields } = saleCommand();
const form = (type: SaleFormCommand['type'] | 'preauth-form' | 'payment-form') =>
  ({ ...saleFields, type, commandId: testUuid() }) as PaymentCommand;
const { amount: _amount, order, ...verificationFields } = saleFields;
const verification = (): AccountVerificationCommand => ({
  ...verificationFields,
  type: 'account-verification',
  commandId: testUuid(),
  order: { description: order.description },
  sealedCard,
});
const verificationForm = (): AccountVerificationFormCommand => ({
  ...verificationFields,
  type: 'account-verification-form',
  commandId: testUuid(),
  order: { description: order.description },
});
const reference = () => {
  const { type: _t, ...base } = captureCommand();
  return { ...base, commandId: testUuid(), paymentId: PAYMENT_ID };
};

const FORM_URL = 'https://gateway.example/hpp/token-1';
const ACS_URL = 'https://acs.example/challenge/1';

/** The payer's browser back on our return endpoint with a valid control: a hint, never an answer. */
const browserReturn =
  (status: 'approved' | 'declined') =>
  (state: PaymentState): PaymentInput => {
    const input = payments.callback(status)(state);
    return input.kind === 'callback'
      ? { ...input, callback: { ...input.callback, source: 'browser-return' } }
      : input;
  };

const pollNow = {
  type: 'schedule-timer',
  timer: { kind: 'status-poll', attempt: 1 },
  at: payments.T0,
} as const;

describe('hosted forms (sale-form, preauth-form, payment-form)', () => {
  it.each([
    ['sale-form', 'sale'],
    ['payment-form', 'sale'],
    ['preauth-form', 'preauth'],
  ] as const)(
    '%s → operation-requested (%s via hosted-form) and a form request with no card at all',
    (type, operation) => {
      const o = payments
        .given()
        .when(payments.command(form(type)))
        .then([
          {
            type: 'operation-requested',
            operation,
            via: 'hosted-form',
            amount: { minor: 10_000, currency: 'EUR' },
            clientOrderId: PAYMENT_ID,
          },
        ])
        .thenEffects([
          {
            type: 'send-gateway-request',
            request: expect.objectContaining({
              operation: type,
              redirectUrl: saleFields.redirectUrl,
            }),
          },
        ])
        .thenState({ status: 'requested', kind: operation });
      expect(JSON.stringify(o.decision.effects)).not.toContain('sealedCard');
    },
  );

  it('the gateway answers with the form URL → action-required (redirect), payer goes there', () => {
    payments
      .givenInputs(payments.command(form('sale-form')))
      .when(payments.result({ kind: 'accepted', gatewayOrderId: 'gw-9', redirectUrl: FORM_URL }))
      .then([
        { type: 'accepted-by-gateway', gatewayOrderId: 'gw-9' },
        { type: 'action-required', action: { kind: 'redirect', url: FORM_URL } },
      ])
      .thenState({ status: 'action-required', gatewayOrderId: 'gw-9' });
  });

  const onForm = () =>
    payments.givenInputs(
      payments.command(form('sale-form')),
      payments.result({ kind: 'accepted', gatewayOrderId: 'gw-777', redirectUrl: FORM_URL }),
    );

  it('the payer back from the form (verified return) only brings the status query forward', () => {
    onForm()
      .when(browserReturn('approved'))
      .thenIgnored('HINT_ONLY')
      .thenEffects([pollNow])
      .thenState({ status: 'action-required' });
  });

  it('a verified server callback naming the sale → approved', () => {
    onForm()
      .when(
        payments.callback('approved', { card: { bin: '444444', lastFour: '4448', brand: 'VISA' } }),
      )
      .then([{ type: 'approved', amount: { minor: 10_000, currency: 'EUR' } }])
      .thenState({ status: 'approved', captured: 10_000 });
  });

  describe('payment-form: the gateway decides the transaction, its answer names it', () => {
    const onUniversalForm = () =>
      payments.givenInputs(
        payments.command(form('payment-form')),
        payments.result({ kind: 'accepted', gatewayOrderId: 'gw-777', redirectUrl: FORM_URL }),
      );
    const approvedAs = (transactionType: string) => ({
      status: 'approved' as const,
      gatewayOrderId: 'gw-777',
      amount: { minor: 10_000, currency: 'EUR' },
      transactionType,
    });

    it('a status reply naming a preauth → authorized (a hold), and a capture is accepted', () => {
      onUniversalForm()
        .when(payments.statusReply(approvedAs('preauth')))
        .then([
          {
            type: 'authorized',
            amount: { minor: 10_000, currency: 'EUR' },
          },
        ])
        .thenState({ status: 'authorized', kind: 'preauth', authorized: 10_000, captured: 0 });
      onUniversalForm()
        .and(payments.statusReply(approvedAs('preauth')))
        .when(payments.command({ ...reference(), type: 'capture' }))
        .then([{ type: 'operation-requested', operation: 'capture' }]);
    });

    it('a verified server callback of type preauth → authorized, never approved', () => {
      onUniversalForm()
        .when(payments.callback('approved', { transactionType: 'preauth' }))
        .then([{ type: 'authorized' }])
        .thenState({ status: 'authorized', kind: 'preauth', captured: 0 });
    });

    it('a status reply naming a sale → approved (charged), as before', () => {
      onUniversalForm()
        .when(payments.statusReply(approvedAs('sale')))
        .then([{ type: 'approved' }])
        .thenState({ status: 'approved', kind: 'sale', captured: 10_000 });
    });

    it('a final status that names no transaction type settles nothing: charged or held cannot be told', () => {
      const { transactionType: _t, ...unnamed } = approvedAs('preauth');
      onUniversalForm()
        .when(payments.statusReply(unnamed))
        .thenIgnored('NOT_ABOUT_THIS_OPERATION')
        .thenState({ status: 'action-required' });
    });

    it.each(['authorization', 'hold'])(
      'a final status naming a type the table does not know (%s) settles nothing: still polled',
      (transactionType) => {
        onUniversalForm()
          .when(payments.statusReply(approvedAs(transactionType)))
          .thenIgnored('NOT_ABOUT_THIS_OPERATION')
          .thenState({ status: 'action-required' });
        onUniversalForm()
          .when(payments.callback('approved', { transactionType }))
          .thenIgnored('NOT_ABOUT_THIS_OPERATION')
          .thenState({ status: 'action-required' });
      },
    );

    it('sale-form stays a sale: a callback naming a preauth is not about it', () => {
      onForm()
        .when(payments.callback('approved', { transactionType: 'preauth' }))
        .thenIgnored('NOT_ABOUT_THIS_OPERATION')
        .thenState({ status: 'action-required' });
    });
  });

  describe('the form reply lost (the form address never came back)', () => {
    const HOUR = 60 * 60 * 1000;
    const lost = (type: 'sale-form' | 'preauth-form' | 'payment-form') =>
      payments.givenInputs(
        payments.command(form(type)),
        payments.result({ kind: 'unknown', reason: 'timeout' }),
      );

    it.each(['sale-form', 'preauth-form', 'payment-form'] as const)(
      '%s: a processing status stays unknown (no payer can reach the form); the shared rule alerts after the hour',
      (type) => {
        lost(type)
          .when(
            payments.statusReply({ status: 'processing', gatewayOrderId: 'gw-1' }),
            payments.at(5_000),
          )
          .thenIgnored('NO_NEWS')
          .thenEffects([])
          .thenState({ status: 'outcome-unknown' });
        const requestId = lost(type).state.inFlight?.requestId ?? '';
        lost(type)
          .and(
            payments.statusReply({ status: 'processing', gatewayOrderId: 'gw-1' }),
            payments.at(5_000),
          )
          .when(payments.timer({ kind: 'unknown-alert', requestId }), payments.at(HOUR))
          .then([{ type: 'outcome-unknown', alert: true, since: payments.T0 }]);
      },
    );

    it('the status reply with a final outcome still resolves it', () => {
      lost('sale-form')
        .when(
          payments.statusReply({ status: 'declined', gatewayOrderId: 'gw-1' }),
          payments.at(5_000),
        )
        .then([{ type: 'declined' }]);
    });

    it('a sale with the card sent is not held: processing means the gateway works on it', () => {
      payments
        .givenInputs(
          payments.command(saleCommand()),
          payments.result({ kind: 'unknown', reason: 'timeout' }),
        )
        .when(
          payments.statusReply({ status: 'processing', gatewayOrderId: 'gw-1' }),
          payments.at(5_000),
        )
        .then([{ type: 'accepted-by-gateway' }])
        .thenState({ status: 'processing' });
    });
  });

  it('a status reply while the payer is still on the form changes nothing; the poll asks again', () => {
    onForm()
      .when(payments.statusReply({ status: 'processing' }))
      .thenIgnored('NO_NEWS');
  });

  it('preauth-form authorized → capture sends the capture on the form order', () => {
    payments
      .givenInputs(
        payments.command(form('preauth-form')),
        // The form's reply names its serial: the capture goes out at once (decide-serial.ts holds
        // it while a serial is still asked for: serial-learnt.spec.ts).
        payments.result({
          kind: 'accepted',
          gatewayOrderId: 'gw-5',
          serialNumber: 'sn-form',
          redirectUrl: FORM_URL,
        }),
        payments.callback('approved', { gatewayOrderId: 'gw-5' }),
      )
      .when(payments.command({ ...captureCommand(), commandId: testUuid() }))
      .then([{ type: 'operation-requested', operation: 'capture' }])
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: expect.objectContaining({ operation: 'capture', gatewayOrderId: 'gw-5' }),
        },
      ]);
  });

  it('a zero amount, or a payment that exists already, is refused', () => {
    payments
      .given()
      .when(
        payments.command({
          ...form('sale-form'),
          amount: { minor: 0, currency: 'EUR' },
        } as PaymentCommand),
      )
      .thenRejected('INVALID_AMOUNT');
    onForm()
      .when(payments.command(form('preauth-form')))
      .thenRejected('PAYMENT_ALREADY_EXISTS');
  });
});

describe('3-D Secure on a sale', () => {
  const sent = () =>
    payments.givenInputs(payments.command(saleCommand()), payments.acceptedResult());
  const challenged = () =>
    sent().and(payments.statusReply({ status: 'processing', redirectUrl: ACS_URL }));

  it('challenge announced → action-required with the ACS URL', () => {
    sent()
      .when(payments.statusReply({ status: 'processing', redirectUrl: ACS_URL }))
      .then([{ type: 'action-required', action: { kind: 'redirect', url: ACS_URL } }])
      .thenState({ status: 'action-required' });
  });

  it('challenge passed: the browser return is a hint; the status reply approves', () => {
    challenged().when(browserReturn('approved')).thenIgnored('HINT_ONLY').thenEffects([pollNow]);
    challenged()
      .and(browserReturn('approved'))
      .when(payments.statusReply({ status: 'approved', transactionType: 'sale' }))
      .then([{ type: 'approved' }])
      .thenState({ status: 'approved' });
  });

  it('challenge failed → declined (status reply)', () => {
    challenged()
      .when(
        payments.statusReply({
          status: 'declined',
          errorMessage: '3-D Secure authentication failed',
        }),
      )
      .then([{ type: 'declined', message: '3-D Secure authentication failed' }])
      .thenState({ status: 'declined' });
  });

  it('frictionless → approved with no action-required at all', () => {
    sent()
      .when(payments.statusReply({ status: 'approved', transactionType: 'sale' }))
      .then([{ type: 'approved' }]);
  });

  it('payer abandons: polling goes on until the gateway gives up on the challenge → declined', () => {
    const s = challenged();
    const poll = s
      .when(
        payments.timer({ kind: 'status-poll', requestId: s.state.inFlight!.requestId, attempt: 3 }),
      )
      .thenEffects([
        { type: 'send-gateway-request', request: expect.objectContaining({ operation: 'status' }) },
        { type: 'schedule-timer', timer: { kind: 'status-poll', attempt: 4 } },
      ]);
    expect(poll.decision.events).toEqual([]);
    s.when(payments.statusReply({ status: 'processing', redirectUrl: ACS_URL })).thenIgnored(
      'NO_NEWS',
    );
    s.when(payments.statusReply({ status: 'declined', errorMessage: 'challenge timed out' }))
      .then([{ type: 'declined' }])
      .thenState({ status: 'declined' });
  });
});

describe('3-D Secure uploads from the front end', () => {
  const challenged = () =>
    payments.givenInputs(
      payments.command(saleCommand()),
      payments.acceptedResult('gw-3'),
      payments.statusReply({ status: 'processing', redirectUrl: ACS_URL }),
    );

  it('method step announced → action-required (threeds-method) once; then the challenge', () => {
    const method = { url: 'https://acs.example/method/1', threeDSServerTransID: 'tx-1' };
    const sent = payments.givenInputs(
      payments.command(saleCommand()),
      payments.acceptedResult('gw-3'),
    );
    const o = sent
      .when(payments.statusReply({ status: 'processing', threeDSMethod: method }))
      .then([{ type: 'action-required', action: { kind: 'threeds-method', ...method } }]);
    const announced = payments.given(...sent.events, ...o.decision.events);
    announced
      .when(payments.statusReply({ status: 'processing', threeDSMethod: method }))
      .thenIgnored('NO_NEWS');
    announced
      .when(payments.statusReply({ status: 'processing', redirectUrl: ACS_URL }))
      .then([{ type: 'action-required', action: { kind: 'redirect', url: ACS_URL } }]);
  });

  it('10-second rule: the method step still pending at its deadline → the service uploads N', () => {
    const method = { url: 'https://acs.example/method/1', threeDSServerTransID: 'tx-1' };
    const sent = payments.givenInputs(
      payments.command(saleCommand()),
      payments.acceptedResult('gw-3'),
    );
    const announce = sent.when(
      payments.statusReply({ status: 'processing', threeDSMethod: method }),
    );
    expect(announce.decision.effects).toContainEqual({
      type: 'schedule-timer',
      timer: { kind: 'threeds-method-deadline', requestId: sent.state.inFlight!.requestId },
      at: payments.at(10_000),
    });
    const pending = payments.given(...sent.events, ...announce.decision.events);
    const deadline = payments.timer({
      kind: 'threeds-method-deadline',
      requestId: sent.state.inFlight!.requestId,
    });
    pending
      .when(deadline, payments.at(10_000))
      .thenIgnored('NO_NEWS')
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: expect.objectContaining({
            operation: 'upload-method-url-result',
            gatewayOrderId: 'gw-3',
            threeDSCompInd: 'N',
            threeDSServerTransID: 'tx-1',
          }),
        },
      ]);
    // The front end reported in time: the challenge was announced, the deadline is obsolete.
    pending
      .and(payments.statusReply({ status: 'processing', redirectUrl: ACS_URL }))
      .when(deadline, payments.at(10_000))
      .thenIgnored('TIMER_OBSOLETE')
      .thenEffects([]);
  });

  it.each(['Y', 'N', 'U'] as const)(
    'upload-method-url-result threeDSCompInd %s → the upload on the order, no event',
    (ind) => {
      challenged()
        .when(
          payments.command({
            ...reference(),
            type: 'upload-method-url-result',
            threeDSCompInd: ind,
            threeDSServerTransID: 'tx-1',
          }),
        )
        .then([])
        .thenEffects([
          {
            type: 'send-gateway-request',
            request: expect.objectContaining({
              operation: 'upload-method-url-result',
              gatewayOrderId: 'gw-3',
              threeDSCompInd: ind,
              threeDSServerTransID: 'tx-1',
            }),
          },
        ]);
    },
  );

  it('upload-cres-result and upload-pares-result carry the ACS answer to the gateway', () => {
    challenged()
      .when(payments.command({ ...reference(), type: 'upload-cres-result', cRes: 'eyJhIjoxfQ==' }))
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: expect.objectContaining({
            operation: 'upload-cres-result',
            cRes: 'eyJhIjoxfQ==',
          }),
        },
      ]);
    challenged()
      .when(
        payments.command({ ...reference(), type: 'upload-pares-result', paRes: 'PFBBUmVzPg==' }),
      )
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: expect.objectContaining({
            operation: 'upload-pares-result',
            paRes: 'PFBBUmVzPg==',
          }),
        },
      ]);
  });

  it('an accepted upload brings the status query forward; a refused one changes nothing', () => {
    const s = challenged();
    const uploadResult =
      (kind: 'accepted' | 'rejected') =>
      (state: PaymentState): PaymentInput => ({
        kind: 'gateway-result',
        result: {
          requestId: testUuid(),
          paymentId: state.status === 'initial' ? '' : state.paymentId,
          operation: 'upload-cres-result',
          attempt: 1,
          result:
            kind === 'accepted'
              ? { kind: 'accepted', gatewayOrderId: 'gw-3' }
              : { kind: 'rejected', code: '1', message: 'cRes belongs to another transaction' },
          completedAt: payments.T0,
        },
      });
    s.when(uploadResult('accepted')).thenIgnored('NO_NEWS').thenEffects([pollNow]);
    s.when(uploadResult('rejected')).thenIgnored('UPLOAD_REFUSED').thenEffects([]);
  });

  it('an upload with nothing awaiting the payer is refused with a reason', () => {
    const cres = () =>
      payments.command({ ...reference(), type: 'upload-cres-result', cRes: 'eyJ9' });
    payments.given().when(cres()).thenRejected('PAYMENT_NOT_FOUND');
    payments
      .givenInputs(payments.command(saleCommand()))
      .when(cres())
      .thenRejected('NO_PAYER_ACTION_PENDING');
    challenged()
      .and(payments.statusReply({ status: 'approved', transactionType: 'sale' }))
      .when(cres())
      .thenRejected('NO_PAYER_ACTION_PENDING');
  });
});

describe('account verification', () => {
  it('direct: zero amount (XXX, nothing charged), the sealed card to the gateway', () => {
    payments
      .given()
      .when(payments.command(verification()))
      .then([
        {
          type: 'operation-requested',
          operation: 'account-verification',
          amount: { minor: 0, currency: 'XXX' },
        },
      ])
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: expect.objectContaining({ operation: 'account-verification', sealedCard }),
        },
      ])
      .thenState({ status: 'requested', kind: 'account-verification' });
  });

  const sent = () =>
    payments.givenInputs(payments.command(verification()), payments.acceptedResult());

  it('approved callback naming it → account-verified; nothing authorized or captured', () => {
    sent()
      .when(
        payments.callback('approved', { card: { bin: '444444', lastFour: '4448', brand: 'VISA' } }),
      )
      .then([{ type: 'account-verified', card: { lastFour: '4448' } }])
      .thenState({ status: 'verified', authorized: 0, captured: 0, inFlight: undefined });
  });

  it('declined → declined', () => {
    sent()
      .when(payments.callback('declined'))
      .then([{ type: 'declined' }])
      .thenState({ status: 'declined' });
  });

  it('a callback naming a sale is not about it; capture and return are refused afterwards', () => {
    sent()
      .when((s) => {
        const input = payments.callback('approved')(s);
        return input.kind === 'callback' ? { ...input, about: ['sale'] } : input;
      })
      .thenIgnored('NOT_ABOUT_THIS_OPERATION');
    const verified = sent().and(payments.callback('approved'));
    verified
      .when(payments.command({ ...captureCommand(), commandId: testUuid() }))
      .thenRejected('NOT_A_PREAUTH');
    verified
      .when(payments.command({ ...captureCommand(), type: 'return', commandId: testUuid() }))
      .thenRejected('INVALID_STATE');
  });

  it('hosted: account-verification-form → form URL → action-required, then verified by callback', () => {
    const o = payments
      .given()
      .when(payments.command(verificationForm()))
      .then([
        { type: 'operation-requested', operation: 'account-verification', via: 'hosted-form' },
      ])
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: expect.objectContaining({ operation: 'account-verification-form' }),
        },
      ]);
    expect(JSON.stringify(o.decision.effects)).not.toContain('sealedCard');
    payments
      .givenInputs(payments.command(verificationForm()))
      .and(payments.result({ kind: 'accepted', gatewayOrderId: 'gw-7', redirectUrl: FORM_URL }))
      .when(payments.callback('approved', { gatewayOrderId: 'gw-7' }))
      .then([{ type: 'account-verified' }]);
  });
});
