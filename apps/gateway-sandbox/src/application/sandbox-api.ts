import { ConcurrencyGauge } from '../domain/concurrency';
import { controlMatches, sha1Control } from '../domain/control';
import { SandboxEngine, Reply, EngineRequest } from '../domain/engine';
import { FaultRegistry } from '../domain/faults';
import { Fields, clientOrderIdOf } from '../domain/fields';
import { FormBody, parseForm } from '../domain/form';
import { Endpoint, MerchantRegistry } from '../domain/merchants';
import { parseMajorAmount, isCurrency, wireMinor } from '../domain/money';
import { NonceStore } from '../domain/nonces';
import {
  normalizeBaseUrl,
  parseAuthorizationHeader,
  signatureBaseString,
  verifyHmacSha1,
  verifyRsaSha256,
} from '../domain/oauth';
import { AuthScheme, OperationDef, RoutedPath, routePath } from '../domain/operations';
import { forcedResult } from '../domain/outcomes';

/** A request as the HTTP layer hands it over: no framework types. */
export interface ApiRequest {
  readonly path: string;
  readonly query: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: Buffer;
}

export type ApiReply =
  | {
      readonly kind: 'send';
      readonly status: number;
      readonly contentType: string;
      readonly body: string;
    }
  | { readonly kind: 'drop' };

export interface ApiSettings {
  /** Origin merchants use to reach the sandbox; by default taken from the Host header. */
  readonly publicUrl: string | undefined;
  /** Without `Accept: application/vnd.pay+json`: the form-encoded reply (`form`) or 406. */
  readonly acceptMode: 'form' | 'reject';
  readonly oauthFailureStatus: 401 | 403;
  /** Allowed distance of oauth_timestamp from wall time. */
  readonly oauthWindowMs: number;
}

const JSON_TYPE = 'application/vnd.pay+json';

type Format = 'json' | 'form';

type AuthOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly kind: 'control' | 'oauth'; readonly reason: string };

/**
 * The gateway's HTTP contract around the engine: routing, Accept, body parsing, endpoint and
 * group resolution, the three authentication schemes, fault injection and reply encoding.
 */
export class SandboxApi {
  private readonly nonces: NonceStore;

  constructor(
    private readonly engine: SandboxEngine,
    private readonly merchants: MerchantRegistry,
    private readonly faults: FaultRegistry,
    private readonly settings: ApiSettings,
    private readonly concurrency: ConcurrencyGauge = new ConcurrencyGauge(),
    private readonly wallClock: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = (ms) =>
      new Promise((resolve) => setTimeout(resolve, ms)),
  ) {
    this.nonces = new NonceStore(settings.oauthWindowMs);
  }

  /** Origin for links in replies and pages. */
  baseUrl(headers: ApiRequest['headers']): string {
    if (this.settings.publicUrl) return this.settings.publicUrl.replace(/\/+$/, '');
    return `http://${headers.host ?? 'localhost'}`;
  }

  async handle(request: ApiRequest): Promise<ApiReply> {
    const accept = request.headers.accept ?? '';
    const wantsJson = accept.toLowerCase().includes(JSON_TYPE);
    if (!wantsJson && this.settings.acceptMode === 'reject') {
      return plain(406, `Accept must be ${JSON_TYPE}`);
    }
    const format: Format = wantsJson ? 'json' : 'form';

    const route = routePath(request.path);
    if (!route) return this.error(format, 404, 'unknown API operation', 404);

    const contentType = (request.headers['content-type'] ?? '').toLowerCase();
    if (!contentType.startsWith('application/x-www-form-urlencoded')) {
      return this.error(format, 415, 'Content-Type must be application/x-www-form-urlencoded', 415);
    }
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(request.body);
    } catch {
      return this.error(format, 400, 'the body is not valid UTF-8', 1);
    }
    const parsed = parseForm(text);
    if (!parsed.ok) return this.error(format, 400, parsed.reason, 1);
    const form = parsed.body;

