/* eslint-disable @typescript-eslint/no-explicit-any -- replies are untyped JSON in tests */
/**
 * Test harness: the sandbox in-process (Nest on 127.0.0.1, port 0) with test merchants, plus a
 * few raw-HTTP helpers written independently of the sandbox's own verification code.
 */
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { createHash, createHmac, randomBytes, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Sandbox, SandboxOptions } from '../src/application/sandbox';
import { SandboxConfig } from '../src/config';
import { MerchantRegistry, merchantsFileSchema } from '../src/domain/merchants';
import { AppModule } from '../src/app.module';

export const KEYS_DIR = join(__dirname, '..', 'test-keys');
export const PRIVATE_KEY = readFileSync(join(KEYS_DIR, 'merchant-test-private.pem'), 'utf8');
export const PUBLIC_KEY = readFileSync(join(KEYS_DIR, 'merchant-test-public.pem'), 'utf8');

export const LOGIN = 'test-merchant';
export const KEY = 'test-merchant-control';
export const OTHER_LOGIN = 'other-merchant';
export const OTHER_KEY = 'other-merchant-control';

/** Endpoints of the test merchant (see `testMerchants`). */
export const EP = {
  usd: 501,
  eurHtml: 502,
  no3ds: 503,
  methodUpload: 504,
  pares: 505,
  jpy: 506,
  slow: 507,
  group: 600,
  other: 701,
} as const;

export function testMerchants(): unknown {
  return {
    acsPassword: '12345',
    merchants: [
      {
        login: LOGIN,
        controlKey: KEY,
        rsaPublicKeyPem: PUBLIC_KEY,
        processingDelayMs: 0,
        endpoints: [
          { id: EP.usd, currency: 'USD', threeDSAction: 'redirect-to' },
          { id: EP.eurHtml, currency: 'EUR', threeDSAction: 'html' },
          { id: EP.no3ds, currency: 'USD', threeDSecure: false },
          {
            id: EP.methodUpload,
            currency: 'USD',
            threeDSMethod: true,
            threeDSResult: 'upload',
            threeDSProtocol: '2',
          },
          {
            id: EP.pares,
            currency: 'USD',
            threeDSResult: 'upload',
            threeDSProtocol: '1.0.2',
            threeDSAction: 'html',
          },
          { id: EP.jpy, currency: 'JPY', threeDSecure: false },
          { id: EP.slow, currency: 'USD', processingDelayMs: 60_000 },
        ],
        endpointGroups: [{ id: EP.group, endpoints: [EP.usd, EP.eurHtml] }],
      },
      {
        login: OTHER_LOGIN,
        controlKey: OTHER_KEY,
        endpoints: [{ id: EP.other, currency: 'USD' }],
      },
    ],
  };
}

export function testConfig(overrides: Partial<SandboxConfig> = {}): SandboxConfig {
  return {
    http: { port: 0, bodyLimitBytes: 65536 },
    merchantsFile: '(in memory)',
    publicUrl: undefined,
    testControls: true,
    acceptMode: 'form',
    oauthFailureStatus: 401,
    requireCustomerFields: true,
    settlementDelayMs: 86_400_000,
    payoutCheckTtlMs: 900_000,
    tickMs: 10,
    callbacks: {
      maxAttempts: 5,
      baseDelayMs: 20,
      maxDelayMs: 100,
      timeoutMs: 2000,
      reorderHoldMs: 150,
    },
    version: 'test',
    log: { logLevel: 'silent', logPretty: false },
    ...overrides,
  };
}

export interface Running {
  readonly url: string;
  readonly sandbox: Sandbox;
  readonly app: INestApplication;
  close(): Promise<void>;
}

