import {
  EP,
  LOGIN,
  Running,
  control,
  controlGet,
  controlPost,
  finalStatus,
  post,
  saleFields,
  startSandbox,
  statusOf,
} from './harness';

/** State machine, preconditions, reused client_orderid and the ledger, over raw HTTP. */
describe('gateway sandbox: transaction lifecycle', () => {
  let s: Running;
  beforeAll(async () => {
    s = await startSandbox();
  });
  afterAll(async () => {
    await s.close();
  });

  const api = (path: string) => `${s.url}/paynet/api/${path}`;

  async function pay(kind: 'sale' | 'preauth', amount = '10.00', endpoint: number = EP.usd) {
    const f = saleFields(endpoint, { amount });
    const r = await post(api(`v2/${kind}/${endpoint}`), f);
    expect(r.status).toBe(200);
    const orderId = String(r.json['paynet-order-id']);
    const st = await finalStatus(s.url, endpoint, f.client_orderid, orderId);
    expect(st.status).toBe('approved');
    return { clientOrderId: f.client_orderid, orderId };
  }

  function refFields(
    o: { clientOrderId: string; orderId: string },
    amount?: string,
    currency?: string,
  ): Record<string, string> {
    const minor = amount === undefined ? '' : amount.replace('.', '').replace(/^0+(?=\d)/, '');
    return {
      login: LOGIN,
      client_orderid: o.clientOrderId,
      orderid: o.orderId,
      ...(amount !== undefined ? { amount } : {}),
      ...(currency !== undefined ? { currency } : {}),
      comment: 'test',
      control: control(LOGIN, o.clientOrderId, o.orderId, minor, currency ?? ''),
    };
  }

  async function op(
    name: 'capture' | 'void' | 'return',
    o: { clientOrderId: string; orderId: string },
    amount?: string,
    currency?: string,
  ) {
    const fields = refFields(o, amount, currency);
    if (name === 'void') fields.control = control(LOGIN, o.clientOrderId, o.orderId);
    return post(api(`v2/${name}/${EP.usd}`), fields);
  }

  async function ledger(clientOrderId: string) {
    return (await controlGet(s.url, `ledger?clientOrderId=${clientOrderId}`)).body;
  }

  it('captures part of a preauth, releases the rest, and refuses a second capture', async () => {
    const o = await pay('preauth', '10.00');
    expect((await ledger(o.clientOrderId)).totals).toEqual({ authorized: 1000 });
    const over = await op('capture', o, '10.01', 'USD');
    expect(over.status).toBe(400);
    expect(over.json['error-message']).toBe('capture amount exceeds the authorized amount');
    const noCurrency = await op('capture', o, '5.00');
    expect(noCurrency.json['error-message']).toBe('currency is required together with amount');
    const r = await op('capture', o, '7.50', 'USD');
    expect(r.status).toBe(200);
    expect(r.json.type).toBe('async-response');
    const st = await finalStatus(s.url, EP.usd, o.clientOrderId, o.orderId);
    expect(st).toMatchObject({ status: 'approved', 'transaction-type': 'capture' });
    expect((await ledger(o.clientOrderId)).totals).toEqual({
      authorized: 1000,
      captured: 750,
      released: 250,
    });
    const again = await op('capture', o, '1.00', 'USD');
    expect(again.status).toBe(400);
    expect(again.json['error-message']).toBe('the authorization has already been captured');
  });

  it('captures a preauth in full without amount', async () => {
    const o = await pay('preauth', '3.00');
    expect((await op('capture', o)).status).toBe(200);
    await finalStatus(s.url, EP.usd, o.clientOrderId, o.orderId);
    expect((await ledger(o.clientOrderId)).totals).toEqual({ authorized: 300, captured: 300 });
  });

  it('refuses capture of a sale, and of a declined preauth', async () => {
    const sale = await pay('sale');
    const r = await op('capture', sale);
    expect(r.status).toBe(400);
    expect(r.json['error-message']).toBe('capture needs an order authorized by preauth');
    const f = saleFields(EP.usd, { cvv: '116' });
    const d = await post(api(`v2/preauth/${EP.usd}`), f);
    const declined = {
      clientOrderId: f.client_orderid,
      orderId: String(d.json['paynet-order-id']),
    };
    await finalStatus(s.url, EP.usd, declined.clientOrderId, declined.orderId);
    const c = await op('capture', declined);
    expect(c.json['error-message']).toBe('the order is not an approved, open authorization');
  });

  it('voids a preauth (releasing the hold), never partially', async () => {
    const o = await pay('preauth', '4.00');
    const partial = await post(api(`v2/void/${EP.usd}`), {
      ...refFields(o),
      amount: '1.00',
      currency: 'USD',
      control: control(LOGIN, o.clientOrderId, o.orderId),
    });
    expect(partial.status).toBe(400);
    expect(partial.json['error-message']).toBe('void does not support a partial amount');
    expect((await op('void', o)).status).toBe(200);
    const st = await finalStatus(s.url, EP.usd, o.clientOrderId, o.orderId);
    expect(st).toMatchObject({ status: 'approved', 'transaction-type': 'void' });
    expect((await ledger(o.clientOrderId)).totals).toEqual({ authorized: 400, released: 400 });
    const capture = await op('capture', o);
    expect(capture.status).toBe(400);
  });

  it('voids an unsettled sale, and refuses once it is settled (return still works)', async () => {
    const a = await pay('sale', '2.00');
    expect((await op('void', a)).status).toBe(200);
    await finalStatus(s.url, EP.usd, a.clientOrderId, a.orderId);
    expect((await ledger(a.clientOrderId)).totals).toEqual({ charged: 200, voided: 200 });
    const refund = await op('return', a);
    expect(refund.json['error-message']).toBe(
      'return needs a transaction in a final successful status',
    );

    const b = await pay('sale', '2.00');
    await controlPost(s.url, 'clock/advance', { seconds: 25 * 3600 });
    const late = await op('void', b);
    expect(late.status).toBe(400);
    expect(late.json['error-message']).toBe(
      'the transaction is settled and can no longer be voided; use return',
    );
    expect((await op('return', b)).status).toBe(200);
    await finalStatus(s.url, EP.usd, b.clientOrderId, b.orderId);
    expect((await ledger(b.clientOrderId)).totals).toEqual({ charged: 200, refunded: 200 });
  });

  it('returns in parts up to the captured amount, never more', async () => {
    const o = await pay('sale', '10.00');
    expect((await op('return', o, '4.00', 'USD')).status).toBe(200);
    await finalStatus(s.url, EP.usd, o.clientOrderId, o.orderId);
    const over = await op('return', o, '6.01', 'USD');
    expect(over.status).toBe(400);
    expect(over.json['error-message']).toBe(
      'return amount exceeds the captured amount not yet returned',
    );
    const wrongCurrency = await op('return', o, '1.00', 'EUR');
    expect(wrongCurrency.json['error-message']).toBe('currency does not match the order');
    expect((await op('return', o)).status).toBe(200); // the rest: 6.00
    const st = await finalStatus(s.url, EP.usd, o.clientOrderId, o.orderId);
    expect(st['transaction-type']).toBe('reversal');
    expect((await ledger(o.clientOrderId)).totals).toEqual({ charged: 1000, refunded: 1000 });
    const more = await op('return', o, '0.01', 'USD');
    expect(more.json['error-message']).toBe('the transaction has already been fully returned');
  });

  it('treats a return on a preauth as a cancel of the whole hold', async () => {
    const o = await pay('preauth', '5.00');
    const partial = await op('return', o, '1.00', 'USD');
    expect(partial.json['error-message']).toBe(
      'a return on a preauth cancels it in full; partial amount not allowed',
    );
    expect((await op('return', o)).status).toBe(200);
    await finalStatus(s.url, EP.usd, o.clientOrderId, o.orderId);
    expect((await ledger(o.clientOrderId)).totals).toEqual({ authorized: 500, released: 500 });
  });

  it('refuses operations while the order is still processing, and a return before final success', async () => {
    const f = saleFields(EP.slow, { amount: '1.00' });
    const r = await post(api(`v2/sale/${EP.slow}`), f);
    const o = { clientOrderId: f.client_orderid, orderId: String(r.json['paynet-order-id']) };
    expect((await statusOf(s.url, EP.slow, o.clientOrderId, o.orderId)).status).toBe('processing');
    const early = await post(api(`v2/return/${EP.slow}`), refFields(o));
    expect(early.status).toBe(400);
    expect(early.json['error-message']).toBe(
      'another operation on this order is still processing or unknown',
    );
    await controlPost(s.url, 'clock/advance', { seconds: 61 });
    expect((await statusOf(s.url, EP.slow, o.clientOrderId, o.orderId)).status).toBe('approved');
    const declined = saleFields(EP.usd, { cvv: '101' });
    const d = await post(api(`v2/sale/${EP.usd}`), declined);
    const dref = {
      clientOrderId: declined.client_orderid,
      orderId: String(d.json['paynet-order-id']),
    };
    await finalStatus(s.url, EP.usd, dref.clientOrderId, dref.orderId);
    expect((await op('return', dref)).json['error-message']).toBe(
      'return needs a transaction in a final successful status',
    );
  });

  it('refuses references that do not match: unknown orderid, wrong client_orderid, other login', async () => {
    const o = await pay('sale');
    const unknown = await op('return', { ...o, orderId: '42' });
    expect(unknown.json['error-message']).toBe('unknown orderid 42');
    const mismatch = await op('return', { ...o, clientOrderId: 'someone-else' });
    expect(mismatch.json['error-message']).toBe('client_orderid does not match the order');
    const other = await post(api(`v2/status/${EP.other}`), {
      login: 'other-merchant',
      client_orderid: o.clientOrderId,
      orderid: o.orderId,
      control: control('other-merchant', o.clientOrderId, o.orderId),
    });
    expect(other.status).toBe(400);
  });

  it('answers a repeated sale with the same client_orderid with the first order, charging once', async () => {
    const f = saleFields(EP.usd, { amount: '9.99' });
    const first = await post(api(`v2/sale/${EP.usd}`), f);
    const second = await post(api(`v2/sale/${EP.usd}`), f);
    expect(second.status).toBe(200);
    expect(second.json).toEqual(first.json);
    await finalStatus(s.url, EP.usd, f.client_orderid, String(first.json['paynet-order-id']));
    expect((await ledger(f.client_orderid)).totals).toEqual({ charged: 999 });
    const changed = saleFields(EP.usd, { clientOrderId: f.client_orderid, amount: '19.99' });
    const refused = await post(api(`v2/sale/${EP.usd}`), changed);
    expect(refused.status).toBe(400);
    expect(refused.json['error-message']).toBe(
      `client_orderid ${f.client_orderid} is already used by order ${String(first.json['paynet-order-id'])}`,
    );
    const preauth = await post(api(`v2/preauth/${EP.usd}`), { ...f });
    expect(preauth.status).toBe(400);
    expect((await ledger(f.client_orderid)).totals).toEqual({ charged: 999 });
  });

  it('reports a status per request with by-request-sn, and the latest without it', async () => {
    const o = await pay('preauth', '2.00');
    const cap = await op('capture', o);
    await finalStatus(s.url, EP.usd, o.clientOrderId, o.orderId);
    const latest = await statusOf(s.url, EP.usd, o.clientOrderId, o.orderId);
    expect(latest['transaction-type']).toBe('capture');
    expect(latest['by-request-sn']).toBe(cap.json['serial-number']);
    const first = await post(api(`v2/status/${EP.usd}`), {
      login: LOGIN,
      client_orderid: o.clientOrderId,
      orderid: o.orderId,
      'by-request-sn': '00000000-0000-0000-0000-000000000000',
      control: control(LOGIN, o.clientOrderId, o.orderId),
    });
    expect(first.status).toBe(400);
  });

  it('lets an unknown outcome be reconciled through the test controls', async () => {
    const f = saleFields(EP.usd, { cvv: '217' });
    const r = await post(api(`v2/sale/${EP.usd}`), f);
    const orderId = String(r.json['paynet-order-id']);
    expect((await finalStatus(s.url, EP.usd, f.client_orderid, orderId)).status).toBe('unknown');
    expect((await ledger(f.client_orderid)).entries).toEqual([]);
    const res = await controlPost(s.url, `orders/${orderId}/resolve`, { status: 'approved' });
    expect(res.status).toBe(200);
    expect((await statusOf(s.url, EP.usd, f.client_orderid, orderId)).status).toBe('approved');
    expect((await ledger(f.client_orderid)).totals).toEqual({ charged: 1042 });
  });
});
