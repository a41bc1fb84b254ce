import { z } from 'zod';
import type { ReplyKind } from './catalogue';
import { isKnownCurrency, parseMajorUnits } from './money';

/** Transaction statuses (facts §4). approved/declined/error/filtered are final. */
export const GATEWAY_STATUSES = [
  'approved',
  'declined',
  'error',
  'filtered',
  'processing',
  'unknown',
  'chain_declined',
] as const;
export type GatewayStatus = (typeof GATEWAY_STATUSES)[number];

const FINAL: ReadonlySet<GatewayStatus> = new Set(['approved', 'declined', 'error', 'filtered']);

export function isFinalStatus(status: GatewayStatus): boolean {
  return FINAL.has(status);
}

/**
 * Normalises a status string. Case-insensitive; an unrecognised value maps to `unknown`
 * (non-final, so a caller keeps polling rather than concluding anything).
 */
export function normalizeStatus(value: string): GatewayStatus {
  const v = value.trim().toLowerCase();
  return (GATEWAY_STATUSES as readonly string[]).includes(v) ? (v as GatewayStatus) : 'unknown';
}

/** Every reply field as a string (JSON numbers/booleans stringified). Never log it unredacted. */
export type RawReply = Readonly<Record<string, string>>;

// ---- body decoding --------------------------------------------------------------------------

const FORM_KEY = /^[A-Za-z0-9_.\-[\]]+$/;

/**
 * Decodes a reply body: JSON (`application/vnd.pay+json`) or the default form-encoded format
 * (`name=value` pairs separated by `&`, each value followed by 0x0A — facts §1). Returns
 * undefined when the body is neither.
 */
export function decodeReplyBody(text: string): RawReply | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  if (trimmed.charCodeAt(0) === 0x7b /* { */) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      return undefined;
    }
    // A JSON object (what JSON.parse makes is a plain object; arrays and scalars are refused).
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const record = parsed as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.every((k) => typeof record[k] === 'string' && k !== '__proto__')) {
      // Already a record of strings (the usual reply): JSON.parse made it, nobody else holds it.
      return record as RawReply;
    }
    const out: Record<string, string> = {};
    for (const k of keys) {
      const v = record[k];
      if (v === null || v === undefined) continue;
      out[k] =
        typeof v === 'string'
          ? v
          : typeof v === 'number' || typeof v === 'boolean'
            ? String(v)
            : JSON.stringify(v);
    }
    return out;
  }
  return decodeFormReply(trimmed);
}

const CR = 0x0d;
const LF = 0x0a;

/** `+` is a space, then `%XX` decoded; throws URIError on a malformed escape. */
function formDecode(s: string): string {
  const spaced = s.includes('+') ? s.replaceAll('+', ' ') : s;
  return spaced.includes('%') ? decodeURIComponent(spaced) : spaced;
}

/**
 * The form-encoded reply, read in one pass over the text: pairs split at `&`, line breaks before
 * a pair and after its decoded value dropped, empty pairs skipped; a pair without a name, a name
 * outside {@link FORM_KEY} or a malformed escape refuses the whole body.
 */
function decodeFormReply(text: string): RawReply | undefined {
  if (!text.includes('=')) return undefined;
  const out: Record<string, string> = {};
  let start = 0;
  const end = text.length;
  while (start <= end) {
    let stop = text.indexOf('&', start);
    if (stop === -1) stop = end;
    let from = start;
    while (from < stop && (text.charCodeAt(from) === CR || text.charCodeAt(from) === LF)) from++;
    start = stop + 1;
    if (from === stop) continue;
    const eq = text.indexOf('=', from);
    if (eq === -1 || eq >= stop || eq === from) return undefined;
    let key: string;
    let value: string;
    try {
      key = formDecode(text.slice(from, eq));
      if (!FORM_KEY.test(key)) return undefined;
      value = formDecode(text.slice(eq + 1, stop));
    } catch {
      return undefined;
    }
    let last = value.length;
    while (last > 0 && (value.charCodeAt(last - 1) === CR || value.charCodeAt(last - 1) === LF)) {
      last--;
    }
    out[key] = last === value.length ? value : value.slice(0, last);
  }
  // Not a count of pairs: `__proto__=…` is a pair that adds no key.
  return Object.keys(out).length > 0 ? out : undefined;
}

// ---- typed replies --------------------------------------------------------------------------

export interface ReplyEnvelope {
  readonly serialNumber?: string;
  readonly merchantOrderId?: string;
  /** `paynet-order-id` (= orderid), always a string even when the JSON carried a number. */
  readonly paynetOrderId?: string;
  readonly endPointId?: string;
  readonly status?: GatewayStatus;
  readonly errorMessage?: string;
  /** `error-code`, always a string even when the JSON carried a number. */
  readonly errorCode?: string;
  /** All fields as received (stringified). Contains no secrets we sent, but log it redacted. */
  readonly raw: RawReply;
}

