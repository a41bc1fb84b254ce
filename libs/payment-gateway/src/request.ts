import type { KeyObject } from 'node:crypto';
import {
  OPERATIONS,
  type AuthScheme,
  type FieldSpec,
  type OperationDef,
  type OperationId,
  type RequestOf,
} from './catalogue';
import { formEncode } from './encoding';
import { GatewayClientError } from './errors';
import { assertMinorUnits, currencyExponent, toWireAmount, type CurrencyExponents } from './money';
import { controlChecksum } from './signers/control';
import {
  hmacSha1Signer,
  rsaSha256Signer,
  signOAuthRequest,
  type OAuthSigner,
} from './signers/oauth';

/** Merchant endpoint (`/<id>`) or endpoint group (`/group/<id>`), from configuration. */
export type EndpointRef = { readonly endpointId: string } | { readonly endpointGroupId: string };

export interface SigningContext {
  readonly baseUrl: URL;
  readonly endpoint: EndpointRef;
  readonly login: string;
  readonly controlKey: string;
  readonly rsaKey?: KeyObject;
  readonly auth: Readonly<Partial<Record<OperationId, AuthScheme>>>;
  /** The endpoint's wire exponents where they differ from ISO 4217 (default: none). */
  readonly currencyExponents?: CurrencyExponents;
  /** How replies are asked for: `json` (the Accept header, the default) or `form`. */
  readonly replyFormat?: ReplyFormat;
  /** Epoch milliseconds. */
  readonly clock: () => number;
  readonly nonce: () => string;
}

export interface PreparedRequest {
  readonly operation: OperationDef;
  readonly auth: AuthScheme;
  /** Full URL (base URL prefix + `/api/<family>/<command>/<endpoint>`). */
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  /** Body fields as sent (strings), including `control` when that scheme is used. */
  readonly fields: Readonly<Record<string, string>>;
  /** `application/x-www-form-urlencoded`, RFC 3986 (`%20`). */
  readonly body: string;
  /** Values concatenated for `control` (before the key), or undefined for OAuth. */
  readonly controlInputs?: readonly string[];
  /** OAuth signature base string, or undefined for `control`. */
  readonly baseString?: string;
}

export const ACCEPT = 'application/vnd.pay+json';

/**
 * The reply format a client asks for. `json`: `Accept: application/vnd.pay+json`, "the same data
 * as JSON" (facts §1). `form`: no special Accept, the gateway's default form-encoded reply (HTTP
 * 200 with `type=validation-error|error` for refusals) — for an installation or an endpoint that
 * answers only that way. Both are decoded by the same reply parser.
 */
export type ReplyFormat = 'json' | 'form';

/** The headers of every request (OAuth adds `authorization` to a copy). Never mutated. */
const FORM_HEADERS: Readonly<Record<ReplyFormat, Readonly<Record<string, string>>>> = Object.freeze(
  {
    json: Object.freeze({ accept: ACCEPT, 'content-type': 'application/x-www-form-urlencoded' }),
    form: Object.freeze({ 'content-type': 'application/x-www-form-urlencoded' }),
  },
);
const EXTRA_NAME = /^[A-Za-z0-9_.\-[\]]+$/;
const RESERVED = new Set(['control', 'login', '__proto__', 'constructor', 'prototype']);

/** Parses and checks a base URL such as `https://gate.example/paynet`. */
export function parseBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new GatewayClientError('invalid-config', 'baseUrl is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new GatewayClientError('invalid-config', 'baseUrl must be http(s)');
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new GatewayClientError(
      'invalid-config',
      'baseUrl must not carry query, hash or userinfo',
    );
  }
  return url;
}

export function checkEndpoint(endpoint: EndpointRef): void {
  const id = 'endpointId' in endpoint ? endpoint.endpointId : endpoint.endpointGroupId;
  if (!/^[0-9]{1,19}$/.test(id)) {
    throw new GatewayClientError('invalid-config', 'endpoint id must be an integer (int64)');
  }
}

function endpointValue(endpoint: EndpointRef): string {
  return 'endpointId' in endpoint ? endpoint.endpointId : endpoint.endpointGroupId;
}

