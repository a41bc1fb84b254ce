/**
 * Conformance: the sandbox driven by the project's gateway client (@payments/payment-gateway)
 * through all 27 operations and all three auth schemes, the CVV outcomes, preconditions,
 * callbacks verified with the client's own verifier, 3-D Secure and hosted pages over HTTP, and
 * every fault. The client and the sandbox share no signing or verification code.
 */
import {
  CallResult,
  OPERATION_IDS,
  PaymentGatewayClient,
  createPaymentGatewayClient,
  parseAndVerifyCallback,
} from '@payments/payment-gateway';
import {
  CARD,
  EP,
  KEY,
  LOGIN,
  PRIVATE_KEY,
  Recorder,
  Running,
  controlGet,
  controlPost,
  formBody,
  readForm,
  startRecorder,
  startSandbox,
  uniqueId,
} from './harness';

const CUSTOMER = {
  order_desc: 'Conformance order',
  address1: '1 Main St',
  city: 'Springfield',
  zip_code: '12345',
  country: 'US',
  phone: '+15550100',
  email: 'payer@example.com',
  ipaddress: '203.0.113.7',
};

function accepted<R>(r: CallResult<R>): R {
  if (r.outcome !== 'accepted') throw new Error(`expected accepted, got ${JSON.stringify(r)}`);
  return r.reply;
}

