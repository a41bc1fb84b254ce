import { vector } from '../test/support';
import { redactFields, redactReply, maskPan } from './redaction';
import { decodeReplyBody, parseReply } from './replies';

describe('reply decoding', () => {
  it('never lets a reply key reach an object prototype (form or JSON)', () => {
    expect(decodeReplyBody('__proto__=x')).toBeUndefined();
    const form = decodeReplyBody('a=1&__proto__=2');
    expect(form).toEqual({ a: '1' });
    expect(Object.getPrototypeOf(form)).toBe(Object.prototype);
    expect(Object.keys(form ?? {})).toEqual(['a']);
    const json = decodeReplyBody('{"__proto__":"x"}');
    expect(json).toEqual({});
    expect(Object.getPrototypeOf(json)).toBe(Object.prototype);
  });

  it('vector reply-form-vs-json-async-response: both encodings give the same record and reply', () => {
    const v = vector('reply-form-vs-json-async-response');
    const form = (v.inputs as { accept_header_absent_body: string }).accept_header_absent_body;
    const expected = (v.expected as { json: Record<string, string> }).json;
    expect(decodeReplyBody(form)).toEqual(expected);
    expect(decodeReplyBody(`${form}\n`)).toEqual(expected);
    expect(decodeReplyBody(JSON.stringify(expected))).toEqual(expected);
    const a = parseReply(decodeReplyBody(form)!, 'async-response', 200);
    const b = parseReply(decodeReplyBody(JSON.stringify(expected))!, 'async-response', 200);
    expect(a).toEqual(b);
    expect(a).toMatchObject({ ok: true, reply: { paynetOrderId: '6768788', endPointId: '22903' } });
  });

  it('vector reply-json-sale-numeric-order-id: number and string ids both become strings', () => {
    const v = vector('reply-json-sale-numeric-order-id');
    const i = v.inputs as { sale_reply: string; other_reply: string; decline_reply: string };
    expect(parseReply(decodeReplyBody(i.sale_reply)!, 'async-form-response', 200)).toMatchObject({
      ok: false, // the fixture has no redirect-url: an async-form-response must carry one
    });
    expect(parseReply(decodeReplyBody(i.other_reply)!, 'async-response', 200)).toMatchObject({
      ok: true,
      reply: { paynetOrderId: '12345', merchantOrderId: 'hf-abc' },
    });
    expect(parseReply(decodeReplyBody(i.decline_reply)!, 'async-response', 400)).toMatchObject({
      ok: true,
      reply: { type: 'validation-error', paynetOrderId: '12345', errorCode: '3' },
    });
    const sale = decodeReplyBody(i.sale_reply)!;
    expect(sale['paynet-order-id']).toBe('12345');
  });

  it('form values: + is a space, %XX decoded, trailing newline stripped, underscore error fields read', () => {
    const r = decodeReplyBody('type=error\n&error_message=Bad+thing%21\n&error_code=5\n')!;
    expect(r).toEqual({ type: 'error', error_message: 'Bad thing!', error_code: '5' });
    expect(parseReply(r, 'async-response', 200)).toMatchObject({
      ok: true,
      reply: { type: 'error', errorMessage: 'Bad thing!', errorCode: '5' },
    });
  });

  it.each(['', '   ', 'hello', '<html>=</html>', '[1]', '{"a":', 'a=%E0%A4%A'])(
    'refuses %p',
    (body) => {
      expect(decodeReplyBody(body)).toBeUndefined();
    },
  );

  it('status-response: html for 3-D Secure, amount in minor units, finality', () => {
    const p = parseReply(
      {
        type: 'status-response',
        status: 'processing',
        html: '<form>',
        amount: '1.234',
        currency: 'KWD',
        bin: '444455',
        'last-four-digits': '1111',
        'card-type': 'VISA',
        'approval-code': 'A1',
        'processor-rrn': '1',
      },
      'status-response',
      200,
    );
    expect(p).toMatchObject({
      ok: true,
      reply: {
        status: 'processing',
        final: false,
        html: '<form>',
        amountMinor: 1234,
        bin: '444455',
        lastFourDigits: '1111',
        cardType: 'VISA',
        approvalCode: 'A1',
        raw: { 'processor-rrn': '1' },
      },
    });
  });

  it.each([
    ['approved', true],
    ['declined', true],
    ['error', true],
    ['filtered', true],
    ['processing', false],
    ['unknown', false],
    ['chain_declined', false],
    ['APPROVED', true],
    ['something-new', false],
  ])('status %s → final %p', (status, final) => {
    const p = parseReply({ type: 'status-response', status }, 'status-response', 200);
    expect(p.ok && p.reply.type === 'status-response' && p.reply.final).toBe(final);
  });

  it('card-ref, card-info and recurring replies', () => {
    expect(
      parseReply(
        { type: 'create-card-ref-response', 'card-ref-id': '10901' },
        'create-card-ref-response',
        200,
      ),
    ).toMatchObject({ ok: true, reply: { cardRefId: '10901' } });
    expect(
      parseReply({ type: 'create-card-ref-response' }, 'create-card-ref-response', 200).ok,
    ).toBe(false);
    expect(
      parseReply(
        {
          type: 'get-card-info-response',
          'card-printed-name': 'Vasya Pupkin',
          bin: '4485',
          'expire-month': '12',
        },
        'get-card-info-response',
        200,
      ),
    ).toMatchObject({
      ok: true,
      reply: { cardPrintedName: 'Vasya Pupkin', bin: '4485', expireMonth: '12' },
    });
    expect(
      parseReply({ 'recurring-payment-id': '55' }, 'create-recurring-payment-response', 200),
    ).toMatchObject({ ok: true, reply: { recurringPaymentId: '55' } });
    expect(parseReply({ hello: 'x' }, 'async-response', 200).ok).toBe(false);
  });
});

describe('redaction', () => {
  it('masks PANs to BIN + last four and drops CVV, expiry, control, oauth and Authorization', () => {
    const out = redactFields({
      credit_card_number: '4444 3333 2222 1111',
      'destination-card-no': '5555555555554444',
      'credit-card-number': '4111111111111111',
      cvv2: '123',
      expire_month: '12',
      'expire-year': '2030',
      control: 'abc',
      oauth_signature: 'sig',
      Authorization: 'OAuth x',
      order_desc: 'card 4111111111111111 in text, 1234567890123 not luhn',
      note: '4012888888881881',
      orderid: '6768788',
    });
    expect(out).toEqual({
      credit_card_number: '444433******1111',
      'destination-card-no': '555555******4444',
      'credit-card-number': '411111******1111',
      order_desc: 'card 411111******1111 in text, 1234567890123 not luhn',
      note: '401288******1881',
      orderid: '6768788',
    });
    expect(maskPan('123')).toBe('****');
  });

  it('redactReply keeps typed fields and redacts raw', () => {
    const r = redactReply({ type: 'x', bin: '444455', raw: { control: 'c', bin: '444455' } });
    expect(r).toEqual({ type: 'x', bin: '444455', raw: { bin: '444455' } });
  });
});
