import { createHash, generateKeyPairSync } from 'node:crypto';
import { parseBody, vector } from '../test/support';
import { PaymentGatewayClient, type PaymentGatewayClientConfig } from './client';
import { GatewayClientError } from './errors';
import { loadRsaPrivateKey } from './signers/keys';

const sha1 = (s: string) => createHash('sha1').update(s, 'utf8').digest('hex');
const KEY = 'B17F59B4-A7DC-41B4-8FF9-37D986B43D20';
const cfg: PaymentGatewayClientConfig = {
  baseUrl: 'https://GATE.Example.com:443/paynet',
  endpoint: { endpointId: '1111' },
  login: 'login1',
  controlKey: KEY,
};

const saleForm = {
  client_orderid: '902B4FF5',
  order_desc: 'Order 1',
  amount: 1042,
  currency: 'USD',
  address1: 'a',
  city: 'c',
  zip_code: 'z',
  country: 'US',
  email: 'john.smith@gmail.com',
  ipaddress: '1.2.3.4',
  redirect_url: 'https://shop.example/r',
};

describe('request building', () => {
  const client = new PaymentGatewayClient(cfg);
  afterAll(() => client.close());

  it('vector request-control-doc-example (sale-form control, amount in minor units)', () => {
    const v = vector('request-control-doc-example');
    const p = client.prepare('v2/sale-form', saleForm);
    expect(p.controlInputs!.join('') + KEY).toBe(v.signing_string);
    expect(p.fields.control).toBe((v.expected as { control_derived: string }).control_derived);
    expect(p.fields.amount).toBe('10.42');
    expect(p.url.toString()).toBe('https://gate.example.com/paynet/api/v2/sale-form/1111');
  });

  it('capture/return: amount+currency in control only when sent', () => {
    const full = client.prepare('v2/capture', { client_orderid: 'c1', orderid: 'o1' });
    expect(full.fields.control).toBe(sha1('login1c1o1' + KEY));
    expect('amount' in full.fields).toBe(false);
    const part = client.prepare('v2/return', {
      client_orderid: 'c1',
      orderid: 'o1',
      amount: 500,
      currency: 'USD',
    });
    expect(part.fields.control).toBe(sha1('login1c1o1500USD' + KEY));
    expect(part.fields.amount).toBe('5.00');
    const jpy = client.prepare('v2/capture', {
      client_orderid: 'c1',
      orderid: 'o1',
      amount: 500,
      currency: 'JPY',
    });
    expect(jpy.fields.amount).toBe('500');
    expect(jpy.fields.control).toBe(sha1('login1c1o1500JPY' + KEY));
  });

  it("per-endpoint currency exponents: wire amount and control in the gateway's minor units", () => {
    const byHundred = new PaymentGatewayClient({ ...cfg, currencyExponents: { '*': 2 } });
    const capture = (c: PaymentGatewayClient, amount: number, currency: string) =>
      c.prepare('v2/capture', { client_orderid: 'c1', orderid: 'o1', amount, currency });
    const jpy = capture(byHundred, 500, 'JPY');
    expect(jpy.fields.amount).toBe('500.00');
    expect(jpy.fields.control).toBe(sha1('login1c1o150000JPY' + KEY));
    const kwd = capture(byHundred, 1230, 'KWD');
    expect(kwd.fields.amount).toBe('1.23');
    expect(kwd.fields.control).toBe(sha1('login1c1o1123KWD' + KEY));
    expect(capture(byHundred, 1042, 'USD').fields.amount).toBe('10.42');
    // 1.234 KWD cannot be sent with two decimals: refused before sending, nothing rounded.
    expect(() => capture(byHundred, 1234, 'KWD')).toThrow(/more decimals than the 2/);
    const clf = new PaymentGatewayClient({ ...cfg, currencyExponents: { CLF: 2 } });
    expect(capture(clf, 12_3400, 'CLF').fields.amount).toBe('12.34');
    expect(capture(clf, 500, 'JPY').fields.amount).toBe('500'); // not listed: ISO
    expect(capture(client, 12_3456, 'CLF').fields.amount).toBe('12.3456'); // default: ISO
    void byHundred.close();
    void clf.close();
  });

  it('refuses invalid currency exponent overrides at construction', () => {
    const bad: Array<Record<string, number>> = [
      { XYZ: 2 },
      { JPY: 5 },
      { JPY: 1.5 },
      { usd: 2 },
      { JPY: -1 },
    ];
    for (const currencyExponents of bad) {
      expect(() => new PaymentGatewayClient({ ...cfg, currencyExponents })).toThrow(
        expect.objectContaining({ code: 'invalid-config' }) as Error,
      );
    }
  });

  it('status without orderid: empty string in the control, field omitted', () => {
    const p = client.prepare('v2/status', { client_orderid: 'c1', orderid: '' });
    expect(p.fields).toEqual({
      login: 'login1',
      client_orderid: 'c1',
      control: sha1('login1c1' + KEY),
    });
  });

  it('endpoint group: /group/<id> for v2/v4, plain for 3DS uploads; group id in control', () => {
    const g = { endpoint: { endpointGroupId: '77' } } as const;
    const sale = client.prepare('v2/sale-form', saleForm, g);
    expect(sale.url.pathname).toBe('/paynet/api/v2/sale-form/group/77');
    expect(sale.controlInputs![0]).toBe('77');
    const cres = client.prepare(
      '3ds/v1/upload-cres-result',
      { 'client-order-id': 'c', orderid: 'o', cRes: 'eyJ9' },
      g,
    );
    expect(cres.url.pathname).toBe('/paynet/api/3ds/v1/upload-cres-result/77');
    expect(cres.fields.control).toBe(sha1('login1co' + KEY));
  });

  it('form body: RFC 3986 (%20, %2B), values trimmed, empty optionals omitted', () => {
    const p = client.prepare('v2/sale-form', {
      ...saleForm,
      order_desc: '  a b+c  ',
      phone: '',
      extra: { customer_browser_info: 'true', note: ' ' },
    });
    expect(p.body).toContain('order_desc=a%20b%2Bc&');
    expect(p.body).not.toContain('phone');
    expect(p.body).not.toContain('note');
    expect(parseBody(p.body).customer_browser_info).toBe('true');
  });

  it.each([
    [{ ...saleForm, amount: 10.5 }, 'invalid-amount', 'amount'],
    [{ ...saleForm, amount: -1 }, 'invalid-amount', 'amount'],
    [{ ...saleForm, currency: 'usd' }, 'invalid-currency', 'currency'],
    [{ ...saleForm, currency: 'ABC' }, 'invalid-currency', 'currency'],
    [{ ...saleForm, email: ' ' }, 'invalid-request', 'email'],
    [{ ...saleForm, bogus: 'x' }, 'invalid-request', 'bogus'],
    [{ ...saleForm, extra: { control: 'x' } }, 'invalid-request', 'control'],
    [{ ...saleForm, extra: { oauth_nonce: 'x' } }, 'invalid-request', 'oauth_nonce'],
    [{ ...saleForm, extra: { email: 'x' } }, 'invalid-request', 'email'],
    [{ ...saleForm, extra: JSON.parse('{"__proto__":"x"}') }, 'invalid-request', '__proto__'],
  ])('refuses bad input %#', (input, code, field) => {
    let err: unknown;
    try {
      client.prepare('v2/sale-form', input);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayClientError);
    expect((err as GatewayClientError).code).toBe(code);
    expect((err as GatewayClientError).details.field).toBe(field);
  });

  it('partial capture needs amount and currency together', () => {
    expect(() =>
      client.prepare('v2/capture', { client_orderid: 'c', orderid: 'o', currency: 'USD' }),
    ).toThrow(/together/);
  });

  it('call() reports client-side validation as rejected without sending', async () => {
    const r = await client.call('v2/sale-form', { ...saleForm, currency: 'XXX' });
    expect(r).toMatchObject({
      outcome: 'rejected',
      reason: 'client-validation',
      field: 'currency',
    });
  });
});

