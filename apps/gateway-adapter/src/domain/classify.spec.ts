import type {
  AsyncFormResponse,
  AsyncResponse,
  CallResult,
  CardInfoResponse,
  CardRefResponse,
  StatusResponse,
} from '@payments/payment-gateway';
import { decodeReplyBody, parseReply } from '@payments/payment-gateway';
import { maskCardNumbers } from '@payments/core';
import { classifyCall, statusReport } from './classify';
import { resultEventId } from './result-id';

/** A mutating call (not a status query): what most of these replies answer. */
const classifySend = (result: Parameters<typeof classifyCall>[0]) =>
  classifyCall(result, { operation: 'sale' });

const statusReply = (over: Partial<StatusResponse> = {}): StatusResponse => ({
  type: 'status-response',
  status: 'approved',
  final: true,
  paynetOrderId: '900001',
  amount: '10.42',
  amountMinor: 1042,
  currency: 'USD',
  approvalCode: '123456',
  bin: '444455',
  lastFourDigits: '1111',
  cardType: 'VISA',
  raw: {},
  ...over,
});

describe('statusReport', () => {
  it('maps a status-response to the contract report with minor units and no PAN', () => {
    expect(statusReport(statusReply())).toEqual({
      status: 'approved',
      gatewayOrderId: '900001',
      amount: { minor: 1042, currency: 'USD' },
      approvalCode: '123456',
      card: { bin: '444455', lastFour: '1111', brand: 'VISA' },
    });
  });

  describe('an amount the reply sent but that cannot be read is kept as unreadable, never dropped', () => {
    /** A status-response body as the gateway sends it, through the client's own parsing. */
    const fromWire = (fields: Record<string, string>): StatusResponse => {
      const body = new URLSearchParams({
        type: 'status-response',
        status: 'approved',
        'paynet-order-id': '900001',
        'merchant-order-id': 'order-1',
        'serial-number': 'sn-1',
        ...fields,
      }).toString();
      const raw = decodeReplyBody(body);
      if (raw === undefined) throw new Error('body not decoded');
      const parsed = parseReply(raw, 'status-response', 200);
      if (!parsed.ok || parsed.reply.type !== 'status-response') throw new Error('not parsed');
      return parsed.reply;
    };

    it.each([
      [
        { amount: 'eur', currency: 'EUR' },
        { amount: 'eur', currency: 'EUR' },
      ],
      [
        { amount: '7,000.00', currency: 'EUR' },
        { amount: '7,000.00', currency: 'EUR' },
      ],
      [
        { amount: '70.005', currency: 'USD' },
        { amount: '70.005', currency: 'USD' },
      ],
      [
        { amount: '70.00', currency: 'XYZ' },
        { amount: '70.00', currency: 'XYZ' },
      ],
      [{ amount: '70.00' }, { amount: '70.00' }],
    ])('%j → unreadableAmount %j, no amount', (fields, unreadable) => {
      const report = statusReport(fromWire(fields));
      expect(report.amount).toBeUndefined();
      expect(report.unreadableAmount).toEqual(unreadable);
    });

    it('a readable amount is the amount, and no amount at all is neither', () => {
      expect(statusReport(fromWire({ amount: '70.00', currency: 'EUR' }))).toMatchObject({
        amount: { minor: 7_000, currency: 'EUR' },
      });
      expect(statusReport(fromWire({ amount: '70.00', currency: 'EUR' }))).not.toHaveProperty(
        'unreadableAmount',
      );
      const none = statusReport(fromWire({}));
      expect(none).not.toHaveProperty('amount');
      expect(none).not.toHaveProperty('unreadableAmount');
    });
  });

  it('keeps the 3-D Secure redirect only when it is a URL, and drops malformed card parts', () => {
    const report = statusReport(
      statusReply({
        status: 'processing',
        redirectTo: 'https://acs.example/challenge',
        bin: '44',
        lastFourDigits: 'x',
        cardType: undefined,
      }),
    );
    expect(report.redirectUrl).toBe('https://acs.example/challenge');
    expect(report.card).toBeUndefined();
    expect(statusReport(statusReply({ redirectTo: 'not a url' })).redirectUrl).toBeUndefined();
  });

  it('reports the 3-D Secure method step only with both its URL and transaction id', () => {
    const method = { threeDSMethodUrl: 'https://acs.example/method', threeDSServerTransId: 'tx-1' };
    expect(statusReport(statusReply({ status: 'processing', ...method })).threeDSMethod).toEqual({
      url: 'https://acs.example/method',
      threeDSServerTransID: 'tx-1',
    });
    expect(
      statusReport(statusReply({ status: 'processing', threeDSServerTransId: 'tx-1' }))
        .threeDSMethod,
    ).toBeUndefined();
    expect(
      statusReport(statusReply({ ...method, threeDSMethodUrl: 'javascript:alert(1)' }))
        .threeDSMethod,
    ).toBeUndefined();
  });

  it('classifies a hosted form reply as accepted with the form URL', () => {
    expect(
      classifySend({
        outcome: 'accepted',
        reply: {
          type: 'async-form-response',
          paynetOrderId: '77',
          redirectUrl: 'https://gateway.example/hpp/t1',
          raw: {},
        },
      } as CallResult<AsyncFormResponse>),
    ).toEqual({
      kind: 'accepted',
      gatewayOrderId: '77',
      redirectUrl: 'https://gateway.example/hpp/t1',
    });
  });

  it('masks card numbers the gateway echoes in messages', () => {
    const report = statusReport(
      statusReply({ status: 'declined', errorMessage: 'card 4444 5555 6666 1111 refused' }),
    );
    expect(report.errorMessage).toBe('card 444455******1111 refused');
    expect(maskCardNumbers('order 12345')).toBe('order 12345');
  });
});

