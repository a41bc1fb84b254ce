import { createHash } from 'node:crypto';
import { vector } from '../test/support';
import { parseAndVerifyCallback, parseCallback, verifyCallbackControl } from './callbacks';
import { GatewayClientError } from './errors';
import { controlChecksum } from './signers/control';

const sha1 = (s: string) => createHash('sha1').update(s, 'utf8').digest('hex');

interface CbInputs {
  status: string;
  orderid: string;
  merchant_order: string;
  merchant_control: string;
}

describe('callback control vectors', () => {
  it.each(['callback-control-hf-approved', 'callback-control-hf-empty'])('%s', (id) => {
    const v = vector(id);
    const i = v.inputs as unknown as CbInputs;
    const expected = (v.expected as { control: string }).control;
    expect(i.status + i.orderid + i.merchant_order + i.merchant_control).toBe(v.signing_string);
    expect(controlChecksum([i.status, i.orderid, i.merchant_order], i.merchant_control)).toBe(
      expected,
    );
    expect(verifyCallbackControl(i, expected, i.merchant_control)).toBe(true);
    expect(verifyCallbackControl(i, expected.toUpperCase(), i.merchant_control)).toBe(true);
    expect(verifyCallbackControl(i, '', i.merchant_control)).toBe(false);
  });

  const neg = vector('callback-control-hf-rejects');
  const i = neg.inputs as unknown as CbInputs;
  const good = vector('callback-control-hf-approved').expected.control as string;
  const rejected = (neg.expected as { rejected_controls: string[] }).rejected_controls;

  it.each(rejected.map((c) => [c]))('rejects control %p', (control) => {
    expect(verifyCallbackControl(i, control, i.merchant_control)).toBe(false);
  });

  it.each(['status', 'orderid', 'merchant_order'] as const)(
    'rejects the correct control when %s is edited',
    (field) => {
      const edited = (neg.expected as { rejected_if_any_field_edited_to: string })
        .rejected_if_any_field_edited_to;
      expect(verifyCallbackControl(i, good, i.merchant_control)).toBe(true);
      expect(verifyCallbackControl({ ...i, [field]: edited }, good, i.merchant_control)).toBe(
        false,
      );
    },
  );

  it('rejects non-hex of the right length and a wrong key', () => {
    expect(verifyCallbackControl(i, 'z'.repeat(40), i.merchant_control)).toBe(false);
    expect(verifyCallbackControl(i, good, 'other-key')).toBe(false);
    expect(verifyCallbackControl(i, good, '')).toBe(false);
  });
});

describe('parseCallback', () => {
  const key = 'test-merchant-control';
  const base = {
    status: 'approved',
    orderid: '1234567',
    merchant_order: 'hf-abc',
    client_orderid: 'hf-abc',
    type: 'sale',
    amount: '10.42',
    currency: 'USD',
    bin: '444444',
    'last-four-digits': '4448',
    'card-type': 'VISA',
    'approval-code': '831000',
    control: sha1('approved1234567hf-abc' + key),
  };

  it('parses a GET query (URLSearchParams) into a typed notification and verifies it', () => {
    const q = new URLSearchParams(base);
    const { notification: n, verified } = parseAndVerifyCallback(q, key);
    expect(verified).toBe(true);
    expect(n).toMatchObject({
      status: 'approved',
      orderid: '1234567',
      merchantOrder: 'hf-abc',
      clientOrderid: 'hf-abc',
      type: 'sale',
      amount: '10.42',
      amountMinor: 1042,
      currency: 'USD',
      bin: '444444',
      lastFourDigits: '4448',
      cardType: 'VISA',
      approvalCode: '831000',
    });
  });

  it('parses a POST form record; amount by currency exponent (JPY 0, KWD 3)', () => {
    expect(parseCallback({ ...base, amount: '1500', currency: 'JPY' }).amountMinor).toBe(1500);
    expect(parseCallback({ ...base, amount: '1.5', currency: 'KWD' }).amountMinor).toBe(1500);
    expect(parseCallback({ ...base, amount: '100' }).amountMinor).toBe(10000);
  });

  it('falls back to client_orderid and keeps error fields', () => {
    const { merchant_order: _m, ...rest } = base;
    const n = parseCallback({
      ...rest,
      status: 'declined',
      error_code: '3',
      error_message: 'Declined by the issuer',
    });
    expect(n.merchantOrder).toBe('hf-abc');
    expect(n.status).toBe('declined');
    expect(n.errorCode).toBe('3');
    expect(n.errorMessage).toBe('Declined by the issuer');
  });

  it('fails verification when a field was tampered with', () => {
    expect(parseAndVerifyCallback({ ...base, status: 'declined' }, key).verified).toBe(false);
  });

  it.each([
    [{ ...base, control: '' }, 'invalid-callback'],
    [{ ...base, orderid: '' }, 'invalid-callback'],
    [{ ...base, merchant_order: '', client_orderid: '' }, 'invalid-callback'],
    [{ ...base, client_orderid: 'other' }, 'invalid-callback'],
    [{ ...base, currency: '' }, 'invalid-callback'],
    [{ ...base, amount: '10.421' }, 'invalid-amount'],
    [{ ...base, amount: '-1' }, 'invalid-amount'],
    [{ ...base, amount: '1e3' }, 'invalid-amount'],
    [{ ...base, currency: 'XYZ' }, 'invalid-currency'],
  ])('invalid input → typed error %#', (params, code) => {
    let err: unknown;
    try {
      parseCallback(params);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayClientError);
    expect((err as GatewayClientError).code).toBe(code);
  });

  it('an unrecognised status becomes non-final unknown', () => {
    expect(parseCallback({ ...base, status: 'weird' }).status).toBe('unknown');
  });
});
