import {
  CARD,
  EP,
  KEY,
  LOGIN,
  Recorder,
  Running,
  control,
  controlGet,
  finalStatus,
  formBody,
  post,
  postOAuth,
  readForm,
  saleFields,
  sha1,
  startRecorder,
  startSandbox,
  statusOf,
  uniqueId,
} from './harness';

/** 3-D Secure and hosted pages walked over HTTP like a browser would. */
describe('gateway sandbox: 3-D Secure and hosted pages', () => {
  let s: Running;
  let merchant: Recorder;
  beforeAll(async () => {
    s = await startSandbox();
    merchant = await startRecorder();
  });
  afterAll(async () => {
    await merchant.close();
    await s.close();
  });

  const api = (path: string) => `${s.url}/paynet/api/${path}`;

  async function get(url: string): Promise<{ status: number; text: string; location: string }> {
    const r = await fetch(url, { redirect: 'manual' });
    return { status: r.status, text: await r.text(), location: r.headers.get('location') ?? '' };
  }

  async function submit(
    url: string,
    fields: Record<string, string>,
  ): Promise<{ status: number; text: string; location: string }> {
    const r = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: formBody(fields),
    });
    return { status: r.status, text: await r.text(), location: r.headers.get('location') ?? '' };
  }

  /** Follows the auto-submitting POST to the merchant and returns what arrived there. */
  async function followToMerchant(html: string): Promise<URLSearchParams> {
    const form = readForm(html);
    const before = merchant.requests.length;
    const r = await submit(form.action, form.fields);
    expect(r.status).toBe(200);
    const arrived = merchant.requests[before];
    if (!arrived) throw new Error('nothing arrived at redirect_url');
    expect(arrived.method).toBe('POST');
    return new URLSearchParams(arrived.body);
  }

  function expectSignedReturn(
    p: URLSearchParams,
    status: string,
    orderId: string,
    clientOrderId: string,
  ) {
    expect(p.get('status')).toBe(status);
    expect(p.get('orderid')).toBe(orderId);
    expect(p.get('merchant_order')).toBe(clientOrderId);
    expect(p.get('control')).toBe(sha1(`${status}${orderId}${clientOrderId}${KEY}`));
  }

  async function sale321(endpoint: number, currency = 'USD') {
    const f = saleFields(endpoint, {
      cvv: '321',
      currency,
      extra: { redirect_url: `${merchant.url}/return` },
    });
    const r = await post(api(`v2/sale/${endpoint}`), f);
    expect(r.status).toBe(200);
    return { clientOrderId: f.client_orderid, orderId: String(r.json['paynet-order-id']) };
  }

  it('runs a challenge: processing with redirect-to, ACS page with the hint, signed POST back', async () => {
    const o = await sale321(EP.usd);
    const pending = await statusOf(s.url, EP.usd, o.clientOrderId, o.orderId);
    expect(pending.status).toBe('processing');
    expect(pending['redirect-to']).toMatch(/\/acs\/[0-9a-f]{32}$/);
    expect(pending.html).toBeUndefined();
    const page = await get(pending['redirect-to']);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Hint: the password is <code>12345</code>');
    const action = /action="([^"]*)"/.exec(page.text)?.[1] ?? '';
    const done = await submit(action, { password: '12345', action: 'submit' });
    expect(done.status).toBe(200);
    expect(done.text).toContain('onload="document.forms[0].submit()"');
    expectSignedReturn(await followToMerchant(done.text), 'approved', o.orderId, o.clientOrderId);
    const st = await statusOf(s.url, EP.usd, o.clientOrderId, o.orderId);
    expect(st).toMatchObject({ status: 'approved', 'verified-3d-status': 'AUTHENTICATED' });
    expect(st['redirect-to']).toBeUndefined();
    const again = await get(pending['redirect-to']);
    expect(again.status).toBe(409);
  });

  it('declines on a wrong password and signs the declined return', async () => {
    const o = await sale321(EP.usd);
    const pending = await statusOf(s.url, EP.usd, o.clientOrderId, o.orderId);
    const page = await get(pending['redirect-to']);
    const action = /action="([^"]*)"/.exec(page.text)?.[1] ?? '';
    const done = await submit(action, { password: 'wrong', action: 'submit' });
    expectSignedReturn(await followToMerchant(done.text), 'declined', o.orderId, o.clientOrderId);
    const st = await statusOf(s.url, EP.usd, o.clientOrderId, o.orderId);
    expect(st).toMatchObject({
      status: 'declined',
      'error-message': '3-D Secure authentication failed',
    });
    expect(
      (await controlGet(s.url, `ledger?clientOrderId=${o.clientOrderId}`)).body.entries,
    ).toEqual([]);
  });

  it('gives html (an auto-submitting form to the ACS) on an endpoint configured for it', async () => {
    const o = await sale321(EP.eurHtml, 'EUR');
    const pending = await statusOf(s.url, EP.eurHtml, o.clientOrderId, o.orderId);
    expect(pending['redirect-to']).toBeUndefined();
    const form = readForm(pending.html);
    expect(form.action).toMatch(/\/acs\/[0-9a-f]{32}$/);
    expect(JSON.parse(Buffer.from(form.fields.creq ?? '', 'base64url').toString())).toMatchObject({
      messageType: 'CReq',
    });
    const page = await submit(form.action, form.fields);
    expect(page.status).toBe(200);
    expect(page.text).toContain('acsHint');
  });

  async function tdsUpload(
    path: string,
    o: { clientOrderId: string; orderId: string },
    extra: Record<string, string>,
    endpoint: number,
  ) {
    return post(api(`3ds/v1/${path}/${endpoint}`), {
      login: LOGIN,
      'client-order-id': o.clientOrderId,
      orderid: o.orderId,
      ...extra,
      control: control(LOGIN, o.clientOrderId, o.orderId),
    });
  }

  it('runs the 3DS 2 method step and the CRes upload (own-3DS endpoint)', async () => {
    const o = await sale321(EP.methodUpload);
    const m = await statusOf(s.url, EP.methodUpload, o.clientOrderId, o.orderId);
    expect(m.status).toBe('processing');
    expect(m['threeds-method-url']).toMatch(/\/3ds-method\//);
    expect(m['redirect-to']).toBeUndefined();
    expect((await get(m['threeds-method-url'])).status).toBe(200);
    const bad = await tdsUpload(
      'upload-method-url-result',
      o,
      { threeDSCompInd: 'X' },
      EP.methodUpload,
    );
    expect(bad.json['error-message']).toBe('threeDSCompInd must be Y, N or U');
    const up = await tdsUpload(
      'upload-method-url-result',
      o,
      { threeDSCompInd: 'Y', threeDSServerTransID: m['threeds-server-trans-id'] },
      EP.methodUpload,
    );
    expect(up.status).toBe(200);
    expect(up.json.type).toBe('async-response');
    const c = await statusOf(s.url, EP.methodUpload, o.clientOrderId, o.orderId);
    expect(c['redirect-to']).toMatch(/\/acs\//);
    const page = await get(c['redirect-to']);
    const action = /action="([^"]*)"/.exec(page.text)?.[1] ?? '';
    const handed = await followToMerchant((await submit(action, { password: '12345' })).text);
    const cres = handed.get('cres') ?? '';
    expect(JSON.parse(Buffer.from(cres, 'base64').toString())).toMatchObject({ transStatus: 'Y' });
    expect((await statusOf(s.url, EP.methodUpload, o.clientOrderId, o.orderId)).status).toBe(
      'processing',
    );
    const forged = Buffer.from(
      JSON.stringify({
        messageType: 'CRes',
        threeDSServerTransID: 'someone-else',
        transStatus: 'Y',
      }),
    ).toString('base64');
    const wrong = await tdsUpload('upload-cres-result', o, { cres: forged }, EP.methodUpload);
    expect(wrong.json['error-message']).toBe('cRes belongs to another 3-D Secure transaction');
    const ok = await tdsUpload('upload-cres-result', o, { cres }, EP.methodUpload);
    expect(ok.status).toBe(200);
    expect((await statusOf(s.url, EP.methodUpload, o.clientOrderId, o.orderId)).status).toBe(
      'approved',
    );
    const late = await tdsUpload('upload-cres-result', o, { cres }, EP.methodUpload);
    expect(late.json['error-message']).toBe(
      'no 3-D Secure authentication is pending for this order',
    );
  });

  it('accepts the cRes spelling, a failed challenge declines, and the method step times out to N', async () => {
    const o = await sale321(EP.methodUpload);
    await fetch(`${s.url}/_sandbox/clock/advance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seconds: 11 }),
    });
    const c = await statusOf(s.url, EP.methodUpload, o.clientOrderId, o.orderId);
    expect(c['redirect-to']).toMatch(/\/acs\//);
    const cRes = Buffer.from(
      JSON.stringify({
        messageType: 'CRes',
        threeDSServerTransID: c['threeds-server-trans-id'],
        transStatus: 'N',
      }),
    ).toString('base64');
    const r = await tdsUpload('upload-cres-result', o, { cRes }, EP.methodUpload);
    expect(r.status).toBe(200);
    const st = await statusOf(s.url, EP.methodUpload, o.clientOrderId, o.orderId);
    expect(st.status).toBe('declined');
  });

  it('runs 3DS 1.0.2 with a PaRes upload', async () => {
    const o = await sale321(EP.pares);
    const pending = await statusOf(s.url, EP.pares, o.clientOrderId, o.orderId);
    const form = readForm(pending.html);
    expect(form.fields.PaReq).toBeDefined();
    const page = await submit(form.action, form.fields);
    const action = /id="acsForm" method="post" action="([^"]*)"/.exec(page.text)?.[1] ?? '';
    const handed = await followToMerchant((await submit(action, { password: '12345' })).text);
    const pares = handed.get('PaRes') ?? '';
    expect(handed.get('MD')).toBe(o.orderId);
    const r = await tdsUpload('upload-pares-result', o, { PaRes: pares }, EP.pares);
    expect(r.status).toBe(200);
    expect((await statusOf(s.url, EP.pares, o.clientOrderId, o.orderId)).status).toBe('approved');
  });

  it('refuses 3DS uploads with a wrong control', async () => {
    const o = await sale321(EP.usd);
    const r = await post(api(`3ds/v1/upload-cres-result/${EP.usd}`), {
      login: LOGIN,
      'client-order-id': o.clientOrderId,
      orderid: o.orderId,
      cres: 'e30=',
      control: control(LOGIN, o.clientOrderId, 'x'),
    });
    expect(r.status).toBe(400);
    expect(r.json['error-message']).toBe('control checksum does not match');
  });

  async function saleForm(cvvLater: string, op = 'sale-form') {
    const clientOrderId = uniqueId('form');
    const email = 'payer@example.com';
    const fields = {
      client_orderid: clientOrderId,
      order_desc: 'Hosted',
      amount: '25.00',
      currency: 'USD',
      email,
      address1: '1 Main',
      city: 'X',
      zip_code: '1',
      country: 'US',
      ipaddress: '203.0.113.9',
      redirect_url: `${merchant.url}/return`,
      control: control(String(EP.usd), clientOrderId, '2500', email),
    };
    const r = await post(api(`v2/${op}/${EP.usd}`), fields);
    expect(r.status).toBe(200);
    expect(r.json.type).toBe('async-form-response');
    expect(typeof r.json['paynet-order-id']).toBe('string');
    return {
      clientOrderId,
      orderId: r.json['paynet-order-id'] as string,
      url: r.json['redirect-url'] as string,
      cvv: cvvLater,
    };
  }

  it('serves a hosted payment page that collects the card and returns the payer signed', async () => {
    const o = await saleForm('123');
    expect((await statusOf(s.url, EP.usd, o.clientOrderId, o.orderId)).status).toBe('processing');
    const page = await get(o.url);
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="credit_card_number"');
    const invalid = await submit(o.url, {
      ...CARD,
      credit_card_number: '4444444444444444',
      cvv2: '123',
    });
    expect(invalid.status).toBe(400);
    expect(invalid.text).toContain('not a valid card number');
    const done = await submit(o.url, { ...CARD, cvv2: o.cvv });
    expectSignedReturn(await followToMerchant(done.text), 'approved', o.orderId, o.clientOrderId);
    expect((await statusOf(s.url, EP.usd, o.clientOrderId, o.orderId)).status).toBe('approved');
    expect(
      (await controlGet(s.url, `ledger?clientOrderId=${o.clientOrderId}`)).body.totals,
    ).toEqual({
      charged: 2500,
    });
    expect((await submit(o.url, { ...CARD, cvv2: '123' })).status).toBe(409);
  });

  it('sends the payer from the hosted page through the ACS when the card needs 3-D Secure', async () => {
    const o = await saleForm('321', 'preauth-form');
    const to = await submit(o.url, { ...CARD, cvv2: o.cvv });
    expect(to.status).toBe(303);
    expect(to.location).toMatch(/\/acs\//);
    const page = await get(to.location);
    const action = /action="([^"]*)"/.exec(page.text)?.[1] ?? '';
    const done = await submit(action, { password: '12345' });
    expectSignedReturn(await followToMerchant(done.text), 'approved', o.orderId, o.clientOrderId);
    expect(
      (await controlGet(s.url, `ledger?clientOrderId=${o.clientOrderId}`)).body.totals,
    ).toEqual({
      authorized: 2500,
    });
  });

  it('serves the hosted payout page for payout-form (OAuth HMAC-SHA1)', async () => {
    const clientOrderId = uniqueId('pform');
    const url = api(`v2/payout-form/${EP.usd}`);
    const r = await postOAuth(
      url,
      {
        client_orderid: clientOrderId,
        amount: '12.00',
        currency: 'USD',
        order_desc: 'Payout',
        redirect_url: `${merchant.url}/return`,
      },
      { method: 'HMAC-SHA1' },
    );
    expect(r.status).toBe(200);
    expect(r.json.type).toBe('async-form-response');
    const page = await get(r.json['redirect-url']);
    expect(page.text).toContain('Destination card number');
    expect(page.text).not.toContain('name="cvv2"');
    const done = await submit(r.json['redirect-url'], CARD);
    const orderId = r.json['paynet-order-id'] as string;
    expectSignedReturn(await followToMerchant(done.text), 'approved', orderId, clientOrderId);
    expect((await finalStatus(s.url, EP.usd, clientOrderId, orderId)).status).toBe('approved');
    expect((await controlGet(s.url, `ledger?clientOrderId=${clientOrderId}`)).body.totals).toEqual({
      'paid-out': 1200,
    });
  });

  it('serves account-verification-form and payment-form pages', async () => {
    const clientOrderId = uniqueId('avf');
    const email = 'v@example.com';
    const r = await post(api(`v2/account-verification-form/${EP.usd}`), {
      client_orderid: clientOrderId,
      email,
      redirect_url: `${merchant.url}/return`,
      control: control(String(EP.usd), clientOrderId, email),
    });
    expect(r.status).toBe(200);
    const done = await submit(r.json['redirect-url'], { ...CARD, cvv2: '116' });
    expectSignedReturn(
      await followToMerchant(done.text),
      'declined',
      r.json['paynet-order-id'],
      clientOrderId,
    );
    const pf = await saleForm('123', 'payment-form');
    expect((await get(pf.url)).status).toBe(200);
    expect((await get(`${s.url}/hpp/ffffffffffffffffffffffffffffffff`)).status).toBe(404);
  });
});