export interface AsyncResponse extends ReplyEnvelope {
  readonly type: 'async-response';
  /** v4 payout sample reads `payout-id` (spec §4.2). */
  readonly payoutId?: string;
  /** v4 transfer-by-ref sample reads `transaction-id` (spec §4.2). */
  readonly transactionId?: string;
}

export interface AsyncFormResponse extends ReplyEnvelope {
  readonly type: 'async-form-response';
  /** Where to send the payer (HTTP 302). */
  readonly redirectUrl: string;
}

export interface StatusResponse extends ReplyEnvelope {
  readonly type: 'status-response';
  readonly status: GatewayStatus;
  readonly final: boolean;
  /** Amount as sent by the gateway (major units, decimal string). */
  readonly amount?: string;
  /** Amount in minor units when `amount` and a known `currency` are present and valid. */
  readonly amountMinor?: number;
  readonly currency?: string;
  /** 3-D Secure: HTML to render in the payer's browser. */
  readonly html?: string;
  /** 3-D Secure: URL to send the payer's browser to. */
  readonly redirectTo?: string;
  /**
   * 3-D Secure 2.x method step (`threeds-method-url`, `threeds-server-trans-id`): facts §5 say
   * how a merchant learns them is not public; the sandbox reports them on the status reply.
   */
  readonly threeDSMethodUrl?: string;
  readonly threeDSServerTransId?: string;
  readonly bin?: string;
  readonly lastFourDigits?: string;
  readonly cardType?: string;
  readonly approvalCode?: string;
  readonly cardRefId?: string;
  readonly transactionType?: string;
  readonly orderStage?: string;
  readonly processorRrn?: string;
  readonly byRequestSn?: string;
  /** A status query about a create-recurring-payment registration (sandbox; facts §3 leave it open). */
  readonly recurringPaymentId?: string;
}

export interface CardRefResponse extends ReplyEnvelope {
  readonly type: 'create-card-ref-response';
  readonly cardRefId: string;
  readonly unqCardRefId?: string;
  readonly recurringPaymentId?: string;
}

export interface CardInfoResponse extends ReplyEnvelope {
  readonly type: 'get-card-info-response';
  readonly cardPrintedName?: string;
  readonly bin?: string;
  readonly lastFourDigits?: string;
  /** The card's brand (`card-type`), when the gateway sends it. */
  readonly cardType?: string;
  readonly expireMonth?: string;
  readonly expireYear?: string;
  readonly result3d?: string;
}

export interface CreateRecurringPaymentResponse extends ReplyEnvelope {
  readonly type: 'create-recurring-payment-response';
  readonly recurringPaymentId: string;
}

export interface ValidationErrorReply extends ReplyEnvelope {
  readonly type: 'validation-error';
}

export interface ErrorReply extends ReplyEnvelope {
  readonly type: 'error';
}

export interface ReplyByKind {
  'async-response': AsyncResponse;
  'async-form-response': AsyncFormResponse;
  'status-response': StatusResponse;
  'create-card-ref-response': CardRefResponse;
  'get-card-info-response': CardInfoResponse;
  'create-recurring-payment-response': CreateRecurringPaymentResponse;
}
export type SuccessReply = ReplyByKind[ReplyKind];
export type ErrorLikeReply = ValidationErrorReply | ErrorReply;

// ---- zod schemas over the raw record ----------------------------------------------------------

const opt = z.string().optional();
const nonEmpty = z.string().min(1);

const envelopeObject = z.object({
  type: opt,
  'serial-number': opt,
  'merchant-order-id': opt,
  'paynet-order-id': opt,
  'end-point-id': opt,
  status: opt,
  'error-message': opt,
  'error-code': opt,
  error_message: opt,
  error_code: opt,
});

/**
 * Each schema is used through `z.compile`: zod generates the check once (a plain function, no
 * per-field schema calls) and hands any reply that fails it to the ordinary parser, so what is
 * accepted and refused is the schema's answer either way (≈ 60 ns against ≈ 400 ns per status
 * reply here). Without code generation (`new Function` refused) zod keeps the ordinary parser.
 */
const compiled = <T extends z.ZodType>(schema: T): T => z.compile(schema);

const envelopeSchema = compiled(envelopeObject);

type Building<T> = { -readonly [K in keyof T]?: T[K] };

/** Sets `key` when `value` is defined (a reply never carries a key whose value is undefined). */
function put<T, K extends keyof T>(o: Building<T>, key: K, value: T[K] | undefined): void {
  if (value !== undefined) o[key] = value;
}