describe('conformance: @payments/payment-gateway against the sandbox', () => {
  let s: Running;
  let merchant: Recorder;
  let client: PaymentGatewayClient;
  const used = new Set<string>();
  const clients: PaymentGatewayClient[] = [];

  function make(
    endpoint: { endpointId: string } | { endpointGroupId: string },
    overrides: Partial<{
      controlKey: string;
      rsaPrivateKey: string;
    }> = {},
  ): PaymentGatewayClient {
    const c = createPaymentGatewayClient({
      baseUrl: `${s.url}/paynet`,
      endpoint,
      login: LOGIN,
      controlKey: overrides.controlKey ?? KEY,
      rsaPrivateKey: overrides.rsaPrivateKey ?? PRIVATE_KEY,
      transport: { connections: 4, headersTimeoutMs: 5000, bodyTimeoutMs: 5000 },
      onRequest: (e) => used.add(e.operation),
    });
    clients.push(c);
    return c;
  }

  beforeAll(async () => {
    s = await startSandbox();
    merchant = await startRecorder();
    client = make({ endpointId: String(EP.usd) });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await merchant.close();
    await s.close();
  });

  const sale = (o: { cvv?: string; amount?: number; id?: string; callback?: boolean } = {}) => ({
    client_orderid: o.id ?? uniqueId('c'),
    amount: o.amount ?? 1042,
    currency: 'USD',
    ...CUSTOMER,
    ...CARD,
    cvv2: o.cvv ?? '123',
    redirect_url: `${merchant.url}/return`,
    ...(o.callback ? { server_callback_url: `${merchant.url}/callback` } : {}),
  });

  async function status(c: PaymentGatewayClient, clientOrderId: string, orderId?: string) {
    return accepted(
      await c.call('v2/status', {
        client_orderid: clientOrderId,
        ...(orderId ? { orderid: orderId } : {}),
      }),
    );
  }

  async function settled(c: PaymentGatewayClient, clientOrderId: string, orderId: string) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const st = await status(c, clientOrderId, orderId);
      if (st.status !== 'processing') return st;
      if (Date.now() > deadline) throw new Error('still processing');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async function paid(kind: 'v2/sale' | 'v2/preauth', amount = 1000) {
    const f = sale({ amount });
    const reply = accepted(await client.call(kind, f));
    const st = await settled(client, f.client_orderid, reply.paynetOrderId ?? '');
    expect(st.status).toBe('approved');
    return { clientOrderId: f.client_orderid, orderId: reply.paynetOrderId ?? '' };
  }

  const ledger = async (id: string) => (await controlGet(s.url, `ledger?clientOrderId=${id}`)).body;

  async function page(url: string, fields?: Record<string, string>) {
    const r = await fetch(
      url,
      fields === undefined
        ? { redirect: 'manual' }
        : {
            method: 'POST',
            redirect: 'manual',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: formBody(fields),
          },
    );
    return { status: r.status, text: await r.text(), location: r.headers.get('location') ?? '' };
  }

  async function returned(html: string) {
    const form = readForm(html);
    const n = merchant.requests.length;
    await page(form.action, form.fields);
    const got = merchant.requests[n];
    if (!got) throw new Error('no return POST');
    return parseAndVerifyCallback(new URLSearchParams(got.body), KEY);
  }

  it('sale, preauth, capture, void, return and status (SHA-1 control)', async () => {
    const f = sale();
    const r = accepted(await client.call('v2/sale', f));
    expect(r.type).toBe('async-response');
    expect(r.paynetOrderId).toMatch(/^\d+$/);
    const st = await settled(client, f.client_orderid, r.paynetOrderId ?? '');
    expect(st).toMatchObject({
      status: 'approved',
      final: true,
      amountMinor: 1042,
      currency: 'USD',
    });

    const p = await paid('v2/preauth', 1000);
    accepted(
      await client.call('v2/capture', {
        client_orderid: p.clientOrderId,
        orderid: p.orderId,
        amount: 600,
        currency: 'USD',
      }),
    );
    await settled(client, p.clientOrderId, p.orderId);
    expect((await ledger(p.clientOrderId)).totals).toEqual({
      authorized: 1000,
      captured: 600,
      released: 400,
    });
    accepted(
      await client.call('v2/return', {
        client_orderid: p.clientOrderId,
        orderid: p.orderId,
        amount: 100,
        currency: 'USD',
      }),
    );
    await settled(client, p.clientOrderId, p.orderId);
    accepted(
      await client.call('v2/return', { client_orderid: p.clientOrderId, orderid: p.orderId }),
    );
    await settled(client, p.clientOrderId, p.orderId);
    expect((await ledger(p.clientOrderId)).totals).toEqual({
      authorized: 1000,
      captured: 600,
      released: 400,
      refunded: 600,
    });

    const v = await paid('v2/preauth', 500);
    accepted(
      await client.call('v2/void', {
        client_orderid: v.clientOrderId,
        orderid: v.orderId,
        comment: 'cancel',
      }),
    );
    expect((await settled(client, v.clientOrderId, v.orderId)).transactionType).toBe('void');
    const byClientOrderId = await status(client, v.clientOrderId);
    expect(byClientOrderId.paynetOrderId).toBe(v.orderId);
  });

  it('preconditions come back as rejected validation with the reason', async () => {
    const o = await paid('v2/sale', 500);
    const cap = await client.call('v2/capture', {
      client_orderid: o.clientOrderId,
      orderid: o.orderId,
    });
    expect(cap).toMatchObject({ outcome: 'rejected', reason: 'validation', httpStatus: 400 });
    const ret = await client.call('v2/return', {
      client_orderid: o.clientOrderId,
      orderid: o.orderId,
      amount: 501,
      currency: 'USD',
    });
    expect(ret).toMatchObject({
      outcome: 'rejected',
      errorMessage: 'return amount exceeds the captured amount not yet returned',
    });
    const again = await client.call('v2/sale', { ...sale({ id: o.clientOrderId, amount: 700 }) });
    expect(again).toMatchObject({ outcome: 'rejected', reason: 'validation' });
  });

  it.each([
    ['123', 'approved'],
    ['1234', 'approved'],
    ['111', 'approved'],
    ['217', 'unknown'],
    ['101', 'declined'],
    ['116', 'declined'],
    ['119', 'declined'],
    ['209', 'declined'],
    ['555', 'declined'],
  ])('CVV %s → %s (through the client)', async (cvv, expected) => {
    const f = sale({ cvv });
    const r = accepted(await client.call('v2/sale', f));
    const st = await settled(client, f.client_orderid, r.paynetOrderId ?? '');
    expect(st.status).toBe(expected);
    expect(st.final).toBe(expected !== 'unknown');
  });

  it('account verification (direct and form), zero amount, no money moved', async () => {
    const id = uniqueId('av');
    const r = accepted(
      await client.call('v2/account-verification', {
        client_orderid: id,
        ...CUSTOMER,
        ...CARD,
        cvv2: '123',
        redirect_url: `${merchant.url}/return`,
      }),
    );
    expect((await settled(client, id, r.paynetOrderId ?? '')).status).toBe('approved');
    expect((await ledger(id)).entries).toEqual([]);
    const fid = uniqueId('avf');
    const { phone: _phone, ...verify } = CUSTOMER;
    const form = accepted(
      await client.call('v2/account-verification-form', {
        client_orderid: fid,
        ...verify,
        redirect_url: `${merchant.url}/return`,
      }),
    );
    expect(form.redirectUrl).toMatch(/\/hpp\//);
  });

  it('3-D Secure through the client: redirect-to, ACS page, signed return verified by the client', async () => {
    const f = sale({ cvv: '321' });
    const r = accepted(await client.call('v2/sale', f));
    const pending = await status(client, f.client_orderid, r.paynetOrderId);
    expect(pending.status).toBe('processing');
    expect(pending.redirectTo).toBeDefined();
    const acs = await page(pending.redirectTo ?? '');
    const action = /action="([^"]*)"/.exec(acs.text)?.[1] ?? '';
    const back = await returned((await page(action, { password: '12345' })).text);
    expect(back.verified).toBe(true);
    expect(back.notification).toMatchObject({
      status: 'approved',
      orderid: r.paynetOrderId,
      merchantOrder: f.client_orderid,
    });
    expect((await status(client, f.client_orderid, r.paynetOrderId)).status).toBe('approved');

    const html = make({ endpointId: String(EP.eurHtml) });
    const e = { ...sale({ cvv: '321' }), currency: 'EUR' };
    const er = accepted(await html.call('v2/sale', e));
    const ep = await status(html, e.client_orderid, er.paynetOrderId);
    expect(ep.html).toContain('<form');
  });

  it('3DS uploads through the client: method result, cRes, PaRes', async () => {
    const own = make({ endpointId: String(EP.methodUpload) });
    const f = sale({ cvv: '321' });
    const r = accepted(await own.call('v2/sale', f));
    const orderid = r.paynetOrderId ?? '';
    accepted(
      await own.call('3ds/v1/upload-method-url-result', {
        'client-order-id': f.client_orderid,
        orderid,
        threeDSCompInd: 'Y',
      }),
    );
    const c = await status(own, f.client_orderid, orderid);
    const acs = await page(c.redirectTo ?? '');
    const action = /action="([^"]*)"/.exec(acs.text)?.[1] ?? '';
    const form = readForm((await page(action, { password: '12345' })).text);
    accepted(
      await own.call('3ds/v1/upload-cres-result', {
        'client-order-id': f.client_orderid,
        orderid,
        cRes: form.fields.cres ?? '',
      }),
    );
    expect((await status(own, f.client_orderid, orderid)).status).toBe('approved');

    const v1 = make({ endpointId: String(EP.pares) });
    const g = sale({ cvv: '321' });
    const gr = accepted(await v1.call('v2/sale', g));
    const gs = await status(v1, g.client_orderid, gr.paynetOrderId);
    const acsForm = readForm(gs.html ?? '');
    const acs1 = await page(acsForm.action, acsForm.fields);
    const act1 = /id="acsForm" method="post" action="([^"]*)"/.exec(acs1.text)?.[1] ?? '';
    const handed = readForm((await page(act1, { password: 'wrong' })).text);
    accepted(
      await v1.call('3ds/v1/upload-pares-result', {
        'client-order-id': g.client_orderid,
        orderid: gr.paynetOrderId ?? '',
        PaRes: handed.fields.PaRes ?? '',
      }),
    );
    expect((await status(v1, g.client_orderid, gr.paynetOrderId)).status).toBe('declined');
  });

  it('hosted pages through the client: sale-form, preauth-form, payment-form, payout-form', async () => {
    for (const id of ['v2/sale-form', 'v2/preauth-form', 'v2/payment-form'] as const) {
      const f = {
        client_orderid: uniqueId('hf'),
        amount: 2000,
        currency: 'USD',
        ...CUSTOMER,
        redirect_url: `${merchant.url}/return`,
      };
      const r = accepted(await client.call(id, f));
      expect(r.type).toBe('async-form-response');
      const done = await page(r.redirectUrl, { ...CARD, cvv2: '123' });
      const back = await returned(done.text);
      expect(back).toMatchObject({ verified: true, notification: { status: 'approved' } });
    }
    const po = {
      client_orderid: uniqueId('pf'),
      amount: 1500,
      currency: 'USD',
      order_desc: 'p',
      redirect_url: `${merchant.url}/return`,
    };
    const r = accepted(await client.call('v2/payout-form', po));
    const back = await returned((await page(r.redirectUrl, CARD)).text);
    expect(back.verified).toBe(true);
    expect((await ledger(po.client_orderid)).totals).toEqual({ 'paid-out': 1500 });
  });

  it('card references, card info, rebill (v2 control) and v4 create-card-ref (RSA)', async () => {
    const o = await paid('v2/sale', 300);
    const ref = accepted(
      await client.call('v2/create-card-ref', {
        client_orderid: o.clientOrderId,
        orderid: o.orderId,
      }),
    );
    expect(ref.cardRefId).toMatch(/^\d+$/);
    const ref4 = accepted(
      await client.call('v4/create-card-ref', {
        client_orderid: o.clientOrderId,
        orderid: o.orderId,
      }),
    );
    expect(ref4.cardRefId).toBe(ref.cardRefId);
    const info = accepted(await client.call('v2/get-card-info', { cardrefid: ref.cardRefId }));
    expect(info).toMatchObject({ type: 'get-card-info-response' });
    expect(JSON.stringify(info)).toContain('4448');
    const rb = {
      client_orderid: uniqueId('rb'),
      cardrefid: ref.cardRefId,
      amount: 250,
      currency: 'USD',
    };
    const rr = accepted(await client.call('v2/make-rebill', rb));
    expect((await settled(client, rb.client_orderid, rr.paynetOrderId ?? '')).status).toBe(
      'approved',
    );
    expect((await ledger(rb.client_orderid)).totals).toEqual({ charged: 250 });
    const unknownRef = await client.call('v2/get-card-info', { cardrefid: '1' });
    expect(unknownRef).toMatchObject({
      outcome: 'rejected',
      errorMessage: 'unknown card reference 1',
    });

    const declined = sale({ cvv: '116' });
    const d = accepted(await client.call('v2/sale', declined));
    await settled(client, declined.client_orderid, d.paynetOrderId ?? '');
    const noRef = await client.call('v2/create-card-ref', {
      client_orderid: declined.client_orderid,
      orderid: d.paynetOrderId ?? '',
    });
    expect(noRef.outcome).toBe('rejected');
  });

  it('create-recurring-payment charges on the virtual clock', async () => {
    const id = uniqueId('rp');
    const rp = accepted(
      await client.call('v4/create-recurring-payment', {
        'client-orderid': id,
        period: 'day',
        interval: '1',
        amount: 990,
        currency: 'USD',
        'credit-card-number': CARD.credit_card_number,
        cvv2: '123',
        'card-printed-name': 'TEST HOLDER',
        'expire-year': '2099',
        'expire-month': '12',
      }),
    );
    expect(rp.recurringPaymentId).toMatch(/^\d+$/);
    expect(
      (await controlGet(s.url, 'ledger')).body.entries.filter((e: { clientOrderId: string }) =>
        e.clientOrderId.startsWith(id),
      ),
    ).toEqual([]);
    await controlPost(s.url, 'clock/advance', { seconds: 3 * 86_400 + 60 });
    const charges = (await controlGet(s.url, 'ledger')).body.entries.filter(
      (e: { clientOrderId: string }) => e.clientOrderId.startsWith(`${id}-`),
    );
    expect(
      charges.map((e: { movement: string; amountMinor: number }) => [e.movement, e.amountMinor]),
    ).toEqual([
      ['charged', 990],
      ['charged', 990],
      ['charged', 990],
    ]);
    const bad = await client.call('v4/create-recurring-payment', {
      'client-orderid': uniqueId('rp'),
      period: 'fortnight',
      interval: '1',
      amount: 1,
      currency: 'USD',
      cardrefid: '1',
    });
    expect(bad.outcome).toBe('rejected');
  });

  it('payouts: v2 HMAC-SHA1, v4 RSA-SHA256, two-step check/pay with expiry', async () => {
    const p2 = {
      client_orderid: uniqueId('p2'),
      amount: 700,
      currency: 'USD',
      credit_card_number: '4444333322221111',
      card_printed_name: 'X',
      expire_month: '12',
      expire_year: '2099',
    };
    const r2 = accepted(await client.call('v2/payout', p2));
    expect((await settled(client, p2.client_orderid, r2.paynetOrderId ?? '')).status).toBe(
      'approved',
    );
    const p4 = {
      'client-order-id': uniqueId('p4'),
      amount: 800,
      currency: 'USD',
      order_desc: 'x',
      account_number: '12345678',
      bank_name: 'Bank',
    };
    const r4 = accepted(await client.call('v4/payout', p4));
    expect(r4.payoutId).toBe(r4.paynetOrderId);
    expect((await ledger(p4['client-order-id'])).totals).toEqual({ 'paid-out': 800 });

    const check = {
      client_orderid: uniqueId('chk'),
      amount: 900,
      currency: 'USD',
      credit_card_number: '4444333322221111',
    };
    const cr = accepted(await client.call('v4/payout-check', check));
    expect(
      (await settled(client, check.client_orderid, cr.paynetOrderId ?? '')).transactionType,
    ).toBe('payout-check');
    expect((await ledger(check.client_orderid)).entries).toEqual([]);
    accepted(
      await client.call('v4/payout-pay', {
        client_orderid: check.client_orderid,
        orderid: cr.paynetOrderId ?? '',
      }),
    );
    const paidOut = await settled(client, check.client_orderid, cr.paynetOrderId ?? '');
    expect(paidOut).toMatchObject({ status: 'approved', transactionType: 'payout' });
    accepted(
      await client.call('v4/payout-pay', {
        client_orderid: check.client_orderid,
        orderid: cr.paynetOrderId ?? '',
      }),
    );
    expect((await ledger(check.client_orderid)).totals).toEqual({ 'paid-out': 900 });

    const late = {
      client_orderid: uniqueId('late'),
      amount: 100,
      currency: 'USD',
      account_number: '1',
      bank_name: 'B',
    };
    const lr = accepted(await client.call('v4/payout-check', late));
    await controlPost(s.url, 'clock/advance', { seconds: 16 * 60 });
    const refused = await client.call('v4/payout-pay', {
      client_orderid: late.client_orderid,
      orderid: lr.paynetOrderId ?? '',
    });
    expect(refused).toMatchObject({
      outcome: 'rejected',
      errorMessage: 'the payout check has expired; register a new payout-check',
    });
    expect((await ledger(late.client_orderid)).entries).toEqual([]);
  });

  it('transfer, transfer-by-ref and pan-eligibility', async () => {
    const t = {
      client_orderid: uniqueId('tr'),
      amount: 1100,
      currency: 'USD',
      ...CARD,
      cvv2: '123',
      'destination-card-no': '4444333322221111',
      ipaddress: '203.0.113.7',
      order_desc: 'x',
      redirect_url: `${merchant.url}/return`,
    };
    const tr = accepted(await client.call('v4/transfer', t));
    expect(tr.transactionId).toBe(tr.paynetOrderId);
    expect((await settled(client, t.client_orderid, tr.paynetOrderId ?? '')).status).toBe(
      'approved',
    );
    expect((await ledger(t.client_orderid)).totals).toEqual({ transferred: 1100 });
    const tb = {
      'client-order-id': uniqueId('tb'),
      amount: 1200,
      currency: 'USD',
      order_desc: 'x',
      'destination-card-no': '4444333322221111',
    };
    const tbr = accepted(await client.call('v4/transfer-by-ref', tb));
    expect(tbr.transactionId).toMatch(/^\d+$/);
    const o = await paid('v2/sale', 100);
    const ref = accepted(
      await client.call('v2/create-card-ref', {
        client_orderid: o.clientOrderId,
        orderid: o.orderId,
      }),
    );
    const pe = accepted(
      await client.call('v2/pan-eligibility/send', {
        'client-order-id': uniqueId('pe'),
        'sending-card-ref-id': ref.cardRefId,
      }),
    );
    expect(pe.type).toBe('async-response');
  });

  it('endpoint groups through the client (/group/<id>, group id in the control)', async () => {
    const g = make({ endpointGroupId: String(EP.group) });
    const f = { ...sale(), currency: 'EUR' };
    const r = accepted(await g.call('v2/sale', f));
    expect((await settled(g, f.client_orderid, r.paynetOrderId ?? '')).status).toBe('approved');
  });

  it('callbacks arrive as GET and verify with the client verifier', async () => {
    const f = sale({ callback: true });
    const r = accepted(await client.call('v2/sale', f));
    const [cb] = await merchant.waitFor(
      1,
      (c) => c.method === 'GET' && c.query.get('client_orderid') === f.client_orderid,
    );
    const v = parseAndVerifyCallback(cb?.query ?? new URLSearchParams(), KEY);
    expect(v.verified).toBe(true);
    expect(v.notification).toMatchObject({
      status: 'approved',
      orderid: r.paynetOrderId,
      amountMinor: 1042,
      currency: 'USD',
      type: 'sale',
    });
    expect(parseAndVerifyCallback(cb?.query ?? new URLSearchParams(), 'wrong-key').verified).toBe(
      false,
    );
  });

  it('wrong keys are refused: control → rejected validation, HMAC and RSA → rejected authentication', async () => {
    const bad = make({ endpointId: String(EP.usd) }, { controlKey: 'not-the-control-key' });
    const c = await bad.call('v2/sale', sale());
    expect(c).toMatchObject({
      outcome: 'rejected',
      reason: 'validation',
      errorMessage: 'control checksum does not match',
    });
    const h = await bad.call('v2/payout', {
      client_orderid: uniqueId(),
      amount: 1,
      currency: 'USD',
      account_number: '1',
      bank_name: 'B',
    });
    expect(h).toMatchObject({ outcome: 'rejected', reason: 'authentication', httpStatus: 401 });
    const { generateKeyPairSync } = await import('node:crypto');
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    const rsa = make({ endpointId: String(EP.usd) }, { rsaPrivateKey: other });
    const r = await rsa.call('v4/payout', {
      'client-order-id': uniqueId(),
      amount: 1,
      currency: 'USD',
      account_number: '1',
      bank_name: 'B',
    });
    expect(r).toMatchObject({ outcome: 'rejected', reason: 'authentication' });
  });

  it('faults reach the client as unknown outcomes, and the status query resolves them without a double charge', async () => {
    const a = sale();
    await controlPost(s.url, 'faults', {
      clientOrderId: a.client_orderid,
      failAfter: 502,
      times: 1,
    });
    const ra = await client.call('v2/sale', a);
    expect(ra).toMatchObject({ outcome: 'unknown', resolveByStatusQuery: true });
    expect((await status(client, a.client_orderid)).status).toBe('approved');

    const b = sale();
    await controlPost(s.url, 'faults', {
      clientOrderId: b.client_orderid,
      failAfter: 'drop',
      times: 1,
    });
    const rb = await client.call('v2/sale', b);
    expect(rb.outcome).toBe('unknown');
    expect((await status(client, b.client_orderid)).status).toBe('approved');

    const c = sale();
    await controlPost(s.url, 'faults', {
      clientOrderId: c.client_orderid,
      failBefore: 500,
      times: 1,
    });
    expect((await client.call('v2/sale', c)).outcome).toBe('unknown');
    expect((await client.call('v2/status', { client_orderid: c.client_orderid })).outcome).toBe(
      'rejected',
    );
    for (const id of [a.client_orderid, b.client_orderid]) {
      expect((await ledger(id)).totals).toEqual({ charged: 1042 });
    }
    expect((await ledger(c.client_orderid)).entries).toEqual([]);
  });

  it('has driven every one of the 27 operations through the client', () => {
    expect(OPERATION_IDS).toHaveLength(27);
    expect([...OPERATION_IDS].filter((id) => !used.has(id))).toEqual([]);
  });
});
