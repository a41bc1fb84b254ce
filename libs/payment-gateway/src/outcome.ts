import type { ErrorLikeReply } from './replies';

/**
 * Outcome of every call — an exhaustive discriminated union (STYLE §4: accepted, rejected,
 * not sent, unknown; unknown is never declined).
 */
export type RejectReason =
  /** Refused by this library before sending (missing field, bad amount/currency...). */
  | 'client-validation'
  /** Gateway validation error (`validation-error`, HTTP 400/422 JSON error). */
  | 'validation'
  /** HTTP 401/403 (bad signature or credentials). */
  | 'authentication'
  /** Gateway `type=error` (a business rule refused the request). */
  | 'business-rule'
  /** Any other 4xx. */
  | 'http-status';

export type NotSentReason =
  | 'connection-refused'
  | 'dns'
  | 'connect-timeout'
  | 'network-unreachable'
  | 'tls'
  | 'pool-closed'
  /** HTTP 429: the gateway (or a proxy) refused to process it; retry after a delay. */
  | 'rate-limited';

export type UnknownReason =
  | 'headers-timeout'
  | 'body-timeout'
  | 'server-error'
  | 'connection-lost'
  | 'unparseable-reply'
  | 'reply-too-large'
  | 'aborted'
  | 'unexpected-status'
  | 'transport-error';

interface Common {
  /** Catalogue id of the operation. */
  readonly operation: string;
  readonly durationMs: number;
}

export interface Accepted<R> extends Common {
  readonly outcome: 'accepted';
  readonly httpStatus: number;
  readonly reply: R;
}

/** Final: never retry the same request. */
export interface Rejected extends Common {
  readonly outcome: 'rejected';
  readonly reason: RejectReason;
  readonly httpStatus?: number;
  readonly reply?: ErrorLikeReply;
  readonly errorCode?: string;
  readonly errorMessage?: string;
  /** Field named by a client-side validation error. */
  readonly field?: string;
}

/** Nothing reached the gateway: safe to retry. */
export interface NotSent extends Common {
  readonly outcome: 'not-sent';
  readonly reason: NotSentReason;
  readonly httpStatus?: number;
  /** System/undici error code, e.g. ECONNREFUSED, UND_ERR_CONNECT_TIMEOUT. */
  readonly errorCode?: string;
}

/**
 * The request may have reached the gateway. For a mutating operation this must be resolved by a
 * status query (or a callback) — never retried blindly, never treated as declined.
 */
export interface Unknown extends Common {
  readonly outcome: 'unknown';
  readonly reason: UnknownReason;
  readonly httpStatus?: number;
  readonly errorCode?: string;
  readonly errorMessage?: string;
  /** True for mutating operations: resolve with `v2/status`. */
  readonly resolveByStatusQuery: boolean;
  /** True for read-only operations (status, get-card-info): simply retry. */
  readonly retriable: boolean;
}

export type CallResult<R> = Accepted<R> | Rejected | NotSent | Unknown;
export type Outcome = CallResult<unknown>['outcome'];

// ---- transport error classification ---------------------------------------------------------

const NOT_SENT_CODES: Readonly<Record<string, NotSentReason>> = {
  ECONNREFUSED: 'connection-refused',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  EAI_FAIL: 'dns',
  EAI_NONAME: 'dns',
  UND_ERR_CONNECT_TIMEOUT: 'connect-timeout',
  EHOSTUNREACH: 'network-unreachable',
  ENETUNREACH: 'network-unreachable',
  EADDRNOTAVAIL: 'network-unreachable',
  // Dispatch on a closed client is refused synchronously, before any socket write.
  UND_ERR_CLOSED: 'pool-closed',
  CERT_HAS_EXPIRED: 'tls',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'tls',
  SELF_SIGNED_CERT_IN_CHAIN: 'tls',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'tls',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'tls',
  ERR_TLS_CERT_ALTNAME_INVALID: 'tls',
};

const UNKNOWN_CODES: Readonly<Record<string, UnknownReason>> = {
  UND_ERR_HEADERS_TIMEOUT: 'headers-timeout',
  UND_ERR_BODY_TIMEOUT: 'body-timeout',
  UND_ERR_SOCKET: 'connection-lost',
  ECONNRESET: 'connection-lost',
  EPIPE: 'connection-lost',
  // Could be a TCP retransmission timeout on an established socket: not provably unsent.
  ETIMEDOUT: 'connection-lost',
  // In-flight requests fail with this when the pool is destroyed under them.
  UND_ERR_DESTROYED: 'connection-lost',
  UND_ERR_ABORTED: 'aborted',
  ABORT_ERR: 'aborted',
  UND_ERR_RES_EXCEEDED_MAX_SIZE: 'reply-too-large',
};

function codesOf(err: unknown): string[] {
  const out: string[] = [];
  const visit = (e: unknown, depth: number): void => {
    if (depth > 3 || typeof e !== 'object' || e === null) return;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') out.push(code);
    if (e instanceof AggregateError) e.errors.forEach((inner) => visit(inner, depth + 1));
    visit((e as { cause?: unknown }).cause, depth + 1);
  };
  visit(err, 0);
  return out;
}

export type ErrorClass =
  | { readonly outcome: 'not-sent'; readonly reason: NotSentReason; readonly errorCode?: string }
  | { readonly outcome: 'unknown'; readonly reason: UnknownReason; readonly errorCode?: string };

/**
 * Classifies an error thrown by undici. `not-sent` only when every code found proves that no
 * request byte left (refused, DNS, connect timeout, closed pool, TLS handshake); anything else —
 * including errors we do not recognise — is `unknown`.
 */
export function classifyTransportError(err: unknown): ErrorClass {
  const codes = codesOf(err);
  if ((err as { name?: unknown } | null)?.name === 'AbortError') {
    return { outcome: 'unknown', reason: 'aborted', errorCode: codes[0] ?? 'ABORT_ERR' };
  }
  const first = codes[0];
  if (first === undefined) return { outcome: 'unknown', reason: 'transport-error' };
  const notSent = codes.map((c) => NOT_SENT_CODES[c]);
  if (notSent.every((r) => r !== undefined)) {
    return { outcome: 'not-sent', reason: notSent[0] ?? 'connection-refused', errorCode: first };
  }
  const known = codes.map((c) => UNKNOWN_CODES[c]).find((r) => r !== undefined);
  return { outcome: 'unknown', reason: known ?? 'transport-error', errorCode: first };
}
