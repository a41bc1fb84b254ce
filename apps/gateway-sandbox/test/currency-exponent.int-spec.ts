/**
 * Currency exponents over raw HTTP: four-decimal currencies (CLF, UYW) and an endpoint whose
 * `amountExponent` differs from ISO 4217 (JPY with two decimals, KWD with two), for the wire
 * amount, the control checksum's minor units, the status reply and the ledger (ISO minor units).
 */
import {
  KEY,
  LOGIN,
  Running,
  controlGet,
  finalStatus,
  post,
  saleFields,
  startSandbox,
} from './harness';

const EP = { clf: 801, uyw: 802, jpy2: 803, kwd2: 804 } as const;

describe('gateway sandbox: currency exponents', () => {
  let s: Running;
  beforeAll(async () => {
    s = await startSandbox(
      {},
      {
        merchants: [
          {
            login: LOGIN,
            controlKey: KEY,
            endpoints: [
              { id: EP.clf, currency: 'CLF', threeDSecure: false },
              { id: EP.uyw, currency: 'UYW', threeDSecure: false },
              { id: EP.jpy2, currency: 'JPY', threeDSecure: false, amountExponent: 2 },
              { id: EP.kwd2, currency: 'KWD', threeDSecure: false, amountExponent: 2 },
            ],
          },
        ],
      },
    );
  });
  afterAll(async () => {
    await s.close();
  });

  const sale = async (endpoint: number, amount: string, minor: string, currency: string) => {
    const f = saleFields(endpoint, { amount, minor, currency });
    const r = await post(`${s.url}/paynet/api/v2/sale/${endpoint}`, f);
    return { f, r };
  };
  const charged = async (clientOrderId: string): Promise<unknown> =>
    (
      (await controlGet(s.url, `ledger?clientOrderId=${clientOrderId}`)) as {
        body: { totals: Record<string, number> };
      }
    ).body.totals;

  it.each([
    [EP.clf, 'CLF', '12.3456', '123456'],
    [EP.uyw, 'UYW', '5.0007', '50007'],
  ])('endpoint %d: a %s sale carries four decimals end to end', async (ep, cur, amount, minor) => {
    const { f, r } = await sale(ep, amount, minor, cur);
    expect(r.status).toBe(200);
    const st = await finalStatus(s.url, ep, f.client_orderid, String(r.json['paynet-order-id']));
    expect([st.status, st.amount, st.currency]).toEqual(['approved', amount, cur]);
    expect(await charged(f.client_orderid)).toEqual({ charged: Number(minor) });
  });

  it('refuses a fifth CLF decimal', async () => {
    const { r } = await sale(EP.clf, '1.00001', '100001', 'CLF');
    expect(r.status).toBe(400);
    expect(r.json['error-message']).toBe('amount has more than 4 decimal places for CLF');
  });

  it('a JPY endpoint with amountExponent 2: "1500.00", control over 150000, ledger in yen', async () => {
    const { f, r } = await sale(EP.jpy2, '1500.00', '150000', 'JPY');
    expect(r.status).toBe(200);
    const st = await finalStatus(
      s.url,
      EP.jpy2,
      f.client_orderid,
      String(r.json['paynet-order-id']),
    );
    expect([st.status, st.amount]).toEqual(['approved', '1500.00']);
    expect(await charged(f.client_orderid)).toEqual({ charged: 1500 });
    // The ISO minor units in the control are wrong for this endpoint.
    const iso = await sale(EP.jpy2, '1500.00', '1500', 'JPY');
    expect(iso.r.status).toBe(400);
    expect(iso.r.json['error-message']).toBe('control checksum does not match');
  });

  it('a KWD endpoint with amountExponent 2 refuses a third decimal and counts in cents', async () => {
    const bad = await sale(EP.kwd2, '1.234', '1234', 'KWD');
    expect(bad.r.status).toBe(400);
    expect(bad.r.json['error-message']).toBe('amount has more than 2 decimal places for KWD');
    const { f, r } = await sale(EP.kwd2, '1.23', '123', 'KWD');
    expect(r.status).toBe(200);
    const st = await finalStatus(
      s.url,
      EP.kwd2,
      f.client_orderid,
      String(r.json['paynet-order-id']),
    );
    expect(st.amount).toBe('1.23');
    expect(await charged(f.client_orderid)).toEqual({ charged: 1230 });
  });
});
