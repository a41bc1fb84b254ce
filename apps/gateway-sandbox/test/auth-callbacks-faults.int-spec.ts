import { generateKeyPairSync } from 'node:crypto';
import {
  EP,
  KEY,
  LOGIN,
  Recorder,
  Running,
  controlGet,
  controlPost,
  finalStatus,
  oauthSign,
  post,
  postOAuth,
  saleFields,
  sha1,
  startRecorder,
  startSandbox,
  statusOf,
  uniqueId,
} from './harness';

const payoutFields = (clientOrderId: string = uniqueId('po')) => ({
  client_orderid: clientOrderId,
  amount: '15.00',
  currency: 'USD',
  order_desc: 'Payout test',
  credit_card_number: '4444333322221111',
  card_printed_name: 'JOHN SMITH',
  expire_month: '12',
  expire_year: '2099',
});

describe('gateway sandbox: OAuth 1.0a', () => {
  let s: Running;
  beforeAll(async () => {
    s = await startSandbox();
  });
  afterAll(async () => {
    await s.close();
  });
  const url = (path: string) => `${s.url}/paynet/api/${path}`;

  it('accepts an HMAC-SHA1 payout and refuses a wrong key with 401 and a short plain reason', async () => {
    const ok = await postOAuth(url(`v2/payout/${EP.usd}`), payoutFields(), { method: 'HMAC-SHA1' });
    expect(ok.status).toBe(200);
    expect(ok.json.type).toBe('async-response');
    const bad = await postOAuth(url(`v2/payout/${EP.usd}`), payoutFields(), {
      method: 'HMAC-SHA1',
      secret: 'not-the-key',
    });
    expect(bad.status).toBe(401);
    expect(bad.contentType).toContain('text/plain');
    expect(bad.text).toBe('invalid signature: signature does not verify');
  });

  it('accepts an RSA-SHA256 v4 payout signed with the test key, refuses another key', async () => {
    const fields = { ...payoutFields(), 'client-order-id': uniqueId('v4') };
    delete (fields as Record<string, string>).client_orderid;
    const ok = await postOAuth(url(`v4/payout/${EP.usd}`), fields, { method: 'RSA-SHA256' });
    expect(ok.status).toBe(200);
    expect(ok.json['payout-id']).toBe(ok.json['paynet-order-id']);
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    const bad = await postOAuth(
      url(`v4/payout/${EP.usd}`),
      { ...fields, 'client-order-id': uniqueId() },
      {
        method: 'RSA-SHA256',
        privateKey: other,
      },
    );
    expect(bad.status).toBe(401);
  });

  it('refuses a reused nonce, a timestamp 6 minutes off, the wrong method and the wrong consumer key', async () => {
    const fields = payoutFields();
    const signed = oauthSign(url(`v2/payout/${EP.usd}`), fields, {
      method: 'HMAC-SHA1',
      nonce: 'fixed-nonce-1',
    });
    const first = await post(url(`v2/payout/${EP.usd}`), signed.body, {
      authorization: signed.authorization,
    });
    expect(first.status).toBe(200);
    const replay = await post(url(`v2/payout/${EP.usd}`), signed.body, {
      authorization: signed.authorization,
    });
    expect(replay.status).toBe(401);
    expect(replay.text).toBe('invalid signature: oauth_nonce has already been used');

    const old = await postOAuth(url(`v2/payout/${EP.usd}`), payoutFields(), {
      method: 'HMAC-SHA1',
      timestamp: Math.floor(Date.now() / 1000) - 360,
    });
    expect(old.text).toBe('invalid signature: oauth_timestamp is more than 5 minutes off');
    const future = await postOAuth(url(`v2/payout/${EP.usd}`), payoutFields(), {
      method: 'HMAC-SHA1',
      timestamp: Math.floor(Date.now() / 1000) + 360,
    });
    expect(future.status).toBe(401);

    const rsaOnHmac = await postOAuth(url(`v2/payout/${EP.usd}`), payoutFields(), {
      method: 'RSA-SHA256',
    });
    expect(rsaOnHmac.text).toBe(
      'invalid signature: this operation needs oauth_signature_method HMAC-SHA1',
    );
    const hmacOnV4 = await postOAuth(url(`v4/payout/${EP.usd}`), payoutFields(), {
      method: 'HMAC-SHA1',
    });
    expect(hmacOnV4.status).toBe(401);
    const otherLogin = await postOAuth(url(`v2/payout/${EP.usd}`), payoutFields(), {
      method: 'HMAC-SHA1',
      consumerKey: 'other-merchant',
      secret: 'other-merchant-control',
    });
    expect(otherLogin.text).toBe(
      'invalid signature: oauth_consumer_key is not the login of this endpoint',
    );
  });

  it('refuses a missing header, a tampered body and tampered header parameters', async () => {
    const fields = payoutFields();
    const none = await post(url(`v2/payout/${EP.usd}`), fields);
    expect(none.text).toBe('invalid signature: no OAuth Authorization header');
    const signed = oauthSign(url(`v2/payout/${EP.usd}`), fields, { method: 'HMAC-SHA1' });
    const tampered = await post(url(`v2/payout/${EP.usd}`), signed.body.replace('15.00', '16.00'), {
      authorization: signed.authorization,
    });
    expect(tampered.text).toBe('invalid signature: signature does not verify');
    const signed2 = oauthSign(url(`v2/payout/${EP.usd}`), payoutFields(), { method: 'HMAC-SHA1' });
    const header = signed2.authorization.replace(/oauth_nonce="[^"]*"/, 'oauth_nonce="changed"');
    const r = await post(url(`v2/payout/${EP.usd}`), signed2.body, { authorization: header });
    expect(r.status).toBe(401);
    const garbage = await post(url(`v2/payout/${EP.usd}`), fields, {
      authorization: 'OAuth garbage',
    });
    expect(garbage.text).toBe('invalid signature: malformed OAuth header parameter');
    const ledger = await controlGet(s.url, `ledger?clientOrderId=${fields.client_orderid}`);
    expect(ledger.body.entries).toEqual([]);
  });

  it('accepts oauth_* parameters repeated in the body, and refuses conflicting ones', async () => {
    const ok = await postOAuth(url(`v2/payout/${EP.usd}`), payoutFields(), {
      method: 'HMAC-SHA1',
      inBody: true,
    });
    expect(ok.status).toBe(200);
    const signed = oauthSign(url(`v2/payout/${EP.usd}`), payoutFields(), { method: 'HMAC-SHA1' });
    const r = await post(url(`v2/payout/${EP.usd}`), `${signed.body}&oauth_nonce=other`, {
      authorization: signed.authorization,
    });
    expect(r.text).toBe(
      'invalid signature: oauth_nonce in the body differs from the Authorization header',
    );
  });

  it('signs over the URL as the merchant sent it (prefix and spaces as %20)', async () => {
    const fields = { ...payoutFields(), order_desc: "John's payout (test) *1*" };
    const ok = await postOAuth(`${s.url}/api/v2/payout/${EP.usd}`, fields, { method: 'HMAC-SHA1' });
    expect(ok.status).toBe(200);
    // Signed for /paynet but sent without it: refused.
    const signed = oauthSign(url(`v2/payout/${EP.usd}`), payoutFields(), { method: 'HMAC-SHA1' });
    const r = await post(`${s.url}/api/v2/payout/${EP.usd}`, signed.body, {
      authorization: signed.authorization,
    });
    expect(r.status).toBe(401);
  });
});

