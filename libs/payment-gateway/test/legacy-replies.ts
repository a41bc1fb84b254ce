/**
 * The reply decoder and parser as they were before the allocation-lean rewrite (commit b8c661d,
 * `src/replies.ts`), kept verbatim as the oracle of `src/replies.equivalence.spec.ts`: the
 * library's `decodeReplyBody` and `parseReply` must answer exactly what these answer (accepted
 * or refused, and the same reply) on every input.
 */
import { z } from 'zod';
import type { ReplyKind } from '../src/catalogue';
import { isKnownCurrency, parseMajorUnits } from '../src/money';
import {
  isFinalStatus,
  normalizeStatus,
  type ParsedReply,
  type RawReply,
  type ReplyEnvelope,
  type SuccessReply,
} from '../src/replies';

// ---- body decoding --------------------------------------------------------------------------

const FORM_KEY = /^[A-Za-z0-9_.\-[\]]+$/;

/**
 * Decodes a reply body: JSON (`application/vnd.pay+json`) or the default form-encoded format
 * (`name=value` pairs separated by `&`, each value followed by 0x0A — facts §1). Returns
 * undefined when the body is neither.
 */
export function legacyDecodeReplyBody(text: string): RawReply | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      return undefined;
    }
    // A JSON object (what JSON.parse makes is a plain object; arrays and scalars are refused).
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(parsed)) {
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
  if (!trimmed.includes('=')) return undefined;
  const out: Record<string, string> = {};
  try {
    for (const pair of trimmed.split('&')) {
      const piece = pair.replace(/^[\r\n]+/, '');
      if (piece === '') continue;
      const eq = piece.indexOf('=');
      if (eq <= 0) return undefined;
      const key = decodeURIComponent(piece.slice(0, eq).replace(/\+/g, ' '));
      if (!FORM_KEY.test(key)) return undefined;
      const value = decodeURIComponent(piece.slice(eq + 1).replace(/\+/g, ' '));
      out[key] = value.replace(/[\r\n]+$/, '');
    }
  } catch {
    return undefined;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

// ---- zod schemas over the raw record ----------------------------------------------------------

const opt = z.string().optional();
const nonEmpty = z.string().min(1);

const envelopeSchema = z.object({
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

function envelope(raw: RawReply, e: z.infer<typeof envelopeSchema>): ReplyEnvelope {
  return stripUndefined({
    serialNumber: e['serial-number'],
    merchantOrderId: e['merchant-order-id'],
    paynetOrderId: e['paynet-order-id'],
    endPointId: e['end-point-id'],
    status: e.status === undefined || e.status === '' ? undefined : normalizeStatus(e.status),
    errorMessage: e['error-message'] ?? e.error_message,
    errorCode: e['error-code'] ?? e.error_code,
    raw,
  });
}

function stripUndefined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) {
    if (o[k] === undefined) delete o[k];
  }
  return o;
}

const formSchema = envelopeSchema.extend({ 'redirect-url': nonEmpty });
const statusSchema = envelopeSchema.extend({
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
const cardRefSchema = envelopeSchema.extend({
  'card-ref-id': nonEmpty,
  'unq-card-ref-id': opt,
  'recurring-payment-id': opt,
});
const cardInfoSchema = envelopeSchema.extend({
  'card-printed-name': opt,
  bin: opt,
  'last-four-digits': opt,
  'card-type': opt,
  'expire-year': opt,
  'expire-month': opt,
  'result-3d': opt,
});
const recurringSchema = envelopeSchema.extend({ 'recurring-payment-id': nonEmpty });
const asyncSchema = envelopeSchema.extend({ 'payout-id': opt, 'transaction-id': opt });

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

/**
 * Turns a decoded reply into a typed reply of the expected kind, or an error reply when the
 * gateway says `validation-error` / `error` (or, with no `type`, when the HTTP status is 4xx).
 */
export function legacyParseReply(
  raw: RawReply,
  expected: ReplyKind,
  httpStatus: number,
): ParsedReply {
  const type = raw.type;
  const isError = type === 'validation-error' || type === 'error';
  if (isError || (type === undefined && httpStatus >= 400)) {
    const env = envelopeSchema.safeParse(raw);
    if (!env.success) return { ok: false, problem: 'reply envelope malformed' };
    if (isError) return { ok: true, reply: { ...envelope(raw, env.data), type } };
    return {
      ok: true,
      reply: {
        ...envelope(raw, env.data),
        type: httpStatus === 400 || httpStatus === 422 ? 'validation-error' : 'error',
      },
    };
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
      return stripUndefined({
        ...envelope(raw, r.data),
        type: 'async-response' as const,
        payoutId: r.data['payout-id'],
        transactionId: r.data['transaction-id'],
      });
    }
    case 'async-form-response': {
      const r = formSchema.safeParse(raw);
      if (!r.success) return undefined;
      return {
        ...envelope(raw, r.data),
        type: 'async-form-response',
        redirectUrl: r.data['redirect-url'],
      };
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
      return stripUndefined({
        ...envelope(raw, d),
        type: 'status-response' as const,
        status,
        final: isFinalStatus(status),
        amount: d.amount,
        amountMinor,
        currency: d.currency,
        html: d.html === '' ? undefined : d.html,
        redirectTo: d['redirect-to'] === '' ? undefined : d['redirect-to'],
        threeDSMethodUrl: d['threeds-method-url'] === '' ? undefined : d['threeds-method-url'],
        threeDSServerTransId:
          d['threeds-server-trans-id'] === '' ? undefined : d['threeds-server-trans-id'],
        bin: d.bin,
        lastFourDigits: d['last-four-digits'],
        cardType: d['card-type'],
        approvalCode: d['approval-code'],
        cardRefId: d['card-ref-id'],
        transactionType: d['transaction-type'],
        orderStage: d['order-stage'],
        processorRrn: d['processor-rrn'],
        byRequestSn: d['by-request-sn'],
        recurringPaymentId: d['recurring-payment-id'],
      });
    }
    case 'create-card-ref-response': {
      const r = cardRefSchema.safeParse(raw);
      if (!r.success) return undefined;
      return stripUndefined({
        ...envelope(raw, r.data),
        type: 'create-card-ref-response' as const,
        cardRefId: r.data['card-ref-id'],
        unqCardRefId: r.data['unq-card-ref-id'],
        recurringPaymentId: r.data['recurring-payment-id'],
      });
    }
    case 'get-card-info-response': {
      const r = cardInfoSchema.safeParse(raw);
      if (!r.success) return undefined;
      return stripUndefined({
        ...envelope(raw, r.data),
        type: 'get-card-info-response' as const,
        cardPrintedName: r.data['card-printed-name'],
        bin: r.data.bin,
        lastFourDigits: r.data['last-four-digits'],
        cardType: r.data['card-type'],
        expireMonth: r.data['expire-month'],
        expireYear: r.data['expire-year'],
        result3d: r.data['result-3d'],
      });
    }
    case 'create-recurring-payment-response': {
      const r = recurringSchema.safeParse(raw);
      if (!r.success) return undefined;
      return {
        ...envelope(raw, r.data),
        type: 'create-recurring-payment-response',
        recurringPaymentId: r.data['recurring-payment-id'],
      };
    }
  }
}