export function operationPath(op: OperationDef, base: URL, endpoint: EndpointRef): string {
  const prefix = base.pathname.replace(/\/+$/, '');
  const seg =
    'endpointId' in endpoint
      ? endpoint.endpointId
      : op.groupPath === 'segment'
        ? `group/${endpoint.endpointGroupId}`
        : endpoint.endpointGroupId;
  return `${prefix}/api/${op.family}/${op.command}/${seg}`;
}

/**
 * Where an operation's request goes, from one parse of its URL: the origin (the transport's pool),
 * the path sent, and the URL as text (what OAuth signs). The client keeps one per operation for
 * its configured endpoint, so a call builds no URL.
 */
export interface Route {
  readonly origin: string;
  readonly path: string;
  readonly href: string;
}

export function operationRoute(op: OperationDef, base: URL, endpoint: EndpointRef): Route {
  const url = new URL(base.origin + operationPath(op, base, endpoint));
  return { origin: url.origin, path: url.pathname, href: url.href };
}

function invalid(field: string, message: string): GatewayClientError {
  return new GatewayClientError('invalid-request', message, { field });
}

/**
 * Validates the caller's fields against the catalogue and renders the wire fields (strings):
 * login first (when the operation sends it), then catalogue order, then `extra`. Amounts are
 * ISO minor-unit integers rendered by the endpoint's wire exponent for the currency (ISO unless
 * `exponents` overrides it); the control takes the gateway's minor units; booleans as `true`/`false`. Values are
 * trimmed (the gateway strips leading/trailing whitespace, and the control must match what it
 * sees); empty optional values are omitted from the body.
 */
export function renderFields(
  op: OperationDef,
  input: Readonly<Record<string, unknown>>,
  login: string,
  exponents: CurrencyExponents = {},
): { wire: Record<string, string>; minorAmounts: Record<string, string> } {
  const wire: Record<string, string> = {};
  const minorAmounts: Record<string, string> = {};
  if (op.sendsLogin) wire.login = login;
  for (const key of Object.keys(input)) {
    if (key !== 'extra' && !(key in op.fields)) {
      throw invalid(key, `${key} is not a field of ${op.id}`);
    }
  }
  const currency = input.currency;
  for (const [name, spec] of fieldEntries(op)) {
    const value = input[name];
    if (value === undefined || value === null || value === '') {
      if (spec.required) throw invalid(name, `${name} is required for ${op.id}`);
      continue;
    }
    switch (spec.kind) {
      case 'amount': {
        assertMinorUnits(value, name);
        if (typeof currency !== 'string' || currency === '') {
          throw invalid('currency', `currency is required when ${name} is sent`);
        }
        const amount = toWireAmount(value, currency, exponents, name);
        wire[name] = amount.decimal;
        minorAmounts[name] = amount.minor;
        break;
      }
      case 'currency': {
        if (typeof value !== 'string') throw invalid(name, `${name} must be a string`);
        currencyExponent(value);
        wire[name] = value;
        break;
      }
      case 'boolean': {
        if (typeof value !== 'boolean') throw invalid(name, `${name} must be a boolean`);
        wire[name] = value ? 'true' : 'false';
        break;
      }
      case 'string': {
        if (typeof value !== 'string') throw invalid(name, `${name} must be a string`);
        const v = value.trim();
        if (v === '') {
          if (spec.required) throw invalid(name, `${name} is required for ${op.id}`);
          continue;
        }
        wire[name] = v;
        break;
      }
    }
  }
  for (const [a, b] of op.together ?? []) {
    if (a in wire !== b in wire) throw invalid(b, `${a} and ${b} must be sent together`);
  }
  const extra = input.extra;
  if (extra !== undefined) {
    if (typeof extra !== 'object' || extra === null)
      throw invalid('extra', 'extra must be a record');
    for (const [k, v] of Object.entries(extra as Record<string, unknown>)) {
      if (!EXTRA_NAME.test(k) || RESERVED.has(k) || k.startsWith('oauth_') || k in op.fields) {
        throw invalid(k, `extra field ${k} is not allowed`);
      }
      if (typeof v !== 'string') throw invalid(k, `extra field ${k} must be a string`);
      const t = v.trim();
      if (t !== '') wire[k] = t;
    }
  }
  return { wire, minorAmounts };
}

const FIELD_ENTRIES = new WeakMap<OperationDef['fields'], ReadonlyArray<[string, FieldSpec]>>();

