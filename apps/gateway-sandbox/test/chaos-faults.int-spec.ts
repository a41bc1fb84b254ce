/**
 * The faults a chaos run needs, over real HTTP through the typed client the
 * e2e tests and the demo use (scripts/stack/sandbox-controls.ts): percentage rules drawn from a
 * seed, status faults independent of the order's own, callbacks retried after a drop or a
 * failed answer, and a mode in which a reused client_orderid charges again.
 */
import { SandboxControls } from '../../../scripts/stack/sandbox-controls';
import {
  EP,
  LOGIN,
  post,
  Recorder,
  Running,
  saleFields,
  startRecorder,
  startSandbox,
  statusFields,
  statusOf,
  finalStatus,
  uniqueId,
} from './harness';

let s: Running;
let cb: Recorder;
let controls: SandboxControls;

beforeAll(async () => {
  s = await startSandbox();
  cb = await startRecorder();
  controls = new SandboxControls(s.url);
});
afterAll(async () => {
  await cb.close();
  await s.close();
});
afterEach(async () => {
  cb.respond = () => 200;
  await controls.reset();
});

const api = (path: string): string => `${s.url}/paynet/api/${path}`;

/** HTTP status of a status query, 0 when the connection was dropped. */
async function statusCode(clientOrderId: string): Promise<number> {
  try {
    return (await post(api(`v2/status/${EP.usd}`), statusFields(clientOrderId))).status;
  } catch {
    return 0;
  }
}

async function approvedSale(
  o: { endpoint?: number; clientOrderId?: string; callbacks?: boolean } = {},
): Promise<{ clientOrderId: string; orderId: string }> {
  const endpoint = o.endpoint ?? EP.usd;
  const f = saleFields(endpoint, {
    clientOrderId: o.clientOrderId,
    extra: o.callbacks ? { server_callback_url: `${cb.url}/cb` } : {},
  });
  const r = await post(api(`v2/sale/${endpoint}`), f);
  expect(r.status).toBe(200);
  const orderId = String(r.json['paynet-order-id']);
  await finalStatus(s.url, endpoint, f.client_orderid, orderId);
  return { clientOrderId: f.client_orderid, orderId };
}

