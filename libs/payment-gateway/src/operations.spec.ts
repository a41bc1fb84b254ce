import { createHash, createHmac, generateKeyPairSync, verify } from 'node:crypto';
import {
  parseBody,
  parseOAuthHeader,
  refEncode,
  startServer,
  type TestServer,
} from '../test/support';
import { OPERATIONS, OPERATION_IDS, type OperationId } from './catalogue';
import { PaymentGatewayClient } from './client';

/**
 * Table-driven: every operation, sent through the real client to a local HTTP server. The
 * expectations (path, scheme, control formula, required fields, reply type) are written out
 * here from the spec and the facts reference, independently of the catalogue.
 */
type Scheme = 'control' | 'hmac' | 'rsa';
interface Row {
  path: string;
  scheme: Scheme;
  control?: string[];
  /** Body fields when only required fields are given (login included when sent). */
  body: string[];
  reply: string;
}

const S = [
  'client_orderid',
  'order_desc',
  'amount',
  'currency',
  'address1',
  'city',
  'zip_code',
  'country',
  'email',
  'ipaddress',
];
const CARD = ['card_printed_name', 'credit_card_number', 'expire_month', 'expire_year', 'cvv2'];
const V = [
  'client_orderid',
  'order_desc',
  'address1',
  'city',
  'zip_code',
  'country',
  'email',
  'ipaddress',
];
const SALE_C = ['endpointId', 'client_orderid', 'amount', 'email'];
const REF_C = ['login', 'client_orderid', 'orderid'];
const TDS_C = ['login', 'client-order-id', 'orderid'];

const TABLE: Record<OperationId, Row> = {
  'v2/sale': {
    path: '/api/v2/sale/42',
    scheme: 'control',
    control: SALE_C,
    body: [...S, 'phone', ...CARD, 'redirect_url'],
    reply: 'async-response',
  },
  'v2/sale-form': {
    path: '/api/v2/sale-form/42',
    scheme: 'control',
    control: SALE_C,
    body: [...S, 'redirect_url'],
    reply: 'async-form-response',
  },
  'v2/preauth': {
    path: '/api/v2/preauth/42',
    scheme: 'control',
    control: SALE_C,
    body: [...S, 'phone', ...CARD, 'redirect_url'],
    reply: 'async-response',
  },
  'v2/preauth-form': {
    path: '/api/v2/preauth-form/42',
    scheme: 'control',
    control: SALE_C,
    body: [...S, 'redirect_url'],
    reply: 'async-form-response',
  },
  'v2/capture': {
    path: '/api/v2/capture/42',
    scheme: 'control',
    control: [...REF_C, 'amount', 'currency'],
    body: ['login', 'client_orderid', 'orderid'],
    reply: 'async-response',
  },
  'v2/void': {
    path: '/api/v2/void/42',
    scheme: 'control',
    control: REF_C,
    body: ['login', 'client_orderid', 'orderid', 'comment'],
    reply: 'async-response',
  },
  'v2/return': {
    path: '/api/v2/return/42',
    scheme: 'control',
    control: [...REF_C, 'amount', 'currency'],
    body: ['login', 'client_orderid', 'orderid'],
    reply: 'async-response',
  },
  'v2/status': {
    path: '/api/v2/status/42',
    scheme: 'control',
    control: REF_C,
    body: ['login', 'client_orderid'],
    reply: 'status-response',
  },
  'v2/account-verification': {
    path: '/api/v2/account-verification/42',
    scheme: 'control',
    control: ['endpointId', 'client_orderid', 'email'],
    body: [...V, ...CARD],
    reply: 'async-response',
  },
  'v2/account-verification-form': {
    path: '/api/v2/account-verification-form/42',
    scheme: 'control',
    control: ['endpointId', 'client_orderid', 'email'],
    body: [...V, 'redirect_url'],
    reply: 'async-form-response',
  },
  'v2/create-card-ref': {
    path: '/api/v2/create-card-ref/42',
    scheme: 'control',
    control: REF_C,
    body: ['login', 'client_orderid', 'orderid'],
    reply: 'create-card-ref-response',
  },
  'v2/make-rebill': {
    path: '/api/v2/make-rebill/42',
    scheme: 'control',
    control: ['login', 'client_orderid', 'cardrefid', 'amount', 'currency'],
    body: ['login', 'client_orderid', 'cardrefid', 'amount', 'currency'],
    reply: 'async-response',
  },
  'v2/get-card-info': {
    path: '/api/v2/get-card-info/42',
    scheme: 'control',
    control: ['login', 'cardrefid'],
    body: ['login', 'cardrefid'],
    reply: 'get-card-info-response',
  },
  'v2/payment-form': {
    path: '/api/v2/payment-form/42',
    scheme: 'control',
    control: SALE_C,
    body: [...S, 'redirect_url'],
    reply: 'async-form-response',
  },
  'v2/payout-form': {
    path: '/api/v2/payout-form/42',
    scheme: 'hmac',
    body: ['client_orderid', 'amount', 'currency', 'redirect_url'],
    reply: 'async-form-response',
  },
  'v2/payout': {
    path: '/api/v2/payout/42',
    scheme: 'hmac',
    body: ['client_orderid', 'amount', 'currency'],
    reply: 'async-response',
  },
  'v2/pan-eligibility/send': {
    path: '/api/v2/pan-eligibility/send/42',
    scheme: 'hmac',
    body: ['client-order-id', 'sending-card-ref-id'],
    reply: 'async-response',
  },
  'v4/create-card-ref': {
    path: '/api/v4/create-card-ref/42',
    scheme: 'rsa',
    body: ['login', 'client_orderid', 'orderid'],
    reply: 'create-card-ref-response',
  },
  'v4/create-recurring-payment': {
    path: '/api/v4/create-recurring-payment/42',
    scheme: 'rsa',
    body: ['login', 'client-orderid', 'period', 'interval', 'amount', 'currency'],
    reply: 'create-recurring-payment-response',
  },
  'v4/payout-check': {
    path: '/api/v4/payout-check/42',
    scheme: 'rsa',
    body: ['client_orderid', 'amount', 'currency'],
    reply: 'async-response',
  },
  'v4/payout-pay': {
    path: '/api/v4/payout-pay/42',
    scheme: 'rsa',
    body: ['login', 'client_orderid', 'orderid'],
    reply: 'async-response',
  },
  'v4/transfer': {
    path: '/api/v4/transfer/42',
    scheme: 'rsa',
    body: ['client_orderid', 'amount', 'currency'],
    reply: 'async-response',
  },
  'v4/transfer-by-ref': {
    path: '/api/v4/transfer-by-ref/42',
    scheme: 'rsa',
    body: ['client-order-id', 'amount', 'currency'],
    reply: 'async-response',
  },
  'v4/payout': {
    path: '/api/v4/payout/42',
    scheme: 'rsa',
    body: ['client-order-id', 'amount', 'currency'],
    reply: 'async-response',
  },
  '3ds/v1/upload-method-url-result': {
    path: '/api/3ds/v1/upload-method-url-result/42',
    scheme: 'control',
    control: TDS_C,
    body: ['login', 'client-order-id', 'orderid', 'threeDSCompInd'],
    reply: 'async-response',
  },
  '3ds/v1/upload-cres-result': {
    path: '/api/3ds/v1/upload-cres-result/42',
    scheme: 'control',
    control: TDS_C,
    body: ['login', 'client-order-id', 'orderid', 'cRes'],
    reply: 'async-response',
  },
  '3ds/v1/upload-pares-result': {
    path: '/api/3ds/v1/upload-pares-result/42',
    scheme: 'control',
    control: TDS_C,
    body: ['login', 'client-order-id', 'orderid', 'PaRes'],
    reply: 'async-response',
  },
};