/** `value`, or undefined when it is the empty string. */
const nonEmptyOr = (value: string | undefined): string | undefined =>
  value === '' ? undefined : value;

/**
 * The envelope of a checked reply, in a fresh object that the kind's fields are then added to:
 * only the fields present, in a fixed order (no `delete` afterwards: an object that loses keys
 * becomes a slow dictionary for every later reader).
 */
function envelope<T extends ReplyEnvelope>(
  raw: RawReply,
  e: z.infer<typeof envelopeSchema>,
): Building<T> {
  const out: Building<ReplyEnvelope> = {};
  put(out, 'serialNumber', e['serial-number']);
  put(out, 'merchantOrderId', e['merchant-order-id']);
  put(out, 'paynetOrderId', e['paynet-order-id']);
  put(out, 'endPointId', e['end-point-id']);
  if (e.status !== undefined && e.status !== '') out.status = normalizeStatus(e.status);
  put(out, 'errorMessage', e['error-message'] ?? e.error_message);
  put(out, 'errorCode', e['error-code'] ?? e.error_code);
  out.raw = raw;
  return out as Building<T>;
}

function extendEnvelope<S extends z.ZodRawShape>(shape: S) {
  return compiled(envelopeObject.extend(shape));
}

const formSchema = extendEnvelope({ 'redirect-url': nonEmpty });
const statusSchema = extendEnvelope({
  status: nonEmpty,
  amount: opt,
  currency: opt,
  html: opt,
  'redirect-to': opt,
  'threeds-method-url': opt,
  'threeds-server-trans-id': opt,
  bin: opt,
  'last-four-digits': opt,
  'card-type': opt,
  'approval-code': opt,
  'card-ref-id': opt,
  'transaction-type': opt,
  'order-stage': opt,
  'processor-rrn': opt,
  'by-request-sn': opt,
  'recurring-payment-id': opt,
});
const cardRefSchema = extendEnvelope({
  'card-ref-id': nonEmpty,
  'unq-card-ref-id': opt,
  'recurring-payment-id': opt,
});
const cardInfoSchema = extendEnvelope({
  'card-printed-name': opt,
  bin: opt,
  'last-four-digits': opt,
  'card-type': opt,
  'expire-year': opt,
  'expire-month': opt,
  'result-3d': opt,
});
const recurringSchema = extendEnvelope({ 'recurring-payment-id': nonEmpty });
const asyncSchema = extendEnvelope({ 'payout-id': opt, 'transaction-id': opt });

/** Reply `type` values accepted for each expected kind (absent `type` is accepted too). */
const ACCEPTED_TYPES: Readonly<Record<ReplyKind, readonly string[] | 'any'>> = {
  'async-response': ['async-response'],
  'async-form-response': ['async-form-response'],
  'status-response': ['status-response'],
  // DOC-V2-CARDREF says it "may be async-response"; all libraries expect this type.
  'create-card-ref-response': ['create-card-ref-response', 'async-response'],
  'get-card-info-response': ['get-card-info-response'],
  // The reply type name of create-recurring-payment is not published.
  'create-recurring-payment-response': 'any',
};

export type ParsedReply =
  | { readonly ok: true; readonly reply: SuccessReply }
  | { readonly ok: true; readonly reply: ErrorLikeReply }
  | { readonly ok: false; readonly problem: string };

/**
 * Turns a decoded reply into a typed reply of the expected kind, or an error reply when the
 * gateway says `validation-error` / `error` (or, with no `type`, when the HTTP status is 4xx).
 */
export function parseReply(raw: RawReply, expected: ReplyKind, httpStatus: number): ParsedReply {
  const type = raw.type;
  const isError = type === 'validation-error' || type === 'error';
  if (isError || (type === undefined && httpStatus >= 400)) {
    const env = envelopeSchema.safeParse(raw);
    if (!env.success) return { ok: false, problem: 'reply envelope malformed' };
    const reply = envelope<ErrorLikeReply>(raw, env.data);
    reply.type = isError
      ? type
      : httpStatus === 400 || httpStatus === 422
        ? 'validation-error'
        : 'error';
    return { ok: true, reply: reply as ErrorLikeReply };
  }
  const accepted = ACCEPTED_TYPES[expected];
  if (type !== undefined && accepted !== 'any' && !accepted.includes(type)) {
    return { ok: false, problem: `unexpected reply type for ${expected}` };
  }
  if (type === undefined && !hasIdentity(raw, expected)) {
    return { ok: false, problem: `reply has no type and none of the ${expected} fields` };
  }
  const result = parseKind(raw, expected);
  return result === undefined
    ? { ok: false, problem: `reply does not match ${expected}` }
    : { ok: true, reply: result };
}

