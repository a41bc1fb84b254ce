import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { errors } from 'undici';
import { startServer, type TestServer } from '../test/support';
import { PaymentGatewayClient, type PaymentGatewayClientConfig } from './client';
import { classifyTransportError, type CallResult } from './outcome';
import type { RedactedRequestEvent, RedactedResponseEvent } from './client';

const sale = {
  client_orderid: 'c1',
  order_desc: 'd',
  amount: 1042,
  currency: 'USD',
  address1: 'a',
  city: 'c',
  zip_code: 'z',
  country: 'US',
  phone: '1',
  email: 'e@x.example',
  ipaddress: '1.2.3.4',
  card_printed_name: 'A B',
  credit_card_number: '4444444444444448',
  expire_month: '12',
  expire_year: '2030',
  cvv2: '123',
  redirect_url: 'https://r.example',
};

function cfg(
  baseUrl: string,
  extra: Partial<PaymentGatewayClientConfig> = {},
): PaymentGatewayClientConfig {
  return {
    baseUrl,
    endpoint: { endpointId: '42' },
    login: 'm',
    controlKey: 'k',
    transport: { headersTimeoutMs: 300, bodyTimeoutMs: 300, connectTimeoutMs: 500 },
    ...extra,
  };
}

/** A single-server fixture whose behaviour each test sets. */
let behaviour: (res: import('node:http').ServerResponse, body: string) => void = () => {};
let server: TestServer;
beforeAll(async () => {
  server = await startServer((req, res) => behaviour(res, req.body));
});
afterAll(() => server.close());

async function callWith(
  b: typeof behaviour,
  op: 'v2/sale' | 'v2/status' = 'v2/sale',
  extra: Partial<PaymentGatewayClientConfig> = {},
): Promise<CallResult<unknown>> {
  behaviour = b;
  const client = new PaymentGatewayClient(cfg(server.baseUrl, extra));
  try {
    return op === 'v2/sale'
      ? await client.call('v2/sale', sale)
      : await client.call('v2/status', { client_orderid: 'c1' });
  } finally {
    await client.close();
  }
}

const json = (status: number, obj: unknown) => (res: import('node:http').ServerResponse) => {
  res.statusCode = status;
  res.setHeader('content-type', 'application/vnd.pay+json; charset=utf-8');
  res.end(JSON.stringify(obj));
};

