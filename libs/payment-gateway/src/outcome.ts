import type { OperationDef } from './catalogue';
import { decodeReplyBody, parseReply, type ErrorLikeReply } from './replies';
import type { TransportResult } from './transport';

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

// ---- reply classification: one table ----------------------------------------------------------

/** What the classification of an HTTP reply looks at. */
export interface ReplyFacts {
  readonly httpStatus: number;
  /** The body parsed, as the operation's reply kind or as an error reply. */
  readonly parsed: boolean;
  /** The gateway's error reply type (`type=…`, or inferred for a 4xx/5xx without `type`). */
  readonly errorType?: ErrorLikeReply['type'];
}

/**
 * What a row decides. `errorMessage`: an `unknown` row that keeps the gateway's error message
 * (a 5xx may say why). Every `rejected` result carries the error reply, code and message.
 */
export type ReplyVerdict =
  | { readonly outcome: 'accepted' }
  | { readonly outcome: 'rejected'; readonly reason: RejectReason }
  | { readonly outcome: 'not-sent'; readonly reason: NotSentReason }
  | { readonly outcome: 'unknown'; readonly reason: UnknownReason; readonly errorMessage?: true };

export interface ReplyRule {
  /** The row in words, as the README's outcome table states it. */
  readonly when: string;
  readonly matches: (facts: ReplyFacts) => boolean;
  readonly verdict: ReplyVerdict;
}

const is2xx = (status: number): boolean => status >= 200 && status < 300;

/**
 * How a reply that arrived is classified: the first matching row wins. The order is part of the
 * table (401 before "other 4xx", the error-reply rows before "400/422"); the last row takes
 * every 2xx that parsed as the expected reply.
 */
export const REPLY_RULES: readonly ReplyRule[] = [
  {
    when: '5xx',
    matches: (f) => f.httpStatus >= 500,
    verdict: { outcome: 'unknown', reason: 'server-error', errorMessage: true },
  },
  {
    when: '401 or 403, any body',
    matches: (f) => f.httpStatus === 401 || f.httpStatus === 403,
    verdict: { outcome: 'rejected', reason: 'authentication' },
  },
  {
    when: '429',
    matches: (f) => f.httpStatus === 429,
    verdict: { outcome: 'not-sent', reason: 'rate-limited' },
  },
  {
    when: '408',
    matches: (f) => f.httpStatus === 408,
    verdict: { outcome: 'unknown', reason: 'unexpected-status' },
  },
  {
    when: '1xx or 3xx',
    matches: (f) => f.httpStatus < 200 || (f.httpStatus >= 300 && f.httpStatus < 400),
    verdict: { outcome: 'unknown', reason: 'unexpected-status' },
  },
  {
    when: '2xx whose body does not parse',
    matches: (f) => is2xx(f.httpStatus) && !f.parsed,
    verdict: { outcome: 'unknown', reason: 'unparseable-reply' },
  },
  {
    when: '2xx or 4xx with a validation-error reply',
    matches: (f) => f.errorType === 'validation-error',
    verdict: { outcome: 'rejected', reason: 'validation' },
  },
  {
    when: '2xx or 4xx with an error reply',
    matches: (f) => f.errorType === 'error',
    verdict: { outcome: 'rejected', reason: 'business-rule' },
  },
  {
    when: '400 or 422 without an error reply',
    matches: (f) => f.httpStatus === 400 || f.httpStatus === 422,
    verdict: { outcome: 'rejected', reason: 'validation' },
  },
  {
    when: 'other 4xx',
    matches: (f) => f.httpStatus >= 400,
    verdict: { outcome: 'rejected', reason: 'http-status' },
  },
  {
    when: '2xx with the expected reply',
    matches: () => true,
    verdict: { outcome: 'accepted' },
  },
];

/** The row deciding `facts` (the table ends with a catch-all, so there always is one). */
export function replyVerdict(facts: ReplyFacts): ReplyVerdict {
  const rule = REPLY_RULES.find((r) => r.matches(facts));
  if (rule === undefined) throw new Error('REPLY_RULES must end with a catch-all row');
  return rule.verdict;
}

type WithoutCommon<T> = T extends unknown ? Omit<T, keyof Common> : never;
/** A call result before the client adds the operation id and the duration. */
export type Classified<R> = WithoutCommon<CallResult<R>>;

/** What the classification needs to know of the operation (from the catalogue). */
export type ClassifiedOperation = Pick<OperationDef, 'reply' | 'mutating' | 'retriable'>;

/** What an `unknown` outcome tells the caller to do about the operation. */
function unknownFlags(
  op: ClassifiedOperation,
): Pick<Unknown, 'resolveByStatusQuery' | 'retriable'> {
  return { resolveByStatusQuery: op.mutating, retriable: op.retriable };
}

/**
 * Classifies one exchange with the gateway: a transport failure by its error codes
 * ({@link classifyTransportError}), a reply by {@link REPLY_RULES}. `R` is the operation's reply
 * type; the parser produced it from the operation's reply kind.
 */
export function classifyExchange<R>(res: TransportResult, op: ClassifiedOperation): Classified<R> {
  switch (res.kind) {
    case 'error': {
      const c: ErrorClass = res.closedBeforeSend
        ? { outcome: 'not-sent', reason: 'pool-closed', errorCode: 'UND_ERR_CLOSED' }
        : classifyTransportError(res.error);
      return c.outcome === 'not-sent' ? c : { ...c, ...unknownFlags(op) };
    }
    case 'too-large':
      return {
        outcome: 'unknown',
        reason: 'reply-too-large',
        httpStatus: res.status,
        ...unknownFlags(op),
      };
    case 'response':
      break;
    default: {
      const never: never = res;
      return never;
    }
  }
  const httpStatus = res.status;
  const raw = decodeReplyBody(res.body);
  const parsed = raw === undefined ? undefined : parseReply(raw, op.reply, httpStatus);
  const errorReply: ErrorLikeReply | undefined =
    parsed?.ok === true &&
    (parsed.reply.type === 'validation-error' || parsed.reply.type === 'error')
      ? parsed.reply
      : undefined;
  const verdict = replyVerdict({
    httpStatus,
    parsed: parsed?.ok === true,
    ...(errorReply ? { errorType: errorReply.type } : {}),
  });
  switch (verdict.outcome) {
    case 'accepted':
      if (parsed?.ok !== true) throw new Error('REPLY_RULES accepted a reply that did not parse');
      return { outcome: 'accepted', httpStatus, reply: parsed.reply as R };
    case 'rejected':
      return {
        outcome: 'rejected',
        reason: verdict.reason,
        httpStatus,
        ...(errorReply
          ? {
              reply: errorReply,
              ...(errorReply.errorCode !== undefined ? { errorCode: errorReply.errorCode } : {}),
              ...(errorReply.errorMessage !== undefined
                ? { errorMessage: errorReply.errorMessage }
                : {}),
            }
          : {}),
      };
    case 'not-sent':
      return { outcome: 'not-sent', reason: verdict.reason, httpStatus };
    case 'unknown':
      return {
        outcome: 'unknown',
        reason: verdict.reason,
        httpStatus,
        ...unknownFlags(op),
        ...(verdict.errorMessage && errorReply?.errorMessage !== undefined
          ? { errorMessage: errorReply.errorMessage }
          : {}),
      };
    default: {
      const never: never = verdict;
      return never;
    }
  }
}