export async function startSandbox(
  overrides: Partial<SandboxConfig> = {},
  merchants: unknown = testMerchants(),
): Promise<Running> {
  const config = testConfig(overrides);
  const registry = new MerchantRegistry(merchantsFileSchema.parse(merchants));
  const options: SandboxOptions = {
    api: {
      publicUrl: config.publicUrl,
      acceptMode: config.acceptMode,
      oauthFailureStatus: config.oauthFailureStatus,
      oauthWindowMs: 300_000,
    },
    callbacks: config.callbacks,
    settlementDelayMs: config.settlementDelayMs,
    payoutCheckTtlMs: config.payoutCheckTtlMs,
    requireCustomerFields: config.requireCustomerFields,
    tickMs: config.tickMs,
  };
  const sandbox = new Sandbox(registry, options);
  const app = await NestFactory.create(AppModule.forRoot(config, { sandbox }), {
    bodyParser: false,
    logger: false,
  });
  await app.listen(0, '127.0.0.1');
  const { port } = (app.getHttpServer() as Server).address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sandbox,
    app,
    close: () => app.close(),
  };
}

// ------------------------------------------------------------------ raw requests

export const JSON_ACCEPT = 'application/vnd.pay+json';

export interface RawReply {
  status: number;
  contentType: string;
  text: string;
  json: any;
}

/** Form encoding with %20 for spaces (what the OAuth examples send). */
export function formBody(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([k, v]) => `${pct(k)}=${pct(v)}`)
    .join('&');
}

/** RFC 3986 via encodeURIComponent (a different route than the sandbox's byte encoder). */
export function pct(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

export async function post(
  url: string,
  body: string | Record<string, string>,
  headers: Record<string, string> = {},
): Promise<RawReply> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      accept: JSON_ACCEPT,
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    body: typeof body === 'string' ? body : formBody(body),
  });
  const text = await response.text();
  let json: any = undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON (form-encoded or plain text reply)
  }
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    text,
    // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- untyped JSON for tests
    json,
  };
}

export function sha1(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex');
}

export function control(...parts: string[]): string {
  return sha1(parts.join('') + KEY);
}

export interface OAuthOptions {
  method: 'HMAC-SHA1' | 'RSA-SHA256';
  consumerKey?: string;
  secret?: string;
  privateKey?: string;
  timestamp?: number;
  nonce?: string;
  /** Also repeat the oauth_* values in the body (one of the facts' samples does). */
  inBody?: boolean;
}

