import {
  EP,
  KEY,
  LOGIN,
  Running,
  control,
  controlGet,
  finalStatus,
  post,
  saleFields,
  startSandbox,
  statusOf,
  uniqueId,
} from './harness';

/** The HTTP contract with hand-written raw requests: routing, Accept, errors, outcomes. */
describe('gateway sandbox: API contract (raw HTTP)', () => {
  let s: Running;
  beforeAll(async () => {
    s = await startSandbox();
  });
  afterAll(async () => {
    await s.close();
  });

  const api = (path: string) => `${s.url}/paynet/api/${path}`;

  it('answers a sale with an async-response whose paynet-order-id is a number, then approves', async () => {
    const f = saleFields(EP.usd);
    const r = await post(api(`v2/sale/${EP.usd}`), f);
    expect(r.status).toBe(200);
    expect(r.contentType).toContain('application/vnd.pay+json');
    expect(r.json).toMatchObject({
      type: 'async-response',
      'merchant-order-id': f.client_orderid,
      'end-point-id': String(EP.usd),
    });
    expect(typeof r.json['paynet-order-id']).toBe('number');
    expect(r.json['serial-number']).toMatch(/^[0-9a-f-]{36}$/);
    const orderId = String(r.json['paynet-order-id']);
    const st = await finalStatus(s.url, EP.usd, f.client_orderid, orderId);
    expect(st).toMatchObject({
      type: 'status-response',
      status: 'approved',
      amount: '10.42',
      currency: 'USD',
      'paynet-order-id': orderId,
      'last-four-digits': '4448',
      bin: '444444',
      'card-type': 'VISA',
    });
    expect(typeof st['paynet-order-id']).toBe('string');
    expect(JSON.stringify(st)).not.toContain('4444444444444448');
  });

  it('works without a path prefix and finds the status by client_orderid alone', async () => {
    const f = saleFields(EP.usd);
    const r = await post(`${s.url}/api/v2/sale/${EP.usd}`, f);
    expect(r.status).toBe(200);
    const st = await statusOf(s.url, EP.usd, f.client_orderid);
    expect(st['paynet-order-id']).toBe(String(r.json['paynet-order-id']));
  });

  it.each([
    ['123', 'approved', undefined],
    ['1234', 'approved', undefined],
    ['111', 'approved', undefined],
    ['217', 'unknown', 'Acquirer network problem'],
    ['101', 'declined', 'Declined: expired card'],
    ['116', 'declined', 'Declined: insufficient funds'],
    ['119', 'declined', 'Declined: transaction not permitted to cardholder'],
    ['209', 'declined', 'Declined: pick-up card (stolen card)'],
    ['999', 'declined', 'Declined by the issuer'],
    ['000', 'declined', 'Declined by the issuer'],
  ])('CVV %s gives %s', async (cvv, status, message) => {
    const f = saleFields(EP.usd, { cvv });
    const r = await post(api(`v2/sale/${EP.usd}`), f);
    const st = await finalStatus(
      s.url,
      EP.usd,
      f.client_orderid,
      String(r.json['paynet-order-id']),
    );
    expect(st.status).toBe(status);
    expect(st['error-message']).toBe(message);
  });

  it('declines 321 and 111 on an endpoint without 3-D Secure', async () => {
    for (const cvv of ['321', '111']) {
      const f = saleFields(EP.no3ds, { cvv });
      const r = await post(api(`v2/sale/${EP.no3ds}`), f);
      const st = await finalStatus(
        s.url,
        EP.no3ds,
        f.client_orderid,
        String(r.json['paynet-order-id']),
      );
      expect(st.status).toBe('declined');
    }
  });

  it('refuses a card number that fails Luhn', async () => {
    const f = saleFields(EP.usd, { extra: { credit_card_number: '4444444444444444' } });
    const r = await post(api(`v2/sale/${EP.usd}`), f);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ type: 'validation-error' });
    expect(r.json['error-message']).toContain('credit_card_number');
  });

  it('refuses a wrong control with 400 and a JSON validation-error, and stores nothing', async () => {
    const f = saleFields(EP.usd);
    const wrong = { ...f, control: control(String(EP.usd), f.client_orderid, '1043', f.email) };
    const r = await post(api(`v2/sale/${EP.usd}`), wrong);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({
      type: 'validation-error',
      'error-message': 'control checksum does not match',
    });
    const uppercase = await post(api(`v2/sale/${EP.usd}`), {
      ...f,
      control: f.control.toUpperCase(),
    });
    expect(uppercase.status).toBe(400);
    const missing = await post(api(`v2/sale/${EP.usd}`), { ...f, control: '' });
    expect(missing.json['error-message']).toBe('control is required');
    const ledger = await controlGet(s.url, `ledger?clientOrderId=${f.client_orderid}`);
    expect(ledger.body.entries).toEqual([]);
    // The same request with the right control still works afterwards.
    expect((await post(api(`v2/sale/${EP.usd}`), f)).status).toBe(200);
  });

  it('refuses a control computed with another merchant key or for another endpoint', async () => {
    const f = saleFields(EP.usd);
    const r = await post(api(`v2/sale/${EP.no3ds}`), f);
    expect(r.status).toBe(400);
    expect(r.json['error-message']).toBe('control checksum does not match');
    const other = await post(api(`v2/sale/${EP.other}`), f);
    expect(other.status).toBe(400);
  });

  it('refuses bad fields with clear messages', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ amount: '10,42' }, 'amount must be a decimal number like 10.42'],
      [{ amount: '10.421' }, 'amount has more than 2 decimal places for USD'],
      [{ currency: 'usd' }, 'currency must be an ISO 4217 code such as USD'],
      [{ expire_year: '2001' }, 'the card has expired'],
      [{ cvv2: '12' }, 'cvv2 must be 3 or 4 digits'],
      [{ email: 'not-an-email' }, 'email is not an e-mail address'],
    ];
    for (const [extra, message] of cases) {
      const id = uniqueId();
      const email = extra.email ?? 'a@b.example';
      const base = saleFields(EP.usd, { clientOrderId: id, email });
      const f = { ...base, ...extra };
      const minor = f.amount === '10.42' ? '1042' : '';
      f.control = control(String(EP.usd), id, minor, email);
      const r = await post(api(`v2/sale/${EP.usd}`), f);
      expect({ status: r.status, message: r.json['error-message'] }).toEqual({
        status: 400,
        message,
      });
    }
  });

  it('refuses a sale in a currency the endpoint does not process', async () => {
    const f = saleFields(EP.usd, { currency: 'EUR' });
    const r = await post(api(`v2/sale/${EP.usd}`), f);
    expect(r.status).toBe(400);
    expect(r.json['error-message']).toBe(`endpoint ${EP.usd} does not process EUR`);
  });

  it('uses the currency exponent for the control amount (JPY has none)', async () => {
    const f = saleFields(EP.jpy, { amount: '1500', minor: '1500', currency: 'JPY' });
    const r = await post(api(`v2/sale/${EP.jpy}`), f);
    expect(r.status).toBe(200);
    const st = await finalStatus(
      s.url,
      EP.jpy,
      f.client_orderid,
      String(r.json['paynet-order-id']),
    );
    expect(st.amount).toBe('1500');
  });

  it('routes /group/<id> to the member endpoint of the request currency', async () => {
    const f = saleFields(EP.group, { currency: 'EUR' });
    const r = await post(api(`v2/sale/group/${EP.group}`), f);
    expect(r.status).toBe(200);
    expect(r.json['end-point-id']).toBe(String(EP.group));
    const usd = saleFields(EP.group, { currency: 'USD' });
    expect((await post(api(`v2/sale/group/${EP.group}`), usd)).status).toBe(200);
  });

  it('answers form-encoded (text/html, 0x0A after each value) without the JSON Accept header', async () => {
    const f = saleFields(EP.usd);
    const r = await post(api(`v2/sale/${EP.usd}`), f, { accept: '*/*' });
    expect(r.status).toBe(200);
    expect(r.contentType).toContain('text/html');
    expect(r.text.startsWith('type=async-response\n&serial-number=')).toBe(true);
    expect(r.text).toContain(`&merchant-order-id=${f.client_orderid}\n`);
    expect(r.text.endsWith('\n')).toBe(true);
    const bad = await post(
      api(`v2/sale/${EP.usd}`),
      { ...f, control: 'x' },
      { accept: 'text/html' },
    );
    expect(bad.status).toBe(200);
    expect(bad.text).toContain('type=validation-error\n');
  });

  it('answers 404 JSON for an unknown operation and 400 JSON for an unknown endpoint id', async () => {
    const unknownOp = await post(api(`v2/nothing/${EP.usd}`), saleFields(EP.usd));
    expect(unknownOp.status).toBe(404);
    expect(unknownOp.json['type']).toBe('validation-error');
    const unknownEp = await post(api('v2/sale/999999'), saleFields(999999));
    expect(unknownEp.status).toBe(400);
    expect(unknownEp.json['error-message']).toBe('unknown endpoint id 999999');
    const notNumeric = await post(api('v2/sale/abc'), saleFields('abc'));
    expect(notNumeric.status).toBe(400);
  });

  it('answers 413 for a body over the limit, 400 for a malformed body, 415 for another content type', async () => {
    const big = await post(api(`v2/sale/${EP.usd}`), `a=${'x'.repeat(70_000)}`);
    expect(big.status).toBe(413);
    const malformed = await post(api(`v2/sale/${EP.usd}`), 'client_orderid=%zz&amount=1');
    expect(malformed.status).toBe(400);
    expect(malformed.json['error-message']).toBe('malformed percent-encoding in the form body');
    const json = await post(api(`v2/sale/${EP.usd}`), '{}', { 'content-type': 'application/json' });
    expect(json.status).toBe(415);
    for (const r of [big, malformed, json]) expect(r.text).not.toMatch(/at .*\.(ts|js):\d+/);
    // The sandbox is still fine.
    expect((await post(api(`v2/sale/${EP.usd}`), saleFields(EP.usd))).status).toBe(200);
  });

  it('requires the customer fields the docs mark required', async () => {
    const f = saleFields(EP.usd);
    delete f.address1;
    const r = await post(api(`v2/sale/${EP.usd}`), f);
    expect(r.status).toBe(400);
    expect(r.json['error-message']).toBe('address1 is required');
  });

  it('never returns the control key or a card number in any reply', async () => {
    const f = saleFields(EP.usd, { cvv: '116' });
    const r = await post(api(`v2/sale/${EP.usd}`), f);
    const st = await finalStatus(
      s.url,
      EP.usd,
      f.client_orderid,
      String(r.json['paynet-order-id']),
    );
    for (const text of [r.text, JSON.stringify(st)]) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(f.credit_card_number);
      expect(text).not.toContain('"cvv2"');
    }
    expect(st['merchant-order-id']).toBe(f.client_orderid);
    expect(LOGIN).toBe('test-merchant');
  });

  it('serves health and metrics, and answers unknown paths with a 404 without a stack trace', async () => {
    expect((await fetch(`${s.url}/health/live`)).status).toBe(200);
    expect((await fetch(`${s.url}/health/ready`)).status).toBe(200);
    const metrics = await fetch(`${s.url}/metrics`);
    expect(metrics.status).toBe(200);
    const missing = await fetch(`${s.url}/nowhere`, { method: 'POST' });
    expect(missing.status).toBe(404);
    expect(await missing.text()).not.toMatch(/at .*\.(ts|js):\d+/);
    const get = await fetch(api(`v2/sale/${EP.usd}`));
    expect(get.status).toBe(404);
  });
});