describe('gateway sandbox: callbacks', () => {
  let s: Running;
  let cb: Recorder;
  beforeAll(async () => {
    s = await startSandbox();
    cb = await startRecorder();
  });
  afterAll(async () => {
    await cb.close();
    await s.close();
  });
  beforeEach(() => {
    cb.respond = () => 200;
  });
  const api = (path: string) => `${s.url}/paynet/api/${path}`;

  async function saleWithCallback(cvv = '123', path = '/cb?shop=1') {
    const f = saleFields(EP.usd, { cvv, extra: { server_callback_url: `${cb.url}${path}` } });
    const r = await post(api(`v2/sale/${EP.usd}`), f);
    expect(r.status).toBe(200);
    return { clientOrderId: f.client_orderid, orderId: String(r.json['paynet-order-id']) };
  }

  it('GETs server_callback_url with the parameters and a control the merchant can verify', async () => {
    const o = await saleWithCallback();
    const [c] = await cb.waitFor(1, (x) => x.query.get('client_orderid') === o.clientOrderId);
    expect(c?.method).toBe('GET');
    const q = c?.query ?? new URLSearchParams();
    expect(q.get('shop')).toBe('1');
    expect(Object.fromEntries(q)).toMatchObject({
      status: 'approved',
      merchant_order: o.clientOrderId,
      client_orderid: o.clientOrderId,
      orderid: o.orderId,
      type: 'sale',
      amount: '10.42',
      currency: 'USD',
      'last-four-digits': '4448',
    });
    expect(q.get('control')).toBe(sha1(`approved${o.orderId}${o.clientOrderId}${KEY}`));
    expect(c?.url).not.toContain('4444444444444448');
  });

  it('sends declines with error fields, and unknown', async () => {
    const d = await saleWithCallback('116');
    const [c] = await cb.waitFor(1, (x) => x.query.get('client_orderid') === d.clientOrderId);
    expect(c?.query.get('status')).toBe('declined');
    expect(c?.query.get('error_message')).toBe('Declined: insufficient funds');
    expect(c?.query.get('control')).toBe(sha1(`declined${d.orderId}${d.clientOrderId}${KEY}`));
    const u = await saleWithCallback('217');
    const [cu] = await cb.waitFor(1, (x) => x.query.get('client_orderid') === u.clientOrderId);
    expect(cu?.query.get('status')).toBe('unknown');
  });

  it('retries until the merchant answers 200, and stops after the attempt limit', async () => {
    let calls = 0;
    cb.respond = () => (++calls <= 2 ? 500 : 200);
    const o = await saleWithCallback();
    const got = await cb.waitFor(3, (x) => x.query.get('client_orderid') === o.clientOrderId);
    expect(got).toHaveLength(3);
    const log = (await controlGet(s.url, 'callbacks')).body.attempts.filter(
      (a: { clientOrderId: string }) => a.clientOrderId === o.clientOrderId,
    );
    expect(log.map((a: { httpStatus: number }) => a.httpStatus)).toEqual([500, 500, 200]);

    cb.respond = () => 503;
    const never = await saleWithCallback();
    await cb.waitFor(5, (x) => x.query.get('client_orderid') === never.clientOrderId);
    await new Promise((r) => setTimeout(r, 300));
    expect(
      cb.requests.filter((x) => x.query.get('client_orderid') === never.clientOrderId),
    ).toHaveLength(5);
  });

  it('sends a callback for each final operation (sale, then reversal)', async () => {
    const o = await saleWithCallback();
    await finalStatus(s.url, EP.usd, o.clientOrderId, o.orderId);
    const r = await post(api(`v2/return/${EP.usd}`), {
      login: LOGIN,
      client_orderid: o.clientOrderId,
      orderid: o.orderId,
      control: sha1(`${LOGIN}${o.clientOrderId}${o.orderId}${KEY}`),
    });
    expect(r.status).toBe(200);
    const got = await cb.waitFor(2, (x) => x.query.get('client_orderid') === o.clientOrderId);
    expect(got.map((x) => x.query.get('type')).sort()).toEqual(['reversal', 'sale']);
  });

  it('replyTransactionType: the status replies and the callbacks of the order name that type, money moving as ever; only status queries spend the rule', async () => {
    const f = saleFields(EP.usd, { extra: { server_callback_url: `${cb.url}/cb` } });
    const rule = await controlPost(s.url, 'faults', {
      clientOrderId: f.client_orderid,
      operation: 'STATUS',
      replyTransactionType: 'authorization',
      times: 5,
    });
    expect(rule.status).toBe(201);
    const r = await post(api(`v2/sale/${EP.usd}`), f);
    expect(r.status).toBe(200);
    const orderId = String(r.json['paynet-order-id']);
    const [c] = await cb.waitFor(1, (x) => x.query.get('client_orderid') === f.client_orderid);
    // Still genuine: the control does not cover the type.
    expect(Object.fromEntries(c?.query ?? [])).toMatchObject({
      type: 'authorization',
      status: 'approved',
      control: sha1(`approved${orderId}${f.client_orderid}${KEY}`),
    });
    const st = await statusOf(s.url, EP.usd, f.client_orderid, orderId);
    expect(st).toMatchObject({ status: 'approved', 'transaction-type': 'authorization' });
    expect((await controlGet(s.url, 'faults')).body).toEqual([
      expect.objectContaining({ id: rule.body.id, remaining: 4 }),
    ]);
    expect(
      (await controlGet(s.url, `ledger?clientOrderId=${f.client_orderid}`)).body,
    ).toMatchObject({ totals: { charged: 1042 } });
    await fetch(`${s.url}/_sandbox/faults/${String(rule.body.id)}`, { method: 'DELETE' });
    expect(await statusOf(s.url, EP.usd, f.client_orderid, orderId)).toMatchObject({
      'transaction-type': 'sale',
    });
  });
});