describe('classifyCall', () => {
  const base = { operation: 'v2/sale', durationMs: 5 };
  const accepted = (reply: AsyncResponse): CallResult<AsyncResponse> => ({
    ...base,
    outcome: 'accepted',
    httpStatus: 200,
    reply,
  });

  it('a hosted form (payout-form): accepted with the form URL; a URL that is not http(s) is dropped', () => {
    const form = (redirectUrl: string): CallResult<AsyncFormResponse> => ({
      ...base,
      outcome: 'accepted',
      httpStatus: 200,
      reply: { type: 'async-form-response', paynetOrderId: '78', redirectUrl, raw: {} },
    });
    expect(classifySend(form('https://gw.example/hpp/abc'))).toEqual({
      kind: 'accepted',
      gatewayOrderId: '78',
      redirectUrl: 'https://gw.example/hpp/abc',
    });
    expect(classifySend(form('javascript:alert(1)'))).toEqual({
      kind: 'accepted',
      gatewayOrderId: '78',
    });
  });

  it('accepted: the gateway order id; a report only when the reply says more than processing', () => {
    expect(
      classifySend(accepted({ type: 'async-response', paynetOrderId: '77', raw: {} })),
    ).toEqual({ kind: 'accepted', gatewayOrderId: '77' });
    expect(
      classifySend(
        accepted({
          type: 'async-response',
          paynetOrderId: '77',
          status: 'declined',
          errorCode: '3',
          raw: {},
        }),
      ),
    ).toEqual({
      kind: 'accepted',
      gatewayOrderId: '77',
      report: { status: 'declined', gatewayOrderId: '77', errorCode: '3' },
    });
  });

  it('status query: accepted with the report', () => {
    const result = classifyCall(
      {
        ...base,
        outcome: 'accepted',
        httpStatus: 200,
        reply: statusReply({ status: 'declined', errorCode: '116' }),
      },
      { operation: 'status' },
    );
    expect(result).toMatchObject({
      kind: 'accepted',
      report: { status: 'declined', errorCode: '116' },
    });
  });

  it('a mutating reply carries its serial number; a status reply names the request it describes', () => {
    expect(
      classifySend(
        accepted({ type: 'async-response', paynetOrderId: '77', serialNumber: 'sn-1', raw: {} }),
      ),
    ).toEqual({ kind: 'accepted', gatewayOrderId: '77', serialNumber: 'sn-1' });
    const status = (byRequestSn: string | undefined, subjectSerial?: string) =>
      classifyCall(
        {
          ...base,
          outcome: 'accepted',
          httpStatus: 200,
          reply: statusReply({
            status: 'approved',
            serialNumber: 'sn-of-the-query',
            ...(byRequestSn === undefined ? {} : { byRequestSn }),
          }),
        },
        { operation: 'status', ...(subjectSerial === undefined ? {} : { subjectSerial }) },
      );
    const described = (r: ReturnType<typeof status>) =>
      r.kind === 'accepted' ? r.report?.requestSerial : undefined;
    expect(status('sn-2')).not.toHaveProperty('serialNumber');
    expect(described(status('sn-2'))).toBe('sn-2');
    expect(described(status('sn-2', 'sn-3'))).toBe('sn-2');
    // Asked by-request-sn and answered without saying: the answer is about the request asked.
    expect(described(status(undefined, 'sn-3'))).toBe('sn-3');
    expect(described(status(undefined))).toBeUndefined();
  });

  it('a status query refused because the order does not exist says so; other refusals do not', () => {
    const refused = (
      reason: 'validation' | 'business-rule' | 'authentication' | 'http-status',
      errorMessage: string | undefined,
      operation = 'status',
    ) =>
      classifyCall(
        {
          ...base,
          outcome: 'rejected',
          reason,
          ...(errorMessage === undefined ? {} : { errorMessage }),
        },
        { operation },
      );
    expect(refused('validation', 'unknown client_orderid 9f2')).toMatchObject({
      orderUnknown: true,
    });
    expect(refused('validation', 'unknown orderid 12')).toMatchObject({ orderUnknown: true });
    expect(refused('business-rule', 'Order not found')).toMatchObject({ orderUnknown: true });
    for (const other of [
      refused('authentication', 'unknown client_orderid 9f2'),
      refused('http-status', undefined),
      refused('validation', 'login does not match the endpoint'),
      refused('validation', 'no request with serial number 00-1 on this order'),
      refused('validation', 'unknown client_orderid 9f2', 'capture'),
    ])
      expect(other).not.toHaveProperty('orderUnknown');
  });

  it('rejected, not-sent and unknown keep their reasons; unknown is never declined', () => {
    expect(
      classifySend({
        ...base,
        outcome: 'rejected',
        reason: 'validation',
        errorCode: '2',
        errorMessage: 'bad',
      }),
    ).toEqual({ kind: 'rejected', code: '2', message: 'bad' });
    expect(classifySend({ ...base, outcome: 'rejected', reason: 'client-validation' })).toEqual({
      kind: 'rejected',
      code: 'client-validation',
      message: 'rejected: client-validation',
    });
    expect(classifySend({ ...base, outcome: 'not-sent', reason: 'connection-refused' })).toEqual({
      kind: 'not-sent',
      reason: 'connection-refused',
    });
    expect(
      classifySend({
        ...base,
        outcome: 'unknown',
        reason: 'server-error',
        httpStatus: 500,
        resolveByStatusQuery: true,
        retriable: false,
      }),
    ).toEqual({ kind: 'unknown', reason: 'server-error (HTTP 500)' });
  });
});