describe('auth settings where the spec is silent', () => {
  it('payment-form defaults to control, can be switched to OAuth HMAC-SHA1', () => {
    const def = new PaymentGatewayClient(cfg);
    expect(def.prepare('v2/payment-form', saleForm).auth).toBe('control');
    const hmac = new PaymentGatewayClient({
      ...cfg,
      auth: { 'v2/payment-form': 'oauth-hmac-sha1' },
    });
    const p = hmac.prepare('v2/payment-form', saleForm);
    expect(p.auth).toBe('oauth-hmac-sha1');
    expect(p.fields.control).toBeUndefined();
    expect(p.headers.authorization).toMatch(/^OAuth .*oauth_signature_method="HMAC-SHA1"/);
    void def.close();
    void hmac.close();
  });

  it('payout-form defaults to OAuth HMAC-SHA1 and cannot be set to control', () => {
    const def = new PaymentGatewayClient(cfg);
    expect(
      def.prepare('v2/payout-form', {
        client_orderid: 'c',
        amount: 1,
        currency: 'EUR',
        redirect_url: 'https://r',
      }).auth,
    ).toBe('oauth-hmac-sha1');
    void def.close();
    expect(
      () => new PaymentGatewayClient({ ...cfg, auth: { 'v2/payout-form': 'control' } }),
    ).toThrow(GatewayClientError);
    expect(
      () => new PaymentGatewayClient({ ...cfg, auth: { 'v2/sale': 'oauth-hmac-sha1' } }),
    ).toThrow(GatewayClientError);
  });

  it('v4 operations without an RSA key are rejected client-side', async () => {
    const c = new PaymentGatewayClient(cfg);
    const r = await c.call('v4/payout-pay', { client_orderid: 'c', orderid: 'o' });
    expect(r).toMatchObject({ outcome: 'rejected', reason: 'client-validation' });
    await c.close();
  });
});