/** Signs a form POST with OAuth 1.0a; returns the body and Authorization header to send. */
export function oauthSign(
  url: string,
  fields: Record<string, string>,
  o: OAuthOptions,
): { body: string; authorization: string } {
  const oauth: Record<string, string> = {
    oauth_consumer_key: o.consumerKey ?? LOGIN,
    oauth_nonce: o.nonce ?? randomBytes(16).toString('hex'),
    oauth_signature_method: o.method,
    oauth_timestamp: String(o.timestamp ?? Math.floor(Date.now() / 1000)),
    oauth_version: '1.0',
  };
  const all = { ...fields, ...oauth };
  const params = Object.keys(all)
    .map((k) => [pct(k), pct(all[k] ?? '')] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const base = `POST&${pct(url)}&${pct(params)}`;
  const signature =
    o.method === 'HMAC-SHA1'
      ? createHmac('sha1', `${pct(o.secret ?? KEY)}&`) // RFC 5849 §3.4.2
          .update(base)
          .digest('base64')
      : sign('sha256', Buffer.from(base), o.privateKey ?? PRIVATE_KEY).toString('base64');
  const header = { ...oauth, oauth_signature: signature };
  const authorization =
    'OAuth ' +
    Object.entries(header)
      .map(([k, v]) => `${k}="${pct(v)}"`)
      .join(', ');
  const bodyFields = o.inBody ? { ...fields, ...oauth } : fields;
  return { body: formBody(bodyFields), authorization };
}

export async function postOAuth(
  url: string,
  fields: Record<string, string>,
  o: OAuthOptions,
): Promise<RawReply> {
  const { body, authorization } = oauthSign(url, fields, o);
  return post(url, body, { authorization });
}

// ------------------------------------------------------------------ merchant-side servers

export interface Captured {
  method: string;
  url: string;
  query: URLSearchParams;
  body: string;
}

export interface Recorder {
  readonly url: string;
  readonly requests: Captured[];
  /** HTTP status to answer for the n-th request (1-based); 200 by default. */
  respond: (n: number) => number;
  close(): Promise<void>;
  waitFor(
    count: number,
    predicate?: (c: Captured) => boolean,
    timeoutMs?: number,
  ): Promise<Captured[]>;
}

export async function startRecorder(): Promise<Recorder> {
  const requests: Captured[] = [];
  const recorder: Partial<Recorder> & { respond: (n: number) => number } = { respond: () => 200 };
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        query: url.searchParams,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.statusCode = recorder.respond(requests.length);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const done: Recorder = Object.assign(recorder, {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    waitFor: async (
      count: number,
      predicate: (c: Captured) => boolean = () => true,
      timeoutMs = 10_000,
    ) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const matching = requests.filter(predicate);
        if (matching.length >= count) return matching;
        if (Date.now() > deadline) {
          throw new Error(`expected ${count} requests, got ${matching.length}`);
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  });
  return done;
}

// ------------------------------------------------------------------ request builders

let counter = 0;
export function uniqueId(prefix = 'ord'): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${counter}`;
}

export const CARD = {
  card_printed_name: 'TEST HOLDER',
  credit_card_number: '4444444444444448',
  expire_month: '12',
  expire_year: '2099',
};

/** A signed v2 sale/preauth body. `amount` is the major-unit string sent on the wire. */
export function saleFields(
  endpointId: number | string,
  o: {
    clientOrderId?: string;
    amount?: string;
    minor?: string;
    currency?: string;
    cvv?: string;
    email?: string;
    extra?: Record<string, string>;
  } = {},
): Record<string, string> {
  const clientOrderId = o.clientOrderId ?? uniqueId();
  const amount = o.amount ?? '10.42';
  const minor = o.minor ?? amount.replace('.', '').replace(/^0+(?=\d)/, '');
  const email = o.email ?? 'john.smith@example.com';
  return {
    client_orderid: clientOrderId,
    order_desc: 'Test order',
    amount,
    currency: o.currency ?? 'USD',
    address1: '1 Main St',
    city: 'Springfield',
    zip_code: '12345',
    country: 'US',
    phone: '+15550100',
    email,
    ipaddress: '203.0.113.7',
    ...CARD,
    cvv2: o.cvv ?? '123',
    redirect_url: 'https://merchant.example/return',
    ...o.extra,
    control: control(String(endpointId), clientOrderId, minor, email),
  };
}

export function statusFields(clientOrderId: string, orderId?: string): Record<string, string> {
  return {
    login: LOGIN,
    client_orderid: clientOrderId,
    ...(orderId ? { orderid: orderId } : {}),
    control: control(LOGIN, clientOrderId, orderId ?? ''),
  };
}

export async function statusOf(
  base: string,
  endpoint: number,
  clientOrderId: string,
  orderId?: string,
): Promise<any> {
  const r = await post(
    `${base}/paynet/api/v2/status/${endpoint}`,
    statusFields(clientOrderId, orderId),
  );
  if (r.status !== 200) throw new Error(`status failed: ${r.status} ${r.text}`);
  return r.json;
}

/** Polls status until it leaves `processing` (the sandbox finishes work in the background). */
export async function finalStatus(
  base: string,
  endpoint: number,
  clientOrderId: string,
  orderId: string,
): Promise<any> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const s = (await statusOf(base, endpoint, clientOrderId, orderId)) as Record<string, unknown>;
    if (s.status !== 'processing') return s;
    if (Date.now() > deadline) throw new Error(`still processing: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function controlGet(base: string, path: string): Promise<any> {
  const r = await fetch(`${base}/_sandbox/${path}`);
  return { status: r.status, body: await r.json() };
}

export async function controlPost(base: string, path: string, body: unknown = {}): Promise<any> {
  const r = await fetch(`${base}/_sandbox/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

/** The hidden fields and action of an auto-submitting form in a page. */
export function readForm(html: string): { action: string; fields: Record<string, string> } {
  const action = /<form[^>]*action="([^"]*)"/.exec(html)?.[1];
  if (action === undefined) throw new Error(`no form in ${html.slice(0, 200)}`);
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
    fields[unescape(m[1] ?? '')] = unescape(m[2] ?? '');
  }
  return { action: unescape(action), fields };
}

function unescape(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
