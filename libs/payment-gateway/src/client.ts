import type { KeyObject } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { AuthScheme, OperationId, ReplyKindOf, RequestOf } from './catalogue';
import { OPERATIONS } from './catalogue';
import { GatewayClientError } from './errors';
import { checkCurrencyExponents, type CurrencyExponents } from './money';
import { classifyExchange, type CallResult } from './outcome';
import { redactReply, redactRequest } from './redaction';
import type { ReplyByKind } from './replies';
import {
  checkEndpoint,
  operationRoute,
  parseBaseUrl,
  prepareRequest,
  prepareWireRequest,
  resolveAuth,
  type EndpointRef,
  type PreparedRequest,
  type Route,
  type SigningContext,
  type ReplyFormat,
  type WireRequest,
} from './request';
import { loadRsaPrivateKey } from './signers/keys';
import { randomNonce } from './signers/oauth';
import { GatewayTransport, type TransportOptions } from './transport';

export type ReplyOf<Id extends OperationId> = ReplyByKind[ReplyKindOf<Id>];

/**
 * One operation with its typed fields. `OperationCall` (no argument) is the union over the whole
 * catalogue, so `{ id, fields }` pairs of different operations can travel in one variable (an
 * operation table) and still be checked per operation.
 */
export type OperationCall<Id extends OperationId = OperationId> = {
  [K in Id]: { readonly id: K; readonly fields: RequestOf<K> };
}[Id];

/** What `onRequest` receives: redacted fields only (no PAN, CVV, control, Authorization). */
export interface RedactedRequestEvent {
  readonly operation: OperationId;
  readonly auth: AuthScheme;
  readonly url: string;
  readonly fields: Readonly<Record<string, string>>;
}

/** What `onResponse` receives: outcome and a redacted reply. */
export interface RedactedResponseEvent {
  readonly operation: OperationId;
  readonly outcome: CallResult<unknown>['outcome'];
  readonly reason?: string;
  readonly httpStatus?: number;
  readonly durationMs: number;
  readonly reply?: unknown;
}

export interface PaymentGatewayClientConfig {
  /** Gateway API root including any prefix, e.g. `https://sandbox.example.com/paynet`. */
  readonly baseUrl: string;
  /** Endpoint id or endpoint-group id. Per-call override via `CallOptions.endpoint`. */
  readonly endpoint: EndpointRef;
  /** Merchant login (control formulas, `login` field, `oauth_consumer_key`). */
  readonly login: string;
  /** Merchant control key (SHA-1 control and HMAC-SHA1 secret). Never sent, never logged. */
  readonly controlKey: string;
  /** RSA private key for v4 operations (PEM PKCS#8/PKCS#1 or a KeyObject), ≥ 2048 bits. */
  readonly rsaPrivateKey?: string | Buffer | KeyObject;
  readonly rsaPrivateKeyPassphrase?: string;
  /** Per-operation auth scheme where the spec is silent (payment-form, payout-form). */
  readonly auth?: Readonly<Partial<Record<OperationId, AuthScheme>>>;
  /**
   * This endpoint's wire exponent per currency where it is not the ISO 4217 one (`'*'`: every
   * other currency), e.g. `{ JPY: 2 }` for a gateway that multiplies every amount by 100.
   */
  readonly currencyExponents?: CurrencyExponents;
  /** `json` (default): ask for JSON replies; `form`: take the gateway's form-encoded default. */
  readonly replyFormat?: ReplyFormat;
  readonly transport?: TransportOptions;
  /** Epoch milliseconds (OAuth timestamps); default Date.now. */
  readonly clock?: () => number;
  /** OAuth nonce source; default 16 random bytes as hex. */
  readonly nonce?: () => string;
  readonly onRequest?: (event: RedactedRequestEvent) => void;
  readonly onResponse?: (event: RedactedResponseEvent) => void;
}

export interface CallOptions {
  readonly endpoint?: EndpointRef;
  readonly signal?: AbortSignal;
}

/**
 * Signed client for every operation of the card-payment API. `call` never throws for gateway or
 * network problems: it returns a classified {@link CallResult}. It throws only for configuration
 * errors at construction.
 */
export class PaymentGatewayClient {
  private readonly ctx: SigningContext;
  private readonly transport: GatewayTransport;
  /** Each operation's route for the configured endpoint, built on its first call. */
  private readonly routes = new Map<OperationId, Route>();

  constructor(private readonly config: PaymentGatewayClientConfig) {
    if (config.login === '' || config.controlKey === '') {
      throw new GatewayClientError('invalid-config', 'login and controlKey are required');
    }
    checkEndpoint(config.endpoint);
    const rsaKey =
      config.rsaPrivateKey === undefined
        ? undefined
        : typeof config.rsaPrivateKey === 'string' || Buffer.isBuffer(config.rsaPrivateKey)
          ? loadRsaPrivateKey(config.rsaPrivateKey, config.rsaPrivateKeyPassphrase)
          : checkKeyObject(config.rsaPrivateKey);
    const auth = config.auth ?? {};
    for (const id of Object.keys(auth) as OperationId[]) {
      const scheme = auth[id];
      if (!(id in OPERATIONS) || scheme === undefined) {
        throw new GatewayClientError('invalid-config', `auth override for unknown operation ${id}`);
      }
      resolveAuth(OPERATIONS[id], auth);
    }
    checkCurrencyExponents(config.currencyExponents ?? {});
    this.ctx = {
      baseUrl: parseBaseUrl(config.baseUrl),
      endpoint: config.endpoint,
      login: config.login,
      controlKey: config.controlKey,
      ...(rsaKey ? { rsaKey } : {}),
      auth,
      currencyExponents: config.currencyExponents ?? {},
      replyFormat: config.replyFormat ?? 'json',
      clock: config.clock ?? Date.now,
      nonce: config.nonce ?? randomNonce,
    };
    this.transport = new GatewayTransport(config.transport);
  }