const LOGIN = 'merchant login';
const KEY = 'B17F59B4-A7DC-41B4-8FF9-37D986B43D20';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const NOW_MS = 1_700_000_123_456;

/** Minimal valid input: every required field, amounts 1042 minor units USD. */
function minimalInput(id: OperationId): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(OPERATIONS[id].fields)) {
    if (!spec.required) continue;
    out[name] =
      spec.kind === 'amount' ? 1042 : spec.kind === 'currency' ? 'USD' : `${name} value é+&`;
  }
  return out;
}

const REPLIES: Record<string, Record<string, unknown>> = {
  'async-response': {
    type: 'async-response',
    'paynet-order-id': 6768788,
    'merchant-order-id': 'm1',
    'serial-number': 's',
  },
  'async-form-response': {
    type: 'async-form-response',
    'paynet-order-id': '1',
    'redirect-url': 'https://pay.example/form/1',
  },
  'status-response': {
    type: 'status-response',
    status: 'approved',
    amount: '10.42',
    currency: 'USD',
    'paynet-order-id': '1',
  },
  'create-card-ref-response': {
    type: 'create-card-ref-response',
    'card-ref-id': '10901',
    status: 'approved',
  },
  'get-card-info-response': {
    type: 'get-card-info-response',
    bin: '444455',
    'last-four-digits': '1111',
  },
  'create-recurring-payment-response': { 'recurring-payment-id': '77' },
};

function sha1hex(s: string): string {
  return createHash('sha1').update(s, 'utf8').digest('hex');
}

/** Independent OAuth base string: byte-wise RFC 3986 encoding, Buffer.compare sort. */
function independentBaseString(url: string, params: Record<string, string>): string {
  const pairs = Object.entries(params)
    .map(([k, v]) => [refEncode(k), refEncode(v)] as const)
    .sort((a, b) => Buffer.compare(Buffer.from(a[0]), Buffer.from(b[0])))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return `POST&${refEncode(url)}&${refEncode(pairs)}`;
}