/** `Object.entries(op.fields)`, once per field map (the catalogue's maps are never changed). */
function fieldEntries(op: OperationDef): ReadonlyArray<[string, FieldSpec]> {
  let entries = FIELD_ENTRIES.get(op.fields);
  if (entries === undefined) {
    entries = Object.entries(op.fields);
    FIELD_ENTRIES.set(op.fields, entries);
  }
  return entries;
}

export function resolveAuth(
  op: OperationDef,
  overrides: Readonly<Partial<Record<string, AuthScheme>>>,
): AuthScheme {
  const scheme = overrides[op.id] ?? op.auth;
  if (!op.allowedAuth.includes(scheme)) {
    throw new GatewayClientError('invalid-config', `${op.id} does not support auth ${scheme}`);
  }
  return scheme;
}

/** A signed request as the client sends it: {@link PreparedRequest} with its route, no URL. */
export interface WireRequest extends Omit<PreparedRequest, 'url'> {
  readonly route: Route;
}

/** Builds the signed request for one operation without sending it (pure apart from clock/nonce). */
export function prepareRequest<Id extends OperationId>(
  ctx: SigningContext,
  id: Id,
  input: RequestOf<Id>,
  endpoint: EndpointRef = ctx.endpoint,
): PreparedRequest {
  const w = prepareWireRequest(ctx, id, input, endpoint);
  return {
    operation: w.operation,
    auth: w.auth,
    url: new URL(w.route.href),
    headers: { ...w.headers },
    fields: w.fields,
    body: w.body,
    ...(w.controlInputs !== undefined ? { controlInputs: w.controlInputs } : {}),
    ...(w.baseString !== undefined ? { baseString: w.baseString } : {}),
  };
}

/**
 * {@link prepareRequest} without the URL object: `route` is the operation's route for `endpoint`
 * when the caller keeps one (the client does, for its configured endpoint).
 */
export function prepareWireRequest<Id extends OperationId>(
  ctx: SigningContext,
  id: Id,
  input: RequestOf<Id>,
  endpoint: EndpointRef = ctx.endpoint,
  route?: Route,
): WireRequest {
  const op: OperationDef = OPERATIONS[id];
  if (!op) throw new GatewayClientError('invalid-request', `unknown operation ${String(id)}`);
  checkEndpoint(endpoint);
  const auth = resolveAuth(op, ctx.auth);
  const { wire, minorAmounts } = renderFields(op, input, ctx.login, ctx.currencyExponents);
  const to = route ?? operationRoute(op, ctx.baseUrl, endpoint);
  switch (auth) {
    case 'control': {
      const formula = op.control;
      if (!formula)
        throw new GatewayClientError('invalid-config', `${op.id} has no control formula`);
      const inputs = formula.map((name) =>
        name === 'endpointId'
          ? endpointValue(endpoint)
          : name === 'login'
            ? ctx.login
            : (minorAmounts[name] ?? wire[name] ?? ''),
      );
      // `wire` is this call's own object: the control goes last, as the body sends it.
      wire.control = controlChecksum(inputs, ctx.controlKey);
      return {
        operation: op,
        auth,
        route: to,
        headers: FORM_HEADERS[ctx.replyFormat ?? 'json'],
        fields: wire,
        body: formEncode(wire),
        controlInputs: inputs,
      };
    }
    case 'oauth-hmac-sha1':
    case 'oauth-rsa-sha256': {
      let signer: OAuthSigner;
      if (auth === 'oauth-hmac-sha1') {
        signer = hmacSha1Signer(ctx.controlKey);
      } else {
        if (!ctx.rsaKey) {
          throw new GatewayClientError('invalid-config', `${op.id} needs an RSA private key`);
        }
        signer = rsaSha256Signer(ctx.rsaKey);
      }
      const signed = signOAuthRequest({
        url: to.href,
        params: wire,
        consumerKey: ctx.login,
        signer,
        timestampSeconds: Math.floor(ctx.clock() / 1000),
        nonce: ctx.nonce(),
      });
      return {
        operation: op,
        auth,
        route: to,
        headers: {
          ...FORM_HEADERS[ctx.replyFormat ?? 'json'],
          authorization: signed.authorization,
        },
        fields: wire,
        body: formEncode(wire),
        baseString: signed.baseString,
      };
    }
  }
}