  /** Builds the signed request without sending it (for tests, conformance and debugging). */
  prepare<Id extends OperationId>(
    id: Id,
    fields: RequestOf<Id>,
    options: CallOptions = {},
  ): PreparedRequest {
    return prepareRequest(this.ctx, id, fields, options.endpoint);
  }

  /**
   * Performs one operation: `call(id, fields)`, or `call({ id, fields })` with any
   * {@link OperationCall} (a caller holding a union of operations needs no branch per
   * operation: the reply type follows the ids the call can have).
   */
  call<Id extends OperationId>(
    id: Id,
    fields: RequestOf<Id>,
    options?: CallOptions,
  ): Promise<CallResult<ReplyOf<Id>>>;
  call<C extends OperationCall>(
    call: C,
    options?: CallOptions,
  ): Promise<CallResult<ReplyOf<C['id']>>>;
  call(
    idOrCall: OperationId | OperationCall,
    fieldsOrOptions?: RequestOf<OperationId> | CallOptions,
    maybeOptions?: CallOptions,
  ): Promise<CallResult<ReplyOf<OperationId>>> {
    if (typeof idOrCall === 'string') {
      // The first signature guarantees `fields` belongs to `id`.
      return this.perform(idOrCall, fieldsOrOptions as RequestOf<OperationId>, maybeOptions);
    }
    return this.perform(idOrCall.id, idOrCall.fields, fieldsOrOptions as CallOptions | undefined);
  }

  private async perform<Id extends OperationId>(
    id: Id,
    fields: RequestOf<Id>,
    options?: CallOptions,
  ): Promise<CallResult<ReplyOf<Id>>> {
    const started = performance.now();
    let prepared: WireRequest;
    try {
      prepared = this.prepareWire(id, fields, options?.endpoint);
    } catch (err) {
      if (err instanceof GatewayClientError) {
        return this.report(id, {
          outcome: 'rejected',
          operation: id,
          reason: 'client-validation',
          errorMessage: err.message,
          ...(err.details.field ? { field: err.details.field } : {}),
          durationMs: elapsedMs(started),
        });
      }
      throw err;
    }
    const onRequest = this.config.onRequest;
    if (onRequest) {
      this.safeHook(() =>
        onRequest({
          operation: id,
          auth: prepared.auth,
          url: prepared.route.href,
          fields: redactRequest(prepared.fields),
        }),
      );
    }
    const { route } = prepared;
    const res = await this.transport.send(
      route.origin,
      route.path,
      prepared.headers,
      prepared.body,
      options?.signal,
    );
    // Classification is the table in outcome.ts (transport error codes, then REPLY_RULES).
    const classified = classifyExchange<ReplyOf<Id>>(res, OPERATIONS[id]);
    return this.report(id, { ...classified, operation: id, durationMs: elapsedMs(started) });
  }

  /** The signed request; the route comes from the cache when the endpoint is the configured one. */
  private prepareWire<Id extends OperationId>(
    id: Id,
    fields: RequestOf<Id>,
    endpoint: EndpointRef | undefined,
  ): WireRequest {
    if (endpoint !== undefined && endpoint !== this.ctx.endpoint) {
      return prepareWireRequest(this.ctx, id, fields, endpoint);
    }
    let route = this.routes.get(id);
    if (route === undefined) {
      const op = OPERATIONS[id];
      // An id outside the catalogue: prepareWireRequest refuses it (invalid-request).
      if (!op) return prepareWireRequest(this.ctx, id, fields);
      route = operationRoute(op, this.ctx.baseUrl, this.ctx.endpoint);
      this.routes.set(id, route);
    }
    return prepareWireRequest(this.ctx, id, fields, this.ctx.endpoint, route);
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  private report<R>(id: OperationId, result: CallResult<R>): CallResult<R> {
    const hook = this.config.onResponse;
    if (hook) {
      const reply =
        result.outcome === 'accepted'
          ? redactReply(result.reply as { raw: Record<string, string> })
          : result.outcome === 'rejected' && result.reply
            ? redactReply(result.reply)
            : undefined;
      this.safeHook(() =>
        hook({
          operation: id,
          outcome: result.outcome,
          ...(result.outcome !== 'accepted' ? { reason: result.reason } : {}),
          ...(result.httpStatus !== undefined ? { httpStatus: result.httpStatus } : {}),
          durationMs: result.durationMs,
          ...(reply !== undefined ? { reply } : {}),
        }),
      );
    }
    return result;
  }

  /** Logging hooks must never change the outcome of a payment call. */
  private safeHook(fn: () => void): void {
    try {
      fn();
    } catch {
      // deliberately ignored
    }
  }
}

/** Milliseconds since `started` (a `performance.now()` reading), to the microsecond. */
function elapsedMs(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}

function checkKeyObject(key: KeyObject): KeyObject {
  if (key.type !== 'private' || key.asymmetricKeyType !== 'rsa') {
    throw new GatewayClientError('invalid-key', 'rsaPrivateKey must be an RSA private key');
  }
  if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) {
    throw new GatewayClientError('invalid-key', 'RSA private key must have at least 2048 bits');
  }
  return key;
}

export function createPaymentGatewayClient(
  config: PaymentGatewayClientConfig,
): PaymentGatewayClient {
  return new PaymentGatewayClient(config);
}