describe('every operation through the client (table-driven)', () => {
  let server: TestServer;
  let client: PaymentGatewayClient;
  let expectedReply: Record<string, unknown> = {};

  beforeAll(async () => {
    server = await startServer((_req, res) => {
      res.setHeader('content-type', 'application/vnd.pay+json; charset=utf-8');
      res.end(JSON.stringify(expectedReply));
    });
    client = new PaymentGatewayClient({
      baseUrl: `${server.baseUrl}/`,
      endpoint: { endpointId: '42' },
      login: LOGIN,
      controlKey: KEY,
      rsaPrivateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      clock: () => NOW_MS,
    });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('the catalogue has exactly the 27 operations of the table', () => {
    expect([...OPERATION_IDS].sort()).toEqual(Object.keys(TABLE).sort());
    expect(OPERATION_IDS).toHaveLength(27);
  });

  it.each(Object.entries(TABLE) as [OperationId, Row][])('%s', async (id, row) => {
    expectedReply = REPLIES[row.reply]!;
    const input = minimalInput(id);
    const before = server.requests.length;
    const result = await client.call(id, input);
    const req = server.requests[before];

    expect(req.method).toBe('POST');
    expect(req.url).toBe(`/paynet${row.path}`);
    expect(req.headers.accept).toBe('application/vnd.pay+json');
    expect(req.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(req.body).not.toMatch(/\+/); // spaces are %20, "+" is %2B
    expect(req.body).not.toMatch(/oauth_/);

    const body = parseBody(req.body);
    const sent = { ...body };
    delete sent.control;
    expect(Object.keys(sent).sort()).toEqual([...row.body].sort());
    if ('amount' in body) expect(body.amount).toBe('10.42');
    if (body.login !== undefined) expect(body.login).toBe(LOGIN);

    const url = `http://127.0.0.1:${server.port}/paynet${row.path}`;
    switch (row.scheme) {
      case 'control': {
        expect(req.headers.authorization).toBeUndefined();
        const concat = row
          .control!.map((n) =>
            n === 'endpointId'
              ? '42'
              : n === 'login'
                ? LOGIN
                : n === 'amount'
                  ? input.amount === undefined
                    ? ''
                    : '1042'
                  : (body[n] ?? ''),
          )
          .join('');
        expect(body.control).toBe(sha1hex(concat + KEY));
        break;
      }
      case 'hmac':
      case 'rsa': {
        expect(body.control).toBeUndefined();
        const h = parseOAuthHeader(req.headers.authorization!);
        expect(h.oauth_consumer_key).toBe(LOGIN);
        expect(h.oauth_version).toBe('1.0');
        expect(h.oauth_timestamp).toBe('1700000123');
        expect(h.oauth_nonce).toMatch(/^[0-9a-f]{32}$/);
        const { oauth_signature: sig, ...oauthNoSig } = h;
        const base = independentBaseString(url, { ...body, ...oauthNoSig });
        if (row.scheme === 'hmac') {
          expect(h.oauth_signature_method).toBe('HMAC-SHA1');
          expect(sig).toBe(createHmac('sha1', `${KEY}&`).update(base).digest('base64'));
        } else {
          expect(h.oauth_signature_method).toBe('RSA-SHA256');
          expect(verify('sha256', Buffer.from(base), publicKey, Buffer.from(sig, 'base64'))).toBe(
            true,
          );
        }
        break;
      }
    }

    expect(result.outcome).toBe('accepted');
    if (result.outcome === 'accepted') expect(result.reply.type).toBe(row.reply);
  });
});

const SALE = 'v2/sale' as OperationId;

describe('replyFormat form: no JSON Accept, the form-encoded default replies read alike', () => {
  let server: TestServer;
  let client: PaymentGatewayClient;
  let reply = '';

  beforeAll(async () => {
    server = await startServer((_req, res) => {
      res.setHeader('content-type', 'text/html;charset=utf-8');
      res.end(reply);
    });
    client = new PaymentGatewayClient({
      baseUrl: `${server.baseUrl}/`,
      endpoint: { endpointId: '42' },
      login: LOGIN,
      controlKey: KEY,
      replyFormat: 'form',
      clock: () => NOW_MS,
    });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('asks without the JSON Accept and reads an accepted reply (each value ending in 0x0A)', async () => {
    reply =
      'type=async-response\n&serial-number=00000000-0000-0000-0000-000002d9b22a\n' +
      '&merchant-order-id=inv4097763\n&paynet-order-id=6768788\n&end-point-id=42\n';
    const before = server.requests.length;
    const result = await client.call(SALE, minimalInput(SALE));
    const req = server.requests[before];
    expect(req.headers.accept).toBeUndefined();
    expect(req.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(result).toMatchObject({
      outcome: 'accepted',
      reply: {
        type: 'async-response',
        serialNumber: '00000000-0000-0000-0000-000002d9b22a',
        paynetOrderId: '6768788',
      },
    });
  });

  it('reads a refusal answered HTTP 200 with type=validation-error as refused, not accepted', async () => {
    reply =
      'type=validation-error\n&serial-number=00000000-0000-0000-0000-000002d9b22b\n' +
      '&error-message=Invalid%20amount\n&error-code=2\n';
    const result = await client.call(SALE, minimalInput(SALE));
    expect(result.outcome).not.toBe('accepted');
    expect(result).toMatchObject({ httpStatus: 200 });
  });
});
