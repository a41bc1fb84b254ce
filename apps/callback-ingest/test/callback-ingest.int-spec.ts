/**
 * callback-ingest over real HTTP against the real broker: what the gateway and the payer's
 * browser send, what is answered, and what lands on payments.gateway.callbacks.v1.
 *
 * "Nothing else was published" is shown without waiting for time to pass: every message about one
 * payment has the payment id as key, so it lands in one partition in order; after the request
 * under test, a valid callback for the same payment (the sentinel) is sent and awaited — once the
 * sentinel is consumed, everything published before it for that payment has been consumed too.
 */
import { createServer } from 'node:net';
import { fromKafkaHeaders, isValidTraceparent, TOPICS } from '@payments/contracts';
import {
  formEncode,
  ManualClock,
  signedCallback,
  signedReturn,
  TEST_CONTROL_KEY,
  TEST_ENDPOINT_ID,
} from '../../../test/support/callback';
import {
  type Collected,
  type RunningCallbackIngest,
  startCallbackIngest,
  TopicCollector,
} from '../../../test/support/callback-app';

const TOPIC = TOPICS.gatewayCallbacks;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

let edge: RunningCallbackIngest;
let collector: TopicCollector;
const clock = new ManualClock();
/** The log lines of every app of this file (nestjs-pino's root logger is per process). */
const logs: string[] = [];
/** Every reply body of every test, checked for stack traces at the end. */
const replies: string[] = [];

interface Reply {
  readonly status: number;
  readonly text: string;
  readonly headers: Headers;
  json<T = { error: { code: string; message: string; errorId: string } }>(): T;
}

async function call(
  base: string,
  path: string,
  init: RequestInit & { duplex?: 'half' } = {},
): Promise<Reply> {
  const res = await fetch(`${base}${path}`, { redirect: 'manual', ...init });
  const text = await res.text();
  replies.push(text);
  return { status: res.status, text, headers: res.headers, json: <T>() => JSON.parse(text) as T };
}

const callbackPath = (params: Record<string, string>, endpoint = TEST_ENDPOINT_ID) =>
  `/callbacks/gateway/${endpoint}?${formEncode(params)}`;

/** Sends a valid callback for `paymentId` and waits until it is consumed (see the header). */
async function sentinel(paymentId: string): Promise<Collected[]> {
  const { params } = signedCallback({ merchant_order: paymentId, status: 'processing' });
  const res = await call(edge.base, callbackPath(params));
  expect(res.status).toBe(200);
  const { notificationId } = res.json<{ notificationId: string }>();
  const all = await collector.until(
    paymentId,
    (m) => m.json.notificationId === notificationId,
    `sentinel for ${paymentId}`,
  );
  return all.filter((m) => m.json.notificationId !== notificationId);
}

const kinds = (messages: Collected[]) => messages.map((m) => m.json.kind);

beforeAll(async () => {
  edge = await startCallbackIngest({}, { clock, logs });
  collector = new TopicCollector(TOPIC);
  await collector.start();
});

afterAll(async () => {
  await collector?.stop();
  await edge?.close();
});