describe('gateway sandbox: faults and test controls', () => {
  let s: Running;
  let cb: Recorder;
  beforeAll(async () => {
    s = await startSandbox();
    cb = await startRecorder();
  });
  afterAll(async () => {
    await cb.close();
    await s.close();
  });
  afterEach(async () => {
    await fetch(`${s.url}/_sandbox/faults`, { method: 'DELETE' });
  });
  const api = (path: string) => `${s.url}/paynet/api/${path}`;
  const ledgerOf = async (id: string) =>
    (await controlGet(s.url, `ledger?clientOrderId=${id}`)).body;

  it('refuses a fault rule naming an operation that does not exist (it would never fire)', async () => {
    const r = await controlPost(s.url, 'faults', { operation: 'sale', failAfter: 'drop' });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain('operation: one of');
    expect(r.body.error).toContain('SALE');
    expect((await controlGet(s.url, 'faults')).body).toEqual([]);
    expect((await controlPost(s.url, 'faults', { operation: 'SALE', times: 1 })).status).toBe(201);
  });

  it('5xx before processing: nothing moves, and the retry goes through once', async () => {
    const f = saleFields(EP.usd);
    await controlPost(s.url, 'faults', {
      clientOrderId: f.client_orderid,
      failBefore: 503,
      times: 1,
    });
    const r = await post(api(`v2/sale/${EP.usd}`), f);
    expect(r.status).toBe(503);
    expect(r.json).toMatchObject({ type: 'error' });
    expect((await ledgerOf(f.client_orderid)).entries).toEqual([]);
    const retry = await post(api(`v2/sale/${EP.usd}`), f);
    expect(retry.status).toBe(200);
    await finalStatus(s.url, EP.usd, f.client_orderid, String(retry.json['paynet-order-id']));
    expect((await ledgerOf(f.client_orderid)).totals).toEqual({ charged: 1042 });
  });

  it('5xx after processing: the money moved, the reply is lost, status finds it, a retry does not charge twice', async () => {
    const f = saleFields(EP.usd);
    await controlPost(s.url, 'faults', {
      clientOrderId: f.client_orderid,
      failAfter: 502,
      times: 1,
    });
    const r = await post(api(`v2/sale/${EP.usd}`), f);
    expect(r.status).toBe(502);
    const st = await statusOf(s.url, EP.usd, f.client_orderid);
    expect(st.status).toBe('approved');
    const retry = await post(api(`v2/sale/${EP.usd}`), f);
    expect(String(retry.json['paynet-order-id'])).toBe(st['paynet-order-id']);
    expect((await ledgerOf(f.client_orderid)).totals).toEqual({ charged: 1042 });
  });

  it('drops the connection after processing', async () => {
    const f = saleFields(EP.usd);
    await controlPost(s.url, 'faults', {
      clientOrderId: f.client_orderid,
      failAfter: 'drop',
      times: 1,
    });
    await expect(post(api(`v2/sale/${EP.usd}`), f)).rejects.toThrow();
    expect((await statusOf(s.url, EP.usd, f.client_orderid)).status).toBe('approved');
    expect((await ledgerOf(f.client_orderid)).totals).toEqual({ charged: 1042 });
  });

  it('adds latency and forces outcomes (filtered, error) for one merchant or request', async () => {
    const f = saleFields(EP.usd);
    await controlPost(s.url, 'faults', {
      clientOrderId: f.client_orderid,
      latencyMs: 50,
      outcome: 'filtered',
    });
    const r = await post(api(`v2/sale/${EP.usd}`), f);
    expect(r.status).toBe(200);
    const st = await finalStatus(
      s.url,
      EP.usd,
      f.client_orderid,
      String(r.json['paynet-order-id']),
    );
    expect(st).toMatchObject({ status: 'filtered', 'error-message': 'Declined by fraud control' });
    await controlPost(s.url, 'faults', {
      login: LOGIN,
      operation: 'SALE',
      outcome: 'error',
      times: 1,
    });
    const g = saleFields(EP.usd);
    const e = await post(api(`v2/sale/${EP.usd}`), g);
    expect(
      (await finalStatus(s.url, EP.usd, g.client_orderid, String(e.json['paynet-order-id'])))
        .status,
    ).toBe('error');
    const bad = await controlPost(s.url, 'faults', { failBefore: 200 });
    expect(bad.status).toBe(400);
  });

  async function saleCb(clientOrderId: string) {
    const f = saleFields(EP.usd, { clientOrderId, extra: { server_callback_url: `${cb.url}/cb` } });
    const r = await post(api(`v2/sale/${EP.usd}`), f);
    return String(r.json['paynet-order-id']);
  }

  it('drops, duplicates, delays and reorders callbacks', async () => {
    const dropped = uniqueId('drop');
    await controlPost(s.url, 'faults', { clientOrderId: dropped, callbacks: 'drop' });
    const dup = uniqueId('dup');
    await controlPost(s.url, 'faults', { clientOrderId: dup, callbacks: 'duplicate' });
    const delayed = uniqueId('delay');
    await controlPost(s.url, 'faults', {
      clientOrderId: delayed,
      callbacks: 'delay',
      callbackDelayMs: 200,
    });
    await saleCb(dropped);
    await saleCb(dup);
    await saleCb(delayed);
    const two = await cb.waitFor(2, (x) => x.query.get('client_orderid') === dup);
    expect(two[0]?.url).toBe(two[1]?.url);
    await cb.waitFor(1, (x) => x.query.get('client_orderid') === delayed);
    expect(cb.requests.filter((x) => x.query.get('client_orderid') === dropped)).toHaveLength(0);

    const reordered = uniqueId('reorder');
    await controlPost(s.url, 'faults', {
      clientOrderId: reordered,
      callbacks: 'reorder',
      callbackDelayMs: 2000,
    });
    const orderId = await saleCb(reordered);
    await finalStatus(s.url, EP.usd, reordered, orderId);
    await post(api(`v2/return/${EP.usd}`), {
      login: LOGIN,
      client_orderid: reordered,
      orderid: orderId,
      control: sha1(`${LOGIN}${reordered}${orderId}${KEY}`),
    });
    const got = await cb.waitFor(2, (x) => x.query.get('client_orderid') === reordered);
    expect(got.map((x) => x.query.get('type'))).toEqual(['reversal', 'sale']);
  });

  it('advances the virtual clock and resets everything', async () => {
    const before = (await controlGet(s.url, 'clock')).body.offsetMs;
    const after = (await controlPost(s.url, 'clock/advance', { seconds: 10 })).body.offsetMs;
    expect(after - before).toBe(10_000);
    expect((await controlPost(s.url, 'clock/advance', { ms: -1 })).status).toBe(400);
    const f = saleFields(EP.usd);
    await post(api(`v2/sale/${EP.usd}`), f);
    expect((await controlPost(s.url, 'reset')).status).toBe(200);
    expect((await controlGet(s.url, 'ledger')).body.entries).toEqual([]);
    expect((await controlGet(s.url, 'clock')).body.offsetMs).toBe(0);
    const gone = await post(api(`v2/status/${EP.usd}`), {
      login: LOGIN,
      client_orderid: f.client_orderid,
      control: sha1(`${LOGIN}${f.client_orderid}${KEY}`),
    });
    expect(gone.status).toBe(400);
  });

  it('serves no test controls unless enabled', async () => {
    const off = await startSandbox({ testControls: false });
    try {
      for (const path of ['ledger', 'clock', 'faults', 'callbacks']) {
        expect((await fetch(`${off.url}/_sandbox/${path}`)).status).toBe(404);
      }
      expect((await fetch(`${off.url}/_sandbox/reset`, { method: 'POST' })).status).toBe(404);
    } finally {
      await off.close();
    }
  });

  it('answers 406 without the JSON Accept header when configured to reject', async () => {
    const strict = await startSandbox({ acceptMode: 'reject', oauthFailureStatus: 403 });
    try {
      const f = saleFields(EP.usd);
      const r = await post(`${strict.url}/api/v2/sale/${EP.usd}`, f, { accept: 'text/html' });
      expect(r.status).toBe(406);
      expect((await post(`${strict.url}/api/v2/sale/${EP.usd}`, f)).status).toBe(200);
      const bad = await postOAuth(`${strict.url}/api/v2/payout/${EP.usd}`, payoutFields(), {
        method: 'HMAC-SHA1',
        secret: 'wrong',
      });
      expect(bad.status).toBe(403);
    } finally {
      await strict.close();
    }
  });
});