    const endpoint = this.resolveEndpoint(route, form.fields);
    if (!endpoint) {
      return this.refusal(format, `unknown endpoint${route.group ? ' group' : ''} id ${route.id}`);
    }

    const leave = this.concurrency.enter(String(endpoint.id));
    try {
      return await this.process(request, route, form, endpoint, format);
    } finally {
      leave();
    }
  }

  /** An authenticated-or-refused request on a resolved endpoint: faults, the engine, the reply. */
  private async process(
    request: ApiRequest,
    route: RoutedPath,
    form: FormBody,
    endpoint: Endpoint,
    format: Format,
  ): Promise<ApiReply> {
    const clientOrderId = clientOrderIdOf(form.fields);
    const fault = this.faults.forRequest({
      login: endpoint.merchant.login,
      clientOrderId,
      operation: route.operation.name,
      endpointRef: route.id,
      endpointId: String(endpoint.id),
    });
    if (fault?.latencyMs) await this.sleep(fault.latencyMs);
    if (fault?.failBefore === 'drop') return { kind: 'drop' };
    if (fault?.failBefore !== undefined) {
      return fault.failBefore >= 500
        ? this.error(format, fault.failBefore, 'internal error (injected before processing)', 500)
        : this.error(format, fault.failBefore, 'refused (injected before processing)', 1);
    }

    const auth = this.authenticate(route.operation, route, endpoint, form, request);
    if (!auth.ok) {
      if (auth.kind === 'oauth')
        return plain(this.settings.oauthFailureStatus, `invalid signature: ${auth.reason}`);
      return this.refusal(format, auth.reason);
    }

    const engineRequest: EngineRequest = {
      op: route.operation.name,
      endpoint,
      endpointRef: route.id,
      fields: form.fields,
      baseUrl: this.baseUrl(request.headers),
      forced: fault?.outcome === undefined ? undefined : forcedResult(fault.outcome),
      ...(fault?.processedAmountMinor === undefined
        ? {}
        : { processedAmountMinor: fault.processedAmountMinor }),
      ...(fault?.processingDelayMs === undefined
        ? {}
        : { processingDelayMs: fault.processingDelayMs }),
      oauthLogin: route.operation.auth.kind === 'oauth' ? endpoint.merchant.login : undefined,
    };
    const result = this.engine.execute(engineRequest);
    if (fault?.latencyAfterMs) await this.sleep(fault.latencyAfterMs);

    if (fault?.failAfter === 'drop') return { kind: 'drop' };
    if (fault?.failAfter !== undefined) {
      return this.error(format, fault.failAfter, 'internal error (injected after processing)', 500);
    }
    if (result.kind === 'refused') return this.refusal(format, result.body);
    let body = result.body;
    if (fault?.replyAmount !== undefined && 'amount' in body) {
      body = { ...body, amount: fault.replyAmount };
    }
    if (fault?.replyTransactionType !== undefined && 'transaction-type' in body) {
      body = { ...body, 'transaction-type': fault.replyTransactionType };
    }
    return encode(format, 200, body);
  }

  private resolveEndpoint(route: RoutedPath, fields: Fields): Endpoint | undefined {
    if (!/^\d{1,18}$/.test(route.id)) return undefined;
    const id = Number(route.id);
    const inGroup = (members: readonly Endpoint[]): Endpoint | undefined => {
      const currency = fields.get('currency');
      return members.find((e) => e.currency === currency) ?? members[0];
    };
    if (route.group) {
      const members = this.merchants.group(id);
      return members ? inGroup(members) : undefined;
    }
    const endpoint = this.merchants.endpoint(id);
    if (endpoint) return endpoint;
    // The 3DS uploads take a group id without the `group/` segment (facts §1).
    const members = route.operation.path.startsWith('3ds/') ? this.merchants.group(id) : undefined;
    return members ? inGroup(members) : undefined;
  }

  private authenticate(
    op: OperationDef,
    route: RoutedPath,
    endpoint: Endpoint,
    form: FormBody,
    request: ApiRequest,
  ): AuthOutcome {
    const scheme: AuthScheme = op.auth;
    switch (scheme.kind) {
      case 'control':
        return this.checkControl(scheme.parts, route, endpoint, form.fields);
      case 'oauth':
        return this.checkOAuth(scheme.method, endpoint, form, request);
    }
  }

  private checkControl(
    parts: readonly string[],
    route: RoutedPath,
    endpoint: Endpoint,
    fields: Fields,
  ): AuthOutcome {
    const values: string[] = [];
    for (const part of parts) {
      if (part === '@endpoint') {
        values.push(route.id);
      } else if (part === '@amount') {
        const amount = fields.get('amount') ?? '';
        if (amount === '') {
          values.push('');
          continue;
        }
        const currency = fields.get('currency') ?? endpoint.currency;
        if (!isCurrency(currency))
          return {
            ok: false,
            kind: 'control',
            reason: 'currency must be an ISO 4217 code such as USD',
          };
        // Minor units as the endpoint counts them (its amountExponent, default ISO 4217).
        const parsed = parseMajorAmount(amount, currency, endpoint.amountExponent);
        if (!parsed.ok) return { ok: false, kind: 'control', reason: parsed.reason };
        values.push(wireMinor(parsed.minor, currency, endpoint.amountExponent));
      } else if (part === 'client-order-id') {
        values.push(clientOrderIdOf(fields) ?? '');
      } else {
        values.push(fields.get(part) ?? '');
      }
    }
    const expected = sha1Control(values, endpoint.merchant.controlKey);
    const received = fields.get('control');
    if (received === undefined || received === '') {
      return { ok: false, kind: 'control', reason: 'control is required' };
    }
    return controlMatches(received, expected)
      ? { ok: true }
      : { ok: false, kind: 'control', reason: 'control checksum does not match' };
  }

  private checkOAuth(
    method: 'HMAC-SHA1' | 'RSA-SHA256',
    endpoint: Endpoint,
    form: FormBody,
    request: ApiRequest,
  ): AuthOutcome {
    const fail = (reason: string): AuthOutcome => ({ ok: false, kind: 'oauth', reason });
    const header = request.headers.authorization;
    const bodyOauth = form.pairs.filter(([n]) => n.startsWith('oauth_'));
    let protocol: Map<string, string>;
    if (header !== undefined && header !== '') {
      const parsed = parseAuthorizationHeader(header);
      if (!parsed.ok) return fail(parsed.reason);
      protocol = parsed.value;
      protocol.delete('realm');
      for (const [name, value] of bodyOauth) {
        const inHeader = protocol.get(name);
        if (inHeader !== undefined && inHeader !== value) {
          return fail(`${name} in the body differs from the Authorization header`);
        }
      }
    } else if (bodyOauth.some(([n]) => n === 'oauth_signature')) {
      protocol = new Map(bodyOauth);
    } else {
      return fail('no OAuth Authorization header');
    }
    for (const name of [
      'oauth_consumer_key',
      'oauth_signature_method',
      'oauth_signature',
      'oauth_timestamp',
      'oauth_nonce',
    ]) {
      if (!protocol.get(name)) return fail(`${name} is missing`);
    }
    const version = protocol.get('oauth_version');
    if (version !== undefined && version !== '1.0') return fail('oauth_version must be 1.0');
    if (protocol.get('oauth_consumer_key') !== endpoint.merchant.login) {
      return fail('oauth_consumer_key is not the login of this endpoint');
    }
    if (protocol.get('oauth_signature_method') !== method) {
      return fail(`this operation needs oauth_signature_method ${method}`);
    }
    const timestamp = protocol.get('oauth_timestamp') ?? '';
    if (!/^\d{1,12}$/.test(timestamp)) return fail('oauth_timestamp is not a number of seconds');
    const skew = Math.abs(this.wallClock() - Number(timestamp) * 1000);
    if (skew > this.settings.oauthWindowMs)
      return fail('oauth_timestamp is more than 5 minutes off');
    const nonce = protocol.get('oauth_nonce') ?? '';
    if (nonce.length > 128) return fail('oauth_nonce is too long');
    const publicKey = endpoint.merchant.publicKey;
    if (method === 'RSA-SHA256' && !publicKey)
      return fail('no RSA public key is registered for this merchant');

    const signature = protocol.get('oauth_signature') ?? '';
    const signed: Array<readonly [string, string]> = [...protocol].filter(
      ([n]) => n !== 'oauth_signature',
    );
    const queryPairs = parseQuery(request.query);
    const bodyWithout = form.pairs.filter(([n]) => n !== 'oauth_signature');
    const bodyNoOauth = form.pairs.filter(([n]) => !n.startsWith('oauth_'));
    // oauth_* repeated in the body (facts §2.2 conflict): signed once, or signed as sent.
    const paramSets = [[...bodyNoOauth, ...signed, ...queryPairs]];
    if (header && bodyOauth.length > 0) paramSets.push([...bodyWithout, ...signed, ...queryPairs]);
    const urls = this.candidateUrls(request);

    const verified = urls.some((url) =>
      paramSets.some((pairs) => {
        const base = signatureBaseString('POST', url, pairs);
        return method === 'HMAC-SHA1'
          ? verifyHmacSha1(base, endpoint.merchant.controlKey, signature)
          : publicKey !== undefined && verifyRsaSha256(base, publicKey, signature);
      }),
    );
    if (!verified) return fail('signature does not verify');
    if (!this.nonces.use(endpoint.merchant.login, nonce, this.wallClock())) {
      return fail('oauth_nonce has already been used');
    }
    return { ok: true };
  }

  private candidateUrls(request: ApiRequest): string[] {
    const urls: string[] = [];
    if (this.settings.publicUrl) {
      const u = new URL(this.settings.publicUrl);
      urls.push(normalizeBaseUrl(u.protocol.replace(':', ''), u.host, request.path));
    }
    const host = request.headers.host;
    if (host) {
      const proto = request.headers['x-forwarded-proto'] === 'https' ? 'https' : 'http';
      urls.push(normalizeBaseUrl(proto, host, request.path));
    }
    return urls;
  }

  private refusal(format: Format, messageOrBody: string | Reply): ApiReply {
    const body: Reply =
      typeof messageOrBody === 'string'
        ? { type: 'validation-error', 'error-message': messageOrBody, 'error-code': 1 }
        : messageOrBody;
    // JSON mode answers a rejected request with 400; the form-encoded API answers 200 (facts §1).
    return encode(format, format === 'json' ? 400 : 200, body);
  }

  private error(format: Format, status: number, message: string, code: number): ApiReply {
    const type = status >= 500 ? 'error' : 'validation-error';
    return encode(format, status, { type, 'error-message': message, 'error-code': code });
  }
}

function parseQuery(query: string): Array<readonly [string, string]> {
  if (!query) return [];
  const parsed = parseForm(query);
  return parsed.ok ? [...parsed.body.pairs] : [];
}

export function plain(status: number, text: string): ApiReply {
  return { kind: 'send', status, contentType: 'text/plain; charset=utf-8', body: text };
}

/** JSON (`application/vnd.pay+json`) or the gateway's form reply: `k=v` + 0x0A, joined by `&`. */
export function encode(format: Format, status: number, body: Reply): ApiReply {
  if (format === 'json') {
    return {
      kind: 'send',
      status,
      contentType: `${JSON_TYPE}; charset=utf-8`,
      body: JSON.stringify(body),
    };
  }
  const text = Object.entries(body)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}\n`)
    .join('&');
  return { kind: 'send', status, contentType: 'text/html;charset=utf-8', body: text };
}