describe('configuration', () => {
  it.each([
    [{ baseUrl: 'ftp://x/paynet' }],
    [{ baseUrl: 'https://x/paynet?a=1' }],
    [{ baseUrl: 'https://u:p@x/paynet' }],
    [{ endpoint: { endpointId: '12a' } }],
    [{ endpoint: { endpointGroupId: '' } }],
    [{ controlKey: '' }],
  ])('refuses %p', (patch) => {
    expect(() => new PaymentGatewayClient({ ...cfg, ...patch })).toThrow(GatewayClientError);
  });
});

describe('RSA key loading', () => {
  const k2048 = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  it('accepts PKCS#8 and PKCS#1 PEM of 2048 bits', () => {
    const pkcs8 = k2048.export({ type: 'pkcs8', format: 'pem' }) as string;
    const pkcs1 = k2048.export({ type: 'pkcs1', format: 'pem' }) as string;
    expect(pkcs1).toContain('BEGIN RSA PRIVATE KEY');
    expect(loadRsaPrivateKey(pkcs8).asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(loadRsaPrivateKey(pkcs1).asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  it('refuses keys under 2048 bits, non-RSA keys and garbage, without echoing the key', () => {
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    expect(() => loadRsaPrivateKey(small)).toThrow(/1024 bits/);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    expect(() => loadRsaPrivateKey(ec)).toThrow(/not an RSA key/);
    try {
      loadRsaPrivateKey('-----BEGIN PRIVATE KEY-----\nsecretstuff\n-----END PRIVATE KEY-----');
      throw new Error('should have thrown');
    } catch (e) {
      expect((e as Error).message).not.toContain('secretstuff');
      expect((e as GatewayClientError).code).toBe('invalid-key');
    }
    expect(() => new PaymentGatewayClient({ ...cfg, rsaPrivateKey: small })).toThrow(
      GatewayClientError,
    );
  });
});