async function waitCallbacksIdle(clientOrderId: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await controls.callbacks(clientOrderId)).idle) {
    if (Date.now() > deadline) throw new Error(`callbacks of ${clientOrderId} still pending`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('percentage rules', () => {
  const ids = Array.from({ length: 200 }, (_, i) => `pct-${i}`);

  /** Which of `ids` a status rule with this probability hits, asked in the given order. */
  async function hitSet(order: readonly string[]): Promise<Set<string>> {
    const hit = new Set<string>();
    for (const id of order) if ((await statusCode(id)) === 503) hit.add(id);
    return hit;
  }

  it('hit a share of matching requests; the same seed hits the same ones in any arrival order, another seed others', async () => {
    await controls.changeSettings({ faultSeed: 7 });
    await controls.addFault({ operation: 'STATUS', probability: 0.3, failBefore: 503 });
    const first = await hitSet(ids);
    // Binomial(200, 0.3): mean 60, sd ≈ 6.5; ±30 is more than 4.5 sd.
    expect(first.size).toBeGreaterThan(30);
    expect(first.size).toBeLessThan(90);

    await controls.changeSettings({ faultSeed: 7 });
    expect([...(await hitSet([...ids].reverse()))].sort()).toEqual([...first].sort());

    await controls.changeSettings({ faultSeed: 8 });
    expect([...(await hitSet(ids))].sort()).not.toEqual([...first].sort());
  });

  it('draw again for each repeated request of one order, and spend `times` only on hits', async () => {
    await controls.changeSettings({ faultSeed: 3 });
    const rule = await controls.addFault({
      operation: 'STATUS',
      clientOrderId: 'repeat',
      probability: 0.5,
      failBefore: 503,
      times: 5,
    });
    const codes: number[] = [];
    for (let i = 0; i < 40; i += 1) codes.push(await statusCode('repeat'));
    // Unknown order → 400 when the rule misses; 503 on exactly the five hits.
    expect(codes.filter((c) => c === 503)).toHaveLength(5);
    expect(codes.filter((c) => c === 400)).toHaveLength(35);
    // Misses come between the hits: each request drew anew.
    expect(codes.indexOf(400)).toBeLessThan(codes.lastIndexOf(503));
    expect((await controls.faults()).find((r) => r.id === rule.id)?.remaining).toBe(0);
  });

  it('probability 0 never hits, 1 always does', async () => {
    await controls.addFault({ operation: 'STATUS', probability: 0, failBefore: 500 });
    expect(await statusCode('never')).toBe(400);
    await controls.addFault({ operation: 'STATUS', probability: 1, failBefore: 502 });
    expect(await statusCode('always')).toBe(502);
    await expect(
      controls.addFault({ operation: 'STATUS', probability: 1.5, failBefore: 503 }),
    ).rejects.toThrow(/probability/);
  });

  it('match by endpoint: the endpoint id, or the group id a request was sent to', async () => {
    await controls.addFault({ operation: 'SALE', endpoint: String(EP.no3ds), failBefore: 503 });
    const other = await post(api(`v2/sale/${EP.usd}`), saleFields(EP.usd));
    expect(other.status).toBe(200);
    const hit = saleFields(EP.no3ds);
    expect((await post(api(`v2/sale/${EP.no3ds}`), hit)).status).toBe(503);
    expect((await controls.ledger(hit.client_orderid)).entries).toEqual([]);

    await controls.addFault({ operation: 'SALE', endpoint: String(EP.group), failBefore: 504 });
    const viaGroup = await post(api(`v2/sale/group/${EP.group}`), saleFields(EP.group));
    expect(viaGroup.status).toBe(504);
    await expect(controls.addFault({ endpoint: 'abc', failBefore: 503 })).rejects.toThrow(
      /endpoint/,
    );
  });
});

describe('status faults', () => {
  it("are independent of the order's own faults: a rule without an operation leaves status queries alone", async () => {
    const f = saleFields(EP.usd);
    await controls.addFault({ clientOrderId: f.client_orderid, failAfter: 502 });
    expect((await post(api(`v2/sale/${EP.usd}`), f)).status).toBe(502);
    // The reply was lost, but the status query that resolves it is not blinded by the rule.
    expect((await statusOf(s.url, EP.usd, f.client_orderid)).status).toBe('approved');
    expect((await controls.ledger(f.client_orderid)).totals).toEqual({ charged: 1042 });
  });

  it('5xx before processing, a dropped connection, latency: on STATUS only, the order untouched', async () => {
    const { clientOrderId, orderId } = await approvedSale();
    const failing = await controls.addFault({
      clientOrderId,
      operation: 'STATUS',
      failBefore: 503,
      times: 1,
    });
    expect(await statusCode(clientOrderId)).toBe(503);
    await controls.addFault({ clientOrderId, operation: 'STATUS', failBefore: 'drop', times: 1 });
    expect(await statusCode(clientOrderId)).toBe(0);
    const slow = await controls.addFault({
      clientOrderId,
      operation: 'STATUS',
      latencyMs: 50,
      times: 1,
    });
    expect((await statusOf(s.url, EP.usd, clientOrderId, orderId)).status).toBe('approved');
    const left = await controls.faults();
    expect(left.find((r) => r.id === failing.id)?.remaining).toBe(0);
    expect(left.find((r) => r.id === slow.id)?.remaining).toBe(0);
    // A return on the same order is not hit by the status rules.
    await controls.addFault({ clientOrderId, operation: 'STATUS', failBefore: 500 });
    const ret = await post(api(`v2/return/${EP.usd}`), {
      login: LOGIN,
      client_orderid: clientOrderId,
      orderid: orderId,
      control: statusFields(clientOrderId, orderId).control ?? '',
    });
    expect(ret.status).toBe(200);
    expect(await statusCode(clientOrderId)).toBe(500);
  });

  it('a dropped connection before processing moves no money', async () => {
    const f = saleFields(EP.usd);
    await controls.addFault({
      clientOrderId: f.client_orderid,
      operation: 'SALE',
      failBefore: 'drop',
      times: 1,
    });
    await expect(post(api(`v2/sale/${EP.usd}`), f)).rejects.toThrow();
    expect((await controls.ledger(f.client_orderid)).entries).toEqual([]);
    expect(await statusCode(f.client_orderid)).toBe(400);
  });
});

describe('callback retries', () => {
  it('a dropped callback is retried on the schedule and delivered once a later attempt goes through', async () => {
    const clientOrderId = uniqueId('cb-drop');
    await controls.addFault({ clientOrderId, callbacks: 'drop', times: 2 });
    await approvedSale({ clientOrderId, callbacks: true });
    await waitCallbacksIdle(clientOrderId);
    const { attempts } = await controls.callbacks(clientOrderId);
    expect(attempts.map((a) => [a.attempt, a.dropped, a.httpStatus])).toEqual([
      [1, true, 0],
      [2, true, 0],
      [3, false, 200],
    ]);
    const received = cb.requests.filter((r) => r.query.get('client_orderid') === clientOrderId);
    expect(received.map((r) => r.query.get('status'))).toEqual(['approved']);
  });

  it('a non-2xx answer is a failure and is retried; retries stop at the attempt limit', async () => {
    const answers = [503, 404, 200];
    const base = cb.requests.length;
    cb.respond = (n) => answers[n - base - 1] ?? 200;
    const { clientOrderId } = await approvedSale({ callbacks: true });
    await waitCallbacksIdle(clientOrderId);
    expect((await controls.callbacks(clientOrderId)).attempts.map((a) => a.httpStatus)).toEqual(
      answers,
    );

    await controls.changeSettings({ callbackRetry: { maxAttempts: 3, baseDelayMs: 5 } });
    expect((await controls.settings()).callbackRetry).toMatchObject({
      maxAttempts: 3,
      baseDelayMs: 5,
    });
    const lost = uniqueId('cb-lost');
    await controls.addFault({ clientOrderId: lost, callbacks: 'drop' });
    await approvedSale({ clientOrderId: lost, callbacks: true });
    await waitCallbacksIdle(lost);
    const attempts = (await controls.callbacks(lost)).attempts;
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(attempts.every((a) => a.dropped)).toBe(true);
    expect(cb.requests.filter((r) => r.query.get('client_orderid') === lost)).toEqual([]);
  });

  it('a percentage drop rule loses some attempts, and every callback still arrives', async () => {
    await controls.changeSettings({ faultSeed: 11, callbackRetry: { maxAttempts: 30 } });
    await controls.addFault({ callbacks: 'drop', probability: 0.5 });
    const sales: Array<{ clientOrderId: string; orderId: string }> = [];
    for (let i = 0; i < 12; i += 1) sales.push(await approvedSale({ callbacks: true }));
    for (const sale of sales) await waitCallbacksIdle(sale.clientOrderId);
    const attempts = (await controls.callbacks()).attempts.filter((a) =>
      sales.some((x) => x.clientOrderId === a.clientOrderId),
    );
    expect(attempts.some((a) => a.dropped)).toBe(true);
    for (const sale of sales) {
      const delivered = cb.requests.filter(
        (r) => r.query.get('client_orderid') === sale.clientOrderId,
      );
      expect(delivered).toHaveLength(1);
    }
  });
});

describe('reused client_orderid', () => {
  it('is refused by default, and charges a second order in the charge-again mode', async () => {
    const f = saleFields(EP.usd);
    const first = await post(api(`v2/sale/${EP.usd}`), f);
    const firstId = String(first.json['paynet-order-id']);
    await finalStatus(s.url, EP.usd, f.client_orderid, firstId);
    // Default: the identical request replays the first reply, a different one is refused.
    const again = await post(api(`v2/sale/${EP.usd}`), f);
    expect(String(again.json['paynet-order-id'])).toBe(firstId);
    const different = saleFields(EP.usd, { clientOrderId: f.client_orderid, amount: '5.00' });
    expect((await post(api(`v2/sale/${EP.usd}`), different)).status).toBe(400);
    expect((await controls.ledger(f.client_orderid)).entries).toHaveLength(1);

    expect((await controls.settings()).reusedClientOrderId).toBe('refuse');
    await controls.changeSettings({ reusedClientOrderId: 'charge-again' });
    const second = await post(api(`v2/sale/${EP.usd}`), f);
    expect(second.status).toBe(200);
    const secondId = String(second.json['paynet-order-id']);
    expect(secondId).not.toBe(firstId);
    await finalStatus(s.url, EP.usd, f.client_orderid, secondId);

    const charges = (await controls.ledger(f.client_orderid)).entries.filter(
      (e) => e.movement === 'charged',
    );
    expect(charges.map((e) => e.orderId)).toEqual([firstId, secondId]);
    expect(charges.map((e) => e.amountMinor)).toEqual([1042, 1042]);
    // Both orders stay queryable by their own orderid; the client_orderid alone finds the newest.
    expect((await statusOf(s.url, EP.usd, f.client_orderid, firstId)).status).toBe('approved');
    expect((await statusOf(s.url, EP.usd, f.client_orderid))['paynet-order-id']).toBe(secondId);

    await controls.reset();
    expect((await controls.settings()).reusedClientOrderId).toBe('refuse');
  });
});