describe('resultEventId', () => {
  it('is a stable UUID per request and attempt', () => {
    const a = resultEventId('0f8b8c1e-4d4a-4c4e-9a53-6f1f0c2d3e4a', 1);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(resultEventId('0f8b8c1e-4d4a-4c4e-9a53-6f1f0c2d3e4a', 1)).toBe(a);
    expect(resultEventId('0f8b8c1e-4d4a-4c4e-9a53-6f1f0c2d3e4a', 2)).not.toBe(a);
  });
});

describe('classifyCall: card references', () => {
  const base = {
    operation: 'v2/create-card-ref',
    durationMs: 5,
    outcome: 'accepted',
    httpStatus: 200,
  } as const;

  it('create-card-ref: the reference id (and the order id)', () => {
    const reply: CardRefResponse = {
      type: 'create-card-ref-response',
      cardRefId: '10901',
      paynetOrderId: '900001',
      raw: {},
    };
    expect(classifySend({ ...base, reply })).toEqual({
      kind: 'accepted',
      gatewayOrderId: '900001',
      cardReference: { refId: '10901' },
    });
    expect(classifySend({ ...base, reply: { ...reply, cardRefId: 'a b' } })).toEqual({
      kind: 'accepted',
      gatewayOrderId: '900001',
      cardReference: {},
    });
  });

  it('get-card-info: BIN, last four and brand; never the holder name or the expiry', () => {
    const reply: CardInfoResponse = {
      type: 'get-card-info-response',
      cardPrintedName: 'JANE DOE',
      bin: '444444',
      lastFourDigits: '4448',
      cardType: 'VISA',
      expireMonth: '03',
      expireYear: '2031',
      raw: {},
    };
    const classified = classifySend({ ...base, operation: 'v2/get-card-info', reply });
    expect(classified).toEqual({
      kind: 'accepted',
      cardReference: { card: { bin: '444444', lastFour: '4448', brand: 'VISA' } },
    });
    expect(JSON.stringify(classified)).not.toMatch(/JANE|2031/);
  });
});