describe('before sending → not-sent', () => {
  it('ECONNREFUSED (a port with nothing listening)', async () => {
    const probe: Server = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const client = new PaymentGatewayClient(cfg(`http://127.0.0.1:${port}/paynet`));
    const r = await client.call('v2/sale', sale);
    await client.close();
    expect(r).toMatchObject({
      outcome: 'not-sent',
      reason: 'connection-refused',
      errorCode: 'ECONNREFUSED',
    });
  });

  it('connect timeout for real: a TLS origin whose server accepts TCP but never answers the handshake', async () => {
    // undici's connect phase includes the TLS handshake, so a listener that swallows the
    // ClientHello makes the connect timeout fire over loopback: no request byte ever left.
    const silent: Server = createServer((socket) => {
      socket.on('data', () => undefined);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as AddressInfo).port;
    const client = new PaymentGatewayClient(
      cfg(`https://127.0.0.1:${port}/paynet`, {
        transport: { headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000, connectTimeoutMs: 200 },
      }),
    );
    try {
      const r = await client.call('v2/sale', sale);
      expect(r).toMatchObject({ outcome: 'not-sent', reason: 'connect-timeout' });
    } finally {
      await client.close();
      silent.close();
    }
  });

  it('closed client', async () => {
    const client = new PaymentGatewayClient(cfg(server.baseUrl));
    await client.close();
    const before = server.requests.length;
    const r = await client.call('v2/sale', sale);
    expect(r).toMatchObject({ outcome: 'not-sent', reason: 'pool-closed' });
    expect(server.requests.length).toBe(before);
  });

  it('HTTP 429 → not-sent rate-limited', async () => {
    expect(await callWith(json(429, { 'error-message': 'slow down' }))).toMatchObject({
      outcome: 'not-sent',
      reason: 'rate-limited',
      httpStatus: 429,
    });
  });
});

describe('after sending → unknown (never declined)', () => {
  it('server accepts but never answers → headers timeout', async () => {
    const r = await callWith(() => {
      /* never respond */
    });
    expect(r).toMatchObject({
      outcome: 'unknown',
      reason: 'headers-timeout',
      errorCode: 'UND_ERR_HEADERS_TIMEOUT',
      resolveByStatusQuery: true,
      retriable: false,
    });
  });

  it('read-only status: unknown but retriable', async () => {
    const r = await callWith(() => {}, 'v2/status');
    expect(r).toMatchObject({ outcome: 'unknown', resolveByStatusQuery: false, retriable: true });
  });

  it.each([500, 502, 503, 504])('HTTP %d → unknown server-error', async (status) => {
    const r = await callWith(json(status, { type: 'error', 'error-message': 'boom' }));
    expect(r).toMatchObject({ outcome: 'unknown', reason: 'server-error', httpStatus: status });
  });

  it('truncated body (socket destroyed mid-body) → unknown connection-lost', async () => {
    const r = await callWith((res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.pay+json', 'content-length': '200' });
      res.write('{"type":"async-response","paynet-order-id":');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    expect(r).toMatchObject({ outcome: 'unknown', reason: 'connection-lost' });
  });

  it('body stalls → unknown body-timeout', async () => {
    const r = await callWith((res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.pay+json' });
      res.write('{"type":');
    });
    expect(r).toMatchObject({ outcome: 'unknown', reason: 'body-timeout' });
  });

  it.each([
    ['declared', true],
    ['chunked', false],
  ])('reply over the size limit (%s) → unknown reply-too-large', async (_n, declared) => {
    const big = JSON.stringify({ type: 'async-response', pad: 'x'.repeat(4096) });
    const r = await callWith(
      (res) => {
        res.writeHead(200, declared ? { 'content-length': String(big.length) } : {});
        res.end(big);
      },
      'v2/sale',
      { transport: { maxReplyBytes: 1024, headersTimeoutMs: 1000 } },
    );
    expect(r).toMatchObject({ outcome: 'unknown', reason: 'reply-too-large' });
  });

  it.each([
    ['html', '<html>oops</html>'],
    ['broken json', '{"type":"async-response",'],
    ['json array', '[1,2]'],
    ['empty', ''],
    ['wrong type', '{"type":"status-response","status":"approved"}'],
  ])('unparseable 200 reply to a mutating call (%s) → unknown', async (_n, body) => {
    const r = await callWith((res) => res.end(body));
    expect(r).toMatchObject({
      outcome: 'unknown',
      reason: 'unparseable-reply',
      resolveByStatusQuery: true,
    });
  });
});

describe('rejected (final)', () => {
  it('4xx with a JSON validation error body', async () => {
    const r = await callWith(json(400, { 'error-message': 'amount invalid', 'error-code': 1 }));
    expect(r).toMatchObject({
      outcome: 'rejected',
      reason: 'validation',
      httpStatus: 400,
      errorCode: '1',
      errorMessage: 'amount invalid',
    });
  });

  it('4xx decline fixture with numeric error-code', async () => {
    const r = await callWith(
      json(402, {
        'paynet-order-id': 12345,
        'error-message': 'Declined by the issuer',
        'error-code': 3,
      }),
    );
    expect(r).toMatchObject({ outcome: 'rejected', reason: 'business-rule', errorCode: '3' });
  });

  it.each([401, 403])('%d plain text → authentication', async (status) => {
    const r = await callWith((res) => {
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end('invalid signature: base string mismatch');
    });
    expect(r).toMatchObject({ outcome: 'rejected', reason: 'authentication', httpStatus: status });
  });

  it('200 form reply type=validation-error → rejected validation', async () => {
    const r = await callWith((res) =>
      res.end(
        'type=validation-error\n&serial-number=s1\n&error-message=bad%20email\n&error-code=1\n',
      ),
    );
    expect(r).toMatchObject({
      outcome: 'rejected',
      reason: 'validation',
      errorMessage: 'bad email',
    });
  });

  it('200 type=error → rejected business-rule', async () => {
    const r = await callWith(
      json(200, { type: 'error', 'error-message': 'void not allowed', 'error-code': '5' }),
    );
    expect(r).toMatchObject({ outcome: 'rejected', reason: 'business-rule', errorCode: '5' });
  });
});

describe('accepted replies', () => {
  it('form-encoded reply (default format, newline-terminated values)', async () => {
    const r = await callWith((res) => {
      res.writeHead(200, { 'content-type': 'text/html;charset=utf-8' });
      res.end(
        'type=async-response\n&serial-number=00000000-0000-0000-0000-000002d9b22a\n&merchant-order-id=inv4097763\n&paynet-order-id=6768788\n&end-point-id=22903\n',
      );
    });
    expect(r).toMatchObject({
      outcome: 'accepted',
      reply: {
        type: 'async-response',
        paynetOrderId: '6768788',
        merchantOrderId: 'inv4097763',
        endPointId: '22903',
      },
    });
  });

  it.each([
    [12345, '12345'],
    ['12345', '12345'],
  ])('paynet-order-id %p → string %p', async (id, expected) => {
    const r = await callWith(json(200, { type: 'async-response', 'paynet-order-id': id }));
    expect(r.outcome).toBe('accepted');
    if (r.outcome === 'accepted')
      expect((r.reply as { paynetOrderId: string }).paynetOrderId).toBe(expected);
  });

  it('status reply without type (vendor emulator style) with 3-D Secure redirect-to', async () => {
    const r = await callWith(
      json(200, {
        'paynet-order-id': '1',
        status: 'processing',
        amount: '10.42',
        currency: 'USD',
        'redirect-to': 'https://acs.example/x',
        'card-type': 'VISA',
        'last-four-digits': '4448',
      }),
      'v2/status',
    );
    expect(r).toMatchObject({
      outcome: 'accepted',
      reply: {
        type: 'status-response',
        status: 'processing',
        final: false,
        amountMinor: 1042,
        redirectTo: 'https://acs.example/x',
        cardType: 'VISA',
      },
    });
  });
});

describe('logging hooks see redacted data only', () => {
  it('no PAN, CVV, expiry, control or Authorization reaches the hooks; a throwing hook is harmless', async () => {
    const reqs: RedactedRequestEvent[] = [];
    const resps: RedactedResponseEvent[] = [];
    const r = await callWith(
      json(200, { type: 'async-response', 'paynet-order-id': 1, control: 'deadbeef' }),
      'v2/sale',
      {
        onRequest: (e) => {
          reqs.push(e);
          throw new Error('hook failure');
        },
        onResponse: (e) => resps.push(e),
      },
    );
    expect(r.outcome).toBe('accepted');
    const dump = JSON.stringify({ reqs, resps });
    expect(dump).not.toContain('4444444444444448');
    expect(dump).toContain('444444******4448');
    expect(dump).not.toMatch(/cvv2|expire_|"control":|authorization|oauth_signature|deadbeef/i);
    expect(reqs[0].fields.client_orderid).toBe('c1');
    expect(resps[0]).toMatchObject({ operation: 'v2/sale', outcome: 'accepted', httpStatus: 200 });
  });
});

describe('classifyTransportError with real undici error classes', () => {
  it.each([
    ['ConnectTimeoutError', 'not-sent', 'connect-timeout', () => new errors.ConnectTimeoutError()],
    ['ClientClosedError', 'not-sent', 'pool-closed', () => new errors.ClientClosedError()],
    [
      'ENOTFOUND',
      'not-sent',
      'dns',
      () => Object.assign(new Error('getaddrinfo'), { code: 'ENOTFOUND' }),
    ],
    ['HeadersTimeoutError', 'unknown', 'headers-timeout', () => new errors.HeadersTimeoutError()],
    ['BodyTimeoutError', 'unknown', 'body-timeout', () => new errors.BodyTimeoutError()],
    [
      'SocketError',
      'unknown',
      'connection-lost',
      () => new errors.SocketError('other side closed'),
    ],
    ['ClientDestroyedError', 'unknown', 'connection-lost', () => new errors.ClientDestroyedError()],
    ['RequestAbortedError', 'unknown', 'aborted', () => new errors.RequestAbortedError()],
    [
      'ECONNRESET',
      'unknown',
      'connection-lost',
      () => Object.assign(new Error('x'), { code: 'ECONNRESET' }),
    ],
    ['no code', 'unknown', 'transport-error', () => new Error('no code')],
    [
      'AggregateError all ECONNREFUSED',
      'not-sent',
      'connection-refused',
      () =>
        new AggregateError([
          Object.assign(new Error('a'), { code: 'ECONNREFUSED' }),
          Object.assign(new Error('b'), { code: 'ECONNREFUSED' }),
        ]),
    ],
    [
      'AggregateError mixed',
      'unknown',
      'connection-lost',
      () =>
        new AggregateError([
          Object.assign(new Error('a'), { code: 'ECONNREFUSED' }),
          Object.assign(new Error('b'), { code: 'ECONNRESET' }),
        ]),
    ],
  ])('%s → %s %s', (_label, outcome, reason, make) => {
    expect(classifyTransportError((make as () => unknown)())).toMatchObject({ outcome, reason });
  });
});
