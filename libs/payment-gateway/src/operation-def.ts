/**
 * What one operation of the card-payment API is, as the client's catalogue defines it
 * (`catalogue.ts`, its rows in `families/`, one file per operation family as the gateway
 * sandbox's): the types, the `op` constructor and the field and control helpers the families share.
 */

export type AuthScheme = 'control' | 'oauth-hmac-sha1' | 'oauth-rsa-sha256';
export type Family = 'v2' | 'v4' | '3ds/v1';
export type ReplyKind =
  | 'async-response'
  | 'async-form-response'
  | 'status-response'
  | 'create-card-ref-response'
  | 'get-card-info-response'
  | 'create-recurring-payment-response';

export type FieldKind = 'string' | 'amount' | 'currency' | 'boolean';
/** Card data classes; drive redaction (PAN masked, CVV and expiry dropped). */
export type Sensitivity = 'pan' | 'cvv' | 'expiry';

export interface FieldSpec {
  readonly kind: FieldKind;
  readonly required: boolean;
  readonly sensitive?: Sensitivity;
}

export type FieldMap = Readonly<Record<string, FieldSpec>>;

/** What the `control` concatenation is made of: config values or request field names. */
export type ControlInput = 'endpointId' | 'login' | (string & {});

export interface OperationDef<F extends FieldMap = FieldMap, R extends ReplyKind = ReplyKind> {
  /** Catalogue key, e.g. `v2/sale`. */
  readonly id: string;
  readonly family: Family;
  /** Path segment(s) after the family, e.g. `sale`, `pan-eligibility/send`. */
  readonly command: string;
  /** Operation name from spec §4 (`not shown` for payout-pay; we use PAYOUT_V4_PAY). */
  readonly name: string;
  /** Default auth scheme. */
  readonly auth: AuthScheme;
  /** Schemes a per-operation setting may choose from (only where the spec is silent). */
  readonly allowedAuth: readonly AuthScheme[];
  /** `control` formula (spec §4.1 / facts §2.1), used when the scheme is `control`. */
  readonly control?: readonly ControlInput[];
  readonly fields: F;
  /** The merchant login is sent as the `login` body field (filled from configuration). */
  readonly sendsLogin: boolean;
  readonly reply: R;
  /** Changes money or state at the gateway: an unknown outcome needs a status query. */
  readonly mutating: boolean;
  /** Read-only: callers may retry it after an `unknown` outcome. */
  readonly retriable: boolean;
  /**
   * How an endpoint-group id enters the path: `segment` → `/group/<id>` (v2/v4),
   * `plain` → `/<id>` (the 3DS upload docs list the group form without `group/`).
   */
  readonly groupPath: 'segment' | 'plain';
  /** Pairs of fields that must be sent together (e.g. partial capture: amount + currency). */
  readonly together?: readonly (readonly [string, string])[];
}

// ---- field helpers ------------------------------------------------------------------------

export const S = { kind: 'string', required: true } as const;
export const O = { kind: 'string', required: false } as const;
export const AMOUNT = { kind: 'amount', required: true } as const;
export const AMOUNT_OPT = { kind: 'amount', required: false } as const;
export const CURRENCY = { kind: 'currency', required: true } as const;
export const CURRENCY_OPT = { kind: 'currency', required: false } as const;
export const BOOL_OPT = { kind: 'boolean', required: false } as const;
export const PAN = { kind: 'string', required: true, sensitive: 'pan' } as const;
export const PAN_OPT = { kind: 'string', required: false, sensitive: 'pan' } as const;
export const CVV = { kind: 'string', required: true, sensitive: 'cvv' } as const;
export const CVV_OPT = { kind: 'string', required: false, sensitive: 'cvv' } as const;
export const EXP = { kind: 'string', required: true, sensitive: 'expiry' } as const;
export const EXP_OPT = { kind: 'string', required: false, sensitive: 'expiry' } as const;

/** Customer and order fields of sale/preauth and their form variants (facts §7). */
export const ORDER_CUSTOMER = {
  client_orderid: S,
  order_desc: S,
  amount: AMOUNT,
  currency: CURRENCY,
  address1: S,
  city: S,
  zip_code: S,
  country: S,
  email: S,
  ipaddress: S,
  phone: O,
  first_name: O,
  last_name: O,
  ssn: O,
  birthday: O,
  state: O,
  cell_phone: O,
  site_url: O,
  destination: O,
  purpose: O,
  server_callback_url: O,
  notify_url: O,
  merchant_data: O,
} as const;

export const CARD = {
  card_printed_name: S,
  credit_card_number: PAN,
  expire_month: EXP,
  expire_year: EXP,
  cvv2: CVV,
} as const;

export const VERIFY_CUSTOMER = {
  client_orderid: S,
  order_desc: S,
  address1: S,
  city: S,
  zip_code: S,
  country: S,
  email: S,
  ipaddress: S,
  first_name: O,
  last_name: O,
  ssn: O,
  birthday: O,
  state: O,
  phone: O,
  cell_phone: O,
  site_url: O,
  purpose: O,
  server_callback_url: O,
} as const;

export const REF = { client_orderid: S, orderid: S } as const;
export const SALE_CONTROL = ['endpointId', 'client_orderid', 'amount', 'email'] as const;
export const VERIFY_CONTROL = ['endpointId', 'client_orderid', 'email'] as const;
export const REF_CONTROL = ['login', 'client_orderid', 'orderid'] as const;

export const CONTROL_ONLY = ['control'] as const;
export const HMAC_ONLY = ['oauth-hmac-sha1'] as const;
export const RSA_ONLY = ['oauth-rsa-sha256'] as const;

export function op<const F extends FieldMap, const R extends ReplyKind>(
  def: Omit<OperationDef<F, R>, 'groupPath' | 'retriable' | 'mutating' | 'allowedAuth'> &
    Partial<Pick<OperationDef<F, R>, 'groupPath' | 'retriable' | 'mutating' | 'allowedAuth'>>,
): OperationDef<F, R> {
  const retriable = def.retriable ?? false;
  return {
    ...def,
    groupPath: def.groupPath ?? 'segment',
    retriable,
    mutating: def.mutating ?? !retriable,
    allowedAuth: def.allowedAuth ?? [def.auth],
  };
}
