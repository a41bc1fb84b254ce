import { z } from 'zod';
import { GatewayClientError } from './errors';
import { currencyExponent, parseMajorUnits } from './money';
import { normalizeStatus, type GatewayStatus } from './replies';
import { controlChecksum, controlMatches } from './signers/control';

/**
 * Verifies the checksum of a server callback or of the payer's 3-D Secure return:
 * `control = sha1(status + orderid + merchant_order + merchant_control)` (facts §6), compared in
 * constant time. Empty, wrong-length and non-hex controls are rejected.
 */
export function verifyCallbackControl(
  fields: { readonly status: string; readonly orderid: string; readonly merchant_order: string },
  control: string,
  controlKey: string,
): boolean {
  if (controlKey === '') return false;
  const expected = controlChecksum(
    [fields.status, fields.orderid, fields.merchant_order],
    controlKey,
  );
  return controlMatches(expected, control);
}

export type CallbackType =
  'sale' | 'reversal' | 'chargeback' | 'preauth' | 'capture' | (string & {});

export interface CallbackNotification {
  /** Raw status string normalised; unrecognised values become `unknown` (non-final). */
  readonly status: GatewayStatus;
  readonly orderid: string;
  /** `merchant_order`, falling back to `client_orderid` (they carry the same value). */
  readonly merchantOrder: string;
  readonly clientOrderid?: string;
  readonly type?: CallbackType;
  /** Major-unit string exactly as received. */
  readonly amount?: string;
  /** Minor units, when `amount` and a currency are known. */
  readonly amountMinor?: number;
  readonly currency?: string;
  readonly errorCode?: string;
  readonly errorMessage?: string;
  readonly bin?: string;
  readonly lastFourDigits?: string;
  readonly cardType?: string;
  readonly approvalCode?: string;
  readonly control: string;
  /** Every parameter as received. Contains `control`: log it only through redactFields. */
  readonly raw: Readonly<Record<string, string>>;
}

export interface ParseCallbackOptions {
  /** Currency to use for the amount when the callback carries none. */
  readonly currency?: string;
}

const opt = z.string().optional();
const callbackSchema = z.object({
  status: z.string().min(1),
  orderid: z.string().min(1),
  merchant_order: opt,
  client_orderid: opt,
  type: opt,
  amount: opt,
  currency: opt,
  error_code: opt,
  error_message: opt,
  bin: opt,
  'last-four-digits': opt,
  'card-type': opt,
  'approval-code': opt,
  control: z.string().min(1),
});

function toRecord(
  params: URLSearchParams | Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (params instanceof URLSearchParams) {
    for (const [k, v] of params) {
      if (k in out && out[k] !== v) {
        throw new GatewayClientError(
          'invalid-callback',
          `parameter ${k} repeated with different values`,
          {
            field: k,
          },
        );
      }
      out[k] = v;
    }
  } else {
    for (const [k, v] of Object.entries(params)) {
      if (typeof v !== 'string') {
        throw new GatewayClientError('invalid-callback', `parameter ${k} is not a string`, {
          field: k,
        });
      }
      out[k] = v;
    }
  }
  return out;
}

/**
 * Parses a callback (GET query or POST form) into a typed notification. Does NOT verify the
 * control — call {@link verifyCallbackControl} (or {@link parseAndVerifyCallback}).
 * Invalid input throws `GatewayClientError` with code `invalid-callback` / `invalid-amount` /
 * `invalid-currency`.
 */
export function parseCallback(
  params: URLSearchParams | Readonly<Record<string, string>>,
  options: ParseCallbackOptions = {},
): CallbackNotification {
  const raw = toRecord(params);
  const r = callbackSchema.safeParse(raw);
  if (!r.success) {
    const field = r.error.issues[0]?.path.join('.') ?? '';
    throw new GatewayClientError('invalid-callback', `callback field invalid: ${field}`, { field });
  }
  const d = r.data;
  const merchantOrder = d.merchant_order || d.client_orderid;
  if (!merchantOrder) {
    throw new GatewayClientError('invalid-callback', 'merchant_order / client_orderid missing', {
      field: 'merchant_order',
    });
  }
  if (d.merchant_order && d.client_orderid && d.merchant_order !== d.client_orderid) {
    throw new GatewayClientError('invalid-callback', 'merchant_order and client_orderid differ', {
      field: 'client_orderid',
    });
  }
  const currency = d.currency || options.currency;
  let amountMinor: number | undefined;
  if (d.amount !== undefined && d.amount !== '') {
    if (!currency) {
      throw new GatewayClientError('invalid-callback', 'amount without currency', {
        field: 'currency',
      });
    }
    amountMinor = parseMajorUnits(d.amount, currency);
  } else if (currency) {
    currencyExponent(currency);
  }
  const out: Record<string, unknown> = {
    status: normalizeStatus(d.status),
    orderid: d.orderid,
    merchantOrder,
    clientOrderid: d.client_orderid,
    type: d.type,
    amount: d.amount || undefined,
    amountMinor,
    currency: currency || undefined,
    errorCode: d.error_code || undefined,
    errorMessage: d.error_message || undefined,
    bin: d.bin || undefined,
    lastFourDigits: d['last-four-digits'] || undefined,
    cardType: d['card-type'] || undefined,
    approvalCode: d['approval-code'] || undefined,
    control: d.control,
    raw,
  };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out as unknown as CallbackNotification;
}

/**
 * Parses and verifies in one step. The control is checked against the RAW `status`,
 * `orderid` and `merchant_order` strings (not the normalised ones).
 */
export function parseAndVerifyCallback(
  params: URLSearchParams | Readonly<Record<string, string>>,
  controlKey: string,
  options: ParseCallbackOptions = {},
): { readonly notification: CallbackNotification; readonly verified: boolean } {
  const notification = parseCallback(params, options);
  const rawStatus = notification.raw.status ?? '';
  const verified = verifyCallbackControl(
    {
      status: rawStatus,
      orderid: notification.orderid,
      merchant_order: notification.raw.merchant_order ?? notification.merchantOrder,
    },
    notification.control,
    controlKey,
  );
  return { notification, verified };
}