/** Without a `type`, a reply must at least carry the fields that identify its kind. */
function hasIdentity(raw: RawReply, expected: ReplyKind): boolean {
  const any = (...keys: string[]) => keys.some((k) => (raw[k] ?? '') !== '');
  switch (expected) {
    case 'async-response':
    case 'async-form-response':
      return any('paynet-order-id', 'merchant-order-id', 'serial-number');
    case 'status-response':
      return any('status');
    case 'create-card-ref-response':
      return any('card-ref-id');
    case 'get-card-info-response':
      return any('bin', 'last-four-digits', 'card-printed-name', 'serial-number');
    case 'create-recurring-payment-response':
      return any('recurring-payment-id');
  }
}

function parseKind(raw: RawReply, expected: ReplyKind): SuccessReply | undefined {
  switch (expected) {
    case 'async-response': {
      const r = asyncSchema.safeParse(raw);
      if (!r.success) return undefined;
      const out = envelope<AsyncResponse>(raw, r.data);
      out.type = 'async-response';
      put(out, 'payoutId', r.data['payout-id']);
      put(out, 'transactionId', r.data['transaction-id']);
      return out as AsyncResponse;
    }
    case 'async-form-response': {
      const r = formSchema.safeParse(raw);
      if (!r.success) return undefined;
      const out = envelope<AsyncFormResponse>(raw, r.data);
      out.type = 'async-form-response';
      out.redirectUrl = r.data['redirect-url'];
      return out as AsyncFormResponse;
    }
    case 'status-response': {
      const r = statusSchema.safeParse(raw);
      if (!r.success) return undefined;
      const d = r.data;
      const status = normalizeStatus(d.status);
      let amountMinor: number | undefined;
      if (d.amount !== undefined && d.currency !== undefined && isKnownCurrency(d.currency)) {
        try {
          amountMinor = parseMajorUnits(d.amount, d.currency);
        } catch {
          amountMinor = undefined;
        }
      }
      const out = envelope<StatusResponse>(raw, d);
      out.type = 'status-response';
      out.status = status;
      out.final = isFinalStatus(status);
      put(out, 'amount', d.amount);
      put(out, 'amountMinor', amountMinor);
      put(out, 'currency', d.currency);
      put(out, 'html', nonEmptyOr(d.html));
      put(out, 'redirectTo', nonEmptyOr(d['redirect-to']));
      put(out, 'threeDSMethodUrl', nonEmptyOr(d['threeds-method-url']));
      put(out, 'threeDSServerTransId', nonEmptyOr(d['threeds-server-trans-id']));
      put(out, 'bin', d.bin);
      put(out, 'lastFourDigits', d['last-four-digits']);
      put(out, 'cardType', d['card-type']);
      put(out, 'approvalCode', d['approval-code']);
      put(out, 'cardRefId', d['card-ref-id']);
      put(out, 'transactionType', d['transaction-type']);
      put(out, 'orderStage', d['order-stage']);
      put(out, 'processorRrn', d['processor-rrn']);
      put(out, 'byRequestSn', d['by-request-sn']);
      put(out, 'recurringPaymentId', d['recurring-payment-id']);
      return out as StatusResponse;
    }
    case 'create-card-ref-response': {
      const r = cardRefSchema.safeParse(raw);
      if (!r.success) return undefined;
      const out = envelope<CardRefResponse>(raw, r.data);
      out.type = 'create-card-ref-response';
      out.cardRefId = r.data['card-ref-id'];
      put(out, 'unqCardRefId', r.data['unq-card-ref-id']);
      put(out, 'recurringPaymentId', r.data['recurring-payment-id']);
      return out as CardRefResponse;
    }
    case 'get-card-info-response': {
      const r = cardInfoSchema.safeParse(raw);
      if (!r.success) return undefined;
      const out = envelope<CardInfoResponse>(raw, r.data);
      out.type = 'get-card-info-response';
      put(out, 'cardPrintedName', r.data['card-printed-name']);
      put(out, 'bin', r.data.bin);
      put(out, 'lastFourDigits', r.data['last-four-digits']);
      put(out, 'cardType', r.data['card-type']);
      put(out, 'expireMonth', r.data['expire-month']);
      put(out, 'expireYear', r.data['expire-year']);
      put(out, 'result3d', r.data['result-3d']);
      return out as CardInfoResponse;
    }
    case 'create-recurring-payment-response': {
      const r = recurringSchema.safeParse(raw);
      if (!r.success) return undefined;
      const out = envelope<CreateRecurringPaymentResponse>(raw, r.data);
      out.type = 'create-recurring-payment-response';
      out.recurringPaymentId = r.data['recurring-payment-id'];
      return out as CreateRecurringPaymentResponse;
    }
  }
}