describe('server callback', () => {
  it('a valid GET callback: 200 after the broker has it, exactly one message with key, headers and minor units', async () => {
    const { paymentId, orderid, params } = signedCallback({ amount: '10.42', currency: 'USD' });
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const res = await call(edge.base, callbackPath(params), { headers: { traceparent } });
    expect(res.status).toBe(200);
    const body = res.json<{ status: string; notificationId: string }>();
    expect(body.status).toBe('accepted');

    const before = await sentinel(paymentId);
    expect(before).toHaveLength(1);
    const [message] = before as [Collected];
    expect(message.keyText).toBe(paymentId);
    expect(message.json).toEqual({
      kind: 'callback',
      notificationId: body.notificationId,
      paymentId,
      clientOrderId: paymentId,
      source: 'server-callback',
      receivedAt: new Date(clock.now()).toISOString(),
      report: {
        status: 'approved',
        gatewayOrderId: orderid,
        amount: { minor: 1042, currency: 'USD' },
        transactionType: 'sale',
        approvalCode: '242424',
        card: { bin: '411111', lastFour: '1111', brand: 'VISA' },
      },
    });
    const envelope = fromKafkaHeaders(message.headers ?? {});
    expect(envelope).toMatchObject({
      ok: true,
      envelope: {
        id: body.notificationId,
        subject: paymentId,
        type: 'com.example.payments.gateway.callback.v1',
        source: '/payments/callback-ingest',
      },
    });
    expect(message.headerText['content-type']).toBe('application/json');
    // The caller's trace continues: same trace id, a new span.
    const tp = message.headerText.traceparent ?? '';
    expect(isValidTraceparent(tp)).toBe(true);
    expect(tp.split('-')[1]).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(tp).not.toBe(traceparent);
  });

  it('the same callback twice: two deliveries with the same ce_id and notificationId', async () => {
    const { paymentId, params } = signedCallback({ currency: 'JPY', amount: '500' });
    const first = await call(edge.base, callbackPath(params));
    const second = await call(edge.base, callbackPath(params));
    expect([first.status, second.status]).toEqual([200, 200]);
    const messages = await sentinel(paymentId);
    expect(messages).toHaveLength(2);
    const [a, b] = messages as [Collected, Collected];
    expect(a.headerText.ce_id).toBe(b.headerText.ce_id);
    expect(a.json.notificationId).toBe(b.json.notificationId);
    expect(a.headerText.ce_id).toBe(a.json.notificationId);
    expect(a.json.report).toMatchObject({ amount: { minor: 500, currency: 'JPY' } });
  });

  it('a valid POST form callback: 200 and published', async () => {
    const { paymentId, params } = signedCallback({
      status: 'declined',
      amount: '1.234',
      currency: 'KWD',
    });
    const res = await call(edge.base, `/callbacks/gateway/${TEST_ENDPOINT_ID}`, {
      method: 'POST',
      headers: FORM,
      body: formEncode(params),
    });
    expect(res.status).toBe(200);
    const messages = await sentinel(paymentId);
    expect(kinds(messages)).toEqual(['callback']);
    expect(messages[0]?.json.report).toMatchObject({
      status: 'declined',
      amount: { minor: 1234, currency: 'KWD' },
    });
  });

  it('a forged control: 403, nothing verified published, one hint, and no second hint within the minute', async () => {
    const { paymentId, params } = signedCallback({}, 'not-the-merchant-key-at-all');
    const first = await call(edge.base, callbackPath(params));
    expect(first.status).toBe(403);
    expect(first.json().error.code).toBe('checksum-mismatch');
    clock.advance(59_000);
    const second = await call(edge.base, callbackPath({ ...params, status: 'declined' }));
    expect(second.status).toBe(403);

    const messages = await sentinel(paymentId);
    expect(kinds(messages)).toEqual(['status-check-hint']);
    expect(messages[0]?.json).toMatchObject({ paymentId, reason: 'checksum-mismatch' });
    expect(messages[0]?.headerText.ce_type).toBe(
      'com.example.payments.gateway.status-check-hint.v1',
    );

    // A minute after the first hint, the next forged callback may prompt another one.
    clock.advance(1_000);
    expect((await call(edge.base, callbackPath(params))).status).toBe(403);
    const later = await sentinel(paymentId);
    expect(kinds(later).filter((k) => k === 'status-check-hint')).toHaveLength(2);
    expect(kinds(later).filter((k) => k === 'callback')).toHaveLength(1); // the first sentinel

    const metrics = await (await fetch(`${edge.base}/metrics`)).text();
    expect(metrics).toMatch(/callbacks_rejected_total\{reason="checksum-mismatch"[^}]*\} [3-9]/);
    expect(metrics).toMatch(/callbacks_hints_suppressed_total\{why="rate-limited"[^}]*\} [1-9]/);
  });

  it.each([
    ['wrong length', 'abc123', 403, 'checksum-mismatch'],
    ['non-hex', 'g'.repeat(40), 403, 'checksum-mismatch'],
    ['empty', '', 400, 'missing-control'],
  ])('a %s control: %d %s, nothing verified published', async (_, control, status, code) => {
    const { paymentId, params } = signedCallback({ control });
    const res = await call(edge.base, callbackPath(params));
    expect(res.status).toBe(status);
    expect(res.json().error.code).toBe(code);
    expect(kinds(await sentinel(paymentId))).toEqual(['status-check-hint']);
  });

  it('a missing control: 400', async () => {
    const { params } = signedCallback();
    const { control: _control, ...withoutControl } = params;
    const res = await call(edge.base, callbackPath(withoutControl));
    expect(res.status).toBe(400);
    expect(res.json().error.code).toBe('missing-control');
  });

  it('a verified callback whose merchant_order is no payment id: 400', async () => {
    const { params } = signedCallback({ merchant_order: 'ORDER-7', client_orderid: 'ORDER-7' });
    const res = await call(edge.base, callbackPath(params));
    expect(res.status).toBe(400);
    expect(res.json().error.code).toBe('unknown-merchant-order');
  });

  it('an unknown endpoint: 404 JSON, whatever the parameters', async () => {
    const { params } = signedCallback();
    const res = await call(edge.base, callbackPath(params, '9999'));
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.json().error.code).toBe('unknown-endpoint');
  });

  it('an oversized body: 413, declared or streamed', async () => {
    const { params } = signedCallback();
    const big = `${formEncode(params)}&pad=${'x'.repeat(20_000)}`;
    const declared = await call(edge.base, `/callbacks/gateway/${TEST_ENDPOINT_ID}`, {
      method: 'POST',
      headers: FORM,
      body: big,
    });
    expect(declared.status).toBe(413);
    expect(declared.json().error.code).toBe('payload-too-large');

    const chunks = [big.slice(0, 10_000), big.slice(10_000)];
    const streamed = await call(edge.base, `/callbacks/gateway/${TEST_ENDPOINT_ID}`, {
      method: 'POST',
      headers: FORM,
      duplex: 'half',
      body: new ReadableStream({
        pull(controller) {
          const next = chunks.shift();
          if (next === undefined) controller.close();
          else controller.enqueue(new TextEncoder().encode(next));
        },
      }),
    });
    expect(streamed.status).toBe(413);
  });

  it('a long query: 414', async () => {
    const { params } = signedCallback({ comment: 'y'.repeat(9_000) });
    const res = await call(edge.base, callbackPath(params));
    expect(res.status).toBe(414);
    expect(res.json().error.code).toBe('uri-too-long');
  });

  it('too many parameters: 400; a POST that is not a form: 415', async () => {
    const many = Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`p${i}`, 'v']));
    const res = await call(edge.base, callbackPath(many));
    expect(res.status).toBe(400);
    expect(res.json().error.code).toBe('too-many-parameters');

    const json = await call(edge.base, `/callbacks/gateway/${TEST_ENDPOINT_ID}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signedCallback().params),
    });
    expect(json.status).toBe(415);
    expect(json.json().error.code).toBe('unsupported-media-type');
  });

  it('a parameter repeated with different values: 400', async () => {
    const { params } = signedCallback();
    const res = await call(edge.base, `${callbackPath(params)}&status=declined`);
    expect(res.status).toBe(400);
    expect(res.json().error.code).toBe('malformed-callback');
  });
});

describe('browser return', () => {
  it('verified: 303 to the merchant page with the payment, and a browser-return message', async () => {
    const { paymentId, orderid, params } = signedReturn();
    const res = await call(edge.base, `/return/${TEST_ENDPOINT_ID}`, {
      method: 'POST',
      headers: FORM,
      body: formEncode(params),
    });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe(
      'https://shop.example.com/payment/finished',
    );
    expect(location.searchParams.get('lang')).toBe('en');
    expect(location.searchParams.get('payment')).toBe(paymentId);
    expect(location.searchParams.has('result')).toBe(false);

    const messages = await sentinel(paymentId);
    expect(messages).toHaveLength(1);
    expect(messages[0]?.json).toMatchObject({
      kind: 'callback',
      source: 'browser-return',
      paymentId,
      report: { status: 'approved', gatewayOrderId: orderid },
    });
  });

  it('unverified: 303 to the same page with result=unverified, and a hint instead', async () => {
    const { paymentId, params } = signedReturn({ control: 'f'.repeat(40) });
    const res = await call(edge.base, `/return/${TEST_ENDPOINT_ID}?${formEncode(params)}`);
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get('location') ?? '');
    expect(location.searchParams.get('payment')).toBe(paymentId);
    expect(location.searchParams.get('result')).toBe('unverified');
    expect(kinds(await sentinel(paymentId))).toEqual(['status-check-hint']);
  });

  it('malformed (names no payment): a plain error page, not JSON', async () => {
    const res = await call(edge.base, `/return/${TEST_ENDPOINT_ID}`, {
      method: 'POST',
      headers: FORM,
      body: 'status=approved',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.text).not.toContain('missing');
  });
});

function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('port')),
      );
    });
  });
}

describe('broker unreachable', () => {
  let dead: RunningCallbackIngest;

  beforeAll(async () => {
    dead = await startCallbackIngest(
      {
        KAFKA_BROKERS: `127.0.0.1:${await closedPort()}`,
        KAFKA_START_WAIT_MS: '300',
        CALLBACK_PUBLISH_TIMEOUT_MS: '1000',
      },
      { logs },
    );
  });

  afterAll(async () => {
    await dead?.close();
  });

  it('answers a verified callback 503 (so the gateway retries), never 200', async () => {
    const { params } = signedCallback();
    for (const attempt of [1, 2]) {
      const res = await call(dead.base, callbackPath(params));
      expect({ attempt, status: res.status }).toEqual({ attempt, status: 503 });
      expect(res.json().error.code).toBe('broker-unavailable');
    }
    const form = await call(dead.base, `/callbacks/gateway/${TEST_ENDPOINT_ID}`, {
      method: 'POST',
      headers: FORM,
      body: formEncode(params),
    });
    expect(form.status).toBe(503);
  });

  it('still answers forged callbacks 403 and still redirects the payer', async () => {
    const forged = signedCallback({ control: '0'.repeat(40) });
    expect((await call(dead.base, callbackPath(forged.params))).status).toBe(403);
    const { paymentId, params } = signedReturn();
    const res = await call(dead.base, `/return/${TEST_ENDPOINT_ID}?${formEncode(params)}`);
    expect(res.status).toBe(303);
    expect(new URL(res.headers.get('location') ?? '').searchParams.get('payment')).toBe(paymentId);
  });

  it('reports not ready', async () => {
    const res = await call(dead.base, '/health/ready');
    expect(res.status).toBe(503);
  });

  it('logs the failure without the control key', () => {
    const text = logs.join('');
    expect(text).toContain('not acknowledged by the broker');
    expect(text).not.toContain(TEST_CONTROL_KEY);
  });
});

describe('health and hygiene', () => {
  it('is ready while the broker is reachable', async () => {
    const res = await call(edge.base, '/health/ready');
    expect(res.status).toBe(200);
    expect(res.json<{ info: Record<string, unknown> }>().info).toHaveProperty('kafka');
  });

  it('counts callbacks received, verified, rejected and published, and publish latency', async () => {
    const metrics = await (await fetch(`${edge.base}/metrics`)).text();
    for (const name of [
      'callbacks_received_total{source="server-callback"',
      'callbacks_verified_total{source="browser-return"',
      'callbacks_rejected_total{reason="payload-too-large"',
      'callbacks_published_total{kind="callback",source="server-callback"',
      'callbacks_publish_duration_seconds_bucket{',
    ]) {
      expect(metrics).toContain(name);
    }
  });

  it('never logs the control key, nor the query of a callback (control, name, e-mail)', () => {
    const text = logs.join('');
    expect(logs.length).toBeGreaterThan(10);
    expect(text).toContain('verified notification published');
    expect(text).not.toContain(TEST_CONTROL_KEY);
    expect(text).not.toContain('payer@example.com');
    expect(text).not.toMatch(/control=[0-9a-f]{40}/);
  });

  it('never answers with a stack trace', () => {
    expect(replies.length).toBeGreaterThan(20);
    for (const body of replies) {
      expect(body).not.toMatch(/\bat .+:\d+:\d+/);
      expect(body).not.toContain('"stack"');
    }
  });
});
