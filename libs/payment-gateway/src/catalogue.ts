/**
 * The operation catalogue: one typed definition per operation of the card-payment API
 * (spec §4, §4.1, §4.2; request fields from the facts reference §7 where the spec says
 * "not shown"). Everything the client does — path, auth scheme, `control` formula, which fields
 * exist and which are required, how the reply is parsed — is driven from here.
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

const S = { kind: 'string', required: true } as const;
const O = { kind: 'string', required: false } as const;
const AMOUNT = { kind: 'amount', required: true } as const;
const AMOUNT_OPT = { kind: 'amount', required: false } as const;
const CURRENCY = { kind: 'currency', required: true } as const;
const CURRENCY_OPT = { kind: 'currency', required: false } as const;
const BOOL_OPT = { kind: 'boolean', required: false } as const;
const PAN = { kind: 'string', required: true, sensitive: 'pan' } as const;
const PAN_OPT = { kind: 'string', required: false, sensitive: 'pan' } as const;
const CVV = { kind: 'string', required: true, sensitive: 'cvv' } as const;
const CVV_OPT = { kind: 'string', required: false, sensitive: 'cvv' } as const;
const EXP = { kind: 'string', required: true, sensitive: 'expiry' } as const;
const EXP_OPT = { kind: 'string', required: false, sensitive: 'expiry' } as const;

/** Customer and order fields of sale/preauth and their form variants (facts §7). */
const ORDER_CUSTOMER = {
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

const CARD = {
  card_printed_name: S,
  credit_card_number: PAN,
  expire_month: EXP,
  expire_year: EXP,
  cvv2: CVV,
} as const;

const VERIFY_CUSTOMER = {
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

/** Payout destination and order fields (facts §7 "payout (v4)"; v2 payout has the same semantics). */
const PAYOUT_OPTIONAL = {
  order_desc: O,
  ipaddress: O,
  purpose: O,
  server_callback_url: O,
  redirect_url: O,
  credit_card_number: PAN_OPT,
  expire_month: EXP_OPT,
  expire_year: EXP_OPT,
  card_printed_name: O,
  account_number: O,
  bank_name: O,
  bank_branch: O,
  bank_province: O,
  bank_city: O,
} as const;

const REF = { client_orderid: S, orderid: S } as const;
const SALE_CONTROL = ['endpointId', 'client_orderid', 'amount', 'email'] as const;
const VERIFY_CONTROL = ['endpointId', 'client_orderid', 'email'] as const;
const REF_CONTROL = ['login', 'client_orderid', 'orderid'] as const;
const TDS_CONTROL = ['login', 'client-order-id', 'orderid'] as const;
const TDS_REF = { 'client-order-id': S, orderid: S } as const;

const CONTROL_ONLY = ['control'] as const;
const HMAC_ONLY = ['oauth-hmac-sha1'] as const;
const RSA_ONLY = ['oauth-rsa-sha256'] as const;

function op<const F extends FieldMap, const R extends ReplyKind>(
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

export const OPERATIONS = {
  // ---- v2, SHA-1 control ------------------------------------------------------------------
  'v2/sale': op({
    id: 'v2/sale',
    family: 'v2',
    command: 'sale',
    name: 'SALE',
    auth: 'control',
    allowedAuth: CONTROL_ONLY,
    control: SALE_CONTROL,
    fields: { ...ORDER_CUSTOMER, phone: S, ...CARD, redirect_url: S },
    sendsLogin: false,
    reply: 'async-response',
  }),
  'v2/sale-form': op({
    id: 'v2/sale-form',
    family: 'v2',
    command: 'sale-form',
    name: 'SALEFORM',
    auth: 'control',
    control: SALE_CONTROL,
    fields: { ...ORDER_CUSTOMER, redirect_url: S },
    sendsLogin: false,
    reply: 'async-form-response',
  }),
  'v2/preauth': op({
    id: 'v2/preauth',
    family: 'v2',
    command: 'preauth',
    name: 'PREAUTH',
    auth: 'control',
    control: SALE_CONTROL,
    fields: { ...ORDER_CUSTOMER, phone: S, ...CARD, redirect_url: S },
    sendsLogin: false,
    reply: 'async-response',
  }),
  'v2/preauth-form': op({
    id: 'v2/preauth-form',
    family: 'v2',
    command: 'preauth-form',
    name: 'PREAUTHFORM',
    auth: 'control',
    control: SALE_CONTROL,
    fields: { ...ORDER_CUSTOMER, redirect_url: S },
    sendsLogin: false,
    reply: 'async-form-response',
  }),
  'v2/capture': op({
    id: 'v2/capture',
    family: 'v2',
    command: 'capture',
    name: 'CAPTURE',
    auth: 'control',
    control: ['login', 'client_orderid', 'orderid', 'amount', 'currency'],
    fields: { ...REF, amount: AMOUNT_OPT, currency: CURRENCY_OPT, comment: O },
    together: [['amount', 'currency']],
    sendsLogin: true,
    reply: 'async-response',
  }),
  'v2/void': op({
    id: 'v2/void',
    family: 'v2',
    command: 'void',
    name: 'VOID',
    auth: 'control',
    control: REF_CONTROL,
    // Spec §3: no partial amount on void, so no amount/currency fields.
    fields: { ...REF, comment: S },
    sendsLogin: true,
    reply: 'async-response',
  }),
  'v2/return': op({
    id: 'v2/return',
    family: 'v2',
    command: 'return',
    name: 'RETURN',
    auth: 'control',
    control: ['login', 'client_orderid', 'orderid', 'amount', 'currency'],
    fields: { ...REF, amount: AMOUNT_OPT, currency: CURRENCY_OPT, comment: O },
    together: [['amount', 'currency']],
    sendsLogin: true,
    reply: 'async-response',
  }),
  'v2/status': op({
    id: 'v2/status',
    family: 'v2',
    command: 'status',
    name: 'STATUS',
    auth: 'control',
    control: REF_CONTROL,
    fields: { client_orderid: S, orderid: O, 'by-request-sn': O },
    sendsLogin: true,
    reply: 'status-response',
    retriable: true,
  }),
  'v2/account-verification': op({
    id: 'v2/account-verification',
    family: 'v2',
    command: 'account-verification',
    name: 'ACCOUNT_VERIFICATION',
    auth: 'control',
    control: VERIFY_CONTROL,
    fields: { ...VERIFY_CUSTOMER, ...CARD, redirect_url: O },
    sendsLogin: false,
    reply: 'async-response',
  }),
  'v2/account-verification-form': op({
    id: 'v2/account-verification-form',
    family: 'v2',
    command: 'account-verification-form',
    name: 'ACCOUNT_VERIFICATION_FORM',
    auth: 'control',
    control: VERIFY_CONTROL,
    fields: { ...VERIFY_CUSTOMER, redirect_url: S },
    sendsLogin: false,
    reply: 'async-form-response',
  }),
  'v2/create-card-ref': op({
    id: 'v2/create-card-ref',
    family: 'v2',
    command: 'create-card-ref',
    name: 'CARDREF',
    auth: 'control',
    control: REF_CONTROL,
    fields: REF,
    sendsLogin: true,
    reply: 'create-card-ref-response',
  }),
  'v2/make-rebill': op({
    id: 'v2/make-rebill',
    family: 'v2',
    command: 'make-rebill',
    name: 'REBILL',
    auth: 'control',
    control: ['login', 'client_orderid', 'cardrefid', 'amount', 'currency'],
    fields: {
      client_orderid: S,
      cardrefid: S,
      amount: AMOUNT,
      currency: CURRENCY,
      order_desc: O,
      ipaddress: O,
      enumerate_amounts: O,
      recurrent_scenario: O,
      recurrent_initiator: O,
      comment: O,
      cvv2: CVV_OPT,
      server_callback_url: O,
    },
    sendsLogin: true,
    reply: 'async-response',
  }),
  // ---- v2 without a control formula in the spec ---------------------------------------------
  'v2/get-card-info': op({
    id: 'v2/get-card-info',
    family: 'v2',
    command: 'get-card-info',
    name: 'CARDINFO',
    auth: 'control',
    // Spec §4: "no control formula is given"; facts §2.1 (DOC-V2-CARDINFO, PHPLIB).
    control: ['login', 'cardrefid'],
    fields: { cardrefid: S },
    sendsLogin: true,
    reply: 'get-card-info-response',
    retriable: true,
  }),
  'v2/payment-form': op({
    id: 'v2/payment-form',
    family: 'v2',
    command: 'payment-form',
    name: 'PAYMENTFORM',
    // Spec is silent. Default: the sale-form checksum (same family and fields as
    // sale-form/preauth-form); switchable to OAuth HMAC-SHA1 per operation.
    auth: 'control',
    allowedAuth: ['control', 'oauth-hmac-sha1'],
    control: SALE_CONTROL,
    fields: { ...ORDER_CUSTOMER, redirect_url: S },
    sendsLogin: false,
    reply: 'async-form-response',
  }),
  'v2/payout-form': op({
    id: 'v2/payout-form',
    family: 'v2',
    command: 'payout-form',
    name: 'PAYOUTFORM',
    // Spec is silent; facts §2.2: "Use OAuth HMAC-SHA1 for authentication".
    auth: 'oauth-hmac-sha1',
    allowedAuth: ['oauth-hmac-sha1', 'oauth-rsa-sha256'],
    fields: {
      client_orderid: S,
      amount: AMOUNT,
      currency: CURRENCY,
      redirect_url: S,
      order_desc: O,
      ipaddress: O,
      purpose: O,
      server_callback_url: O,
      notify_url: O,
    },
    sendsLogin: false,
    reply: 'async-form-response',
  }),
  // ---- v2 OAuth HMAC-SHA1 ------------------------------------------------------------------
  'v2/payout': op({
    id: 'v2/payout',
    family: 'v2',
    command: 'payout',
    name: 'PAYOUT',
    auth: 'oauth-hmac-sha1',
    allowedAuth: HMAC_ONLY,
    fields: { client_orderid: S, amount: AMOUNT, currency: CURRENCY, ...PAYOUT_OPTIONAL },
    sendsLogin: false,
    reply: 'async-response',
  }),
  'v2/pan-eligibility/send': op({
    id: 'v2/pan-eligibility/send',
    family: 'v2',
    command: 'pan-eligibility/send',
    name: 'PAN_ELIGIBILITY_SEND',
    auth: 'oauth-hmac-sha1',
    allowedAuth: HMAC_ONLY,
    fields: { 'client-order-id': S, 'sending-card-ref-id': S },
    sendsLogin: false,
    reply: 'async-response',
  }),
  // ---- v4 OAuth RSA-SHA256 -----------------------------------------------------------------
  'v4/create-card-ref': op({
    id: 'v4/create-card-ref',
    family: 'v4',
    command: 'create-card-ref',
    name: 'CARDREF_V4',
    auth: 'oauth-rsa-sha256',
    allowedAuth: RSA_ONLY,
    fields: REF,
    sendsLogin: true,
    reply: 'create-card-ref-response',
  }),
  'v4/create-recurring-payment': op({
    id: 'v4/create-recurring-payment',
    family: 'v4',
    command: 'create-recurring-payment',
    name: 'CREATE_RP_V4',
    auth: 'oauth-rsa-sha256',
    allowedAuth: RSA_ONLY,
    // Names exactly as documented (facts §7), including the odd `client-orderid`.
    fields: {
      'client-orderid': S,
      period: S,
      interval: S,
      amount: AMOUNT,
      currency: CURRENCY,
      rp_card_type: O,
      order_desc: O,
      'credit-card-number': PAN_OPT,
      cvv2: CVV_OPT,
      'card-printed-name': O,
      'expire-year': EXP_OPT,
      'expire-month': EXP_OPT,
      country: O,
      city: O,
      'zip-code': O,
      address1: O,
      'first-name': O,
      'last-name': O,
      'customer-ip': O,
      email: O,
      cardrefid: O,
      // Not readable in the public doc (facts §7, cut): the names the sandbox takes.
      'start-date': O,
      repeats: O,
      server_callback_url: O,
    },
    sendsLogin: true,
    reply: 'create-recurring-payment-response',
  }),
  'v4/payout-check': op({
    id: 'v4/payout-check',
    family: 'v4',
    command: 'payout-check',
    name: 'PAYOUT_V4_CHECK',
    auth: 'oauth-rsa-sha256',
    allowedAuth: RSA_ONLY,
    fields: { client_orderid: S, amount: AMOUNT, currency: CURRENCY, ...PAYOUT_OPTIONAL },
    sendsLogin: false,
    reply: 'async-response',
  }),
  'v4/payout-pay': op({
    id: 'v4/payout-pay',
    family: 'v4',
    command: 'payout-pay',
    name: 'PAYOUT_V4_PAY',
    auth: 'oauth-rsa-sha256',
    allowedAuth: RSA_ONLY,
    fields: REF,
    sendsLogin: true,
    reply: 'async-response',
  }),
  'v4/transfer': op({
    id: 'v4/transfer',
    family: 'v4',
    command: 'transfer',
    name: 'TRANSFER_V4',
    auth: 'oauth-rsa-sha256',
    allowedAuth: RSA_ONLY,
    fields: {
      client_orderid: S,
      amount: AMOUNT,
      currency: CURRENCY,
      card_printed_name: O,
      card_recurring_payment_id: O,
      credit_card_number: PAN_OPT,
      cvv2: CVV_OPT,
      deposit2card: BOOL_OPT,
      'destination-card-no': PAN_OPT,
      destination_card_recurring_payment_id: O,
      expire_month: EXP_OPT,
      expire_year: EXP_OPT,
      ipaddress: O,
      order_desc: O,
      redirect_url: O,
      server_callback_url: O,
    },
    sendsLogin: false,
    reply: 'async-response',
  }),
  'v4/transfer-by-ref': op({
    id: 'v4/transfer-by-ref',
    family: 'v4',
    command: 'transfer-by-ref',
    name: 'TRANSFER_BY_REF_V4',
    auth: 'oauth-rsa-sha256',
    allowedAuth: RSA_ONLY,
    fields: {
      'client-order-id': S,
      amount: AMOUNT,
      currency: CURRENCY,
      order_desc: O,
      'destination-card-no': PAN_OPT,
    },
    sendsLogin: false,
    reply: 'async-response',
  }),
  'v4/payout': op({
    id: 'v4/payout',
    family: 'v4',
    command: 'payout',
    name: 'PAYOUT_V4',
    auth: 'oauth-rsa-sha256',
    allowedAuth: RSA_ONLY,
    // Spec §4.2 sample uses `client-order-id` (facts: current docs say client_orderid).
    fields: { 'client-order-id': S, amount: AMOUNT, currency: CURRENCY, ...PAYOUT_OPTIONAL },
    sendsLogin: false,
    reply: 'async-response',
  }),
  // ---- 3DS v1 uploads, SHA-1 control -------------------------------------------------------
  '3ds/v1/upload-method-url-result': op({
    id: '3ds/v1/upload-method-url-result',
    family: '3ds/v1',
    command: 'upload-method-url-result',
    name: 'TDS_UPLOAD_METHOD_URL_RESULT',
    auth: 'control',
    allowedAuth: CONTROL_ONLY,
    control: TDS_CONTROL,
    fields: {
      ...TDS_REF,
      threeDSCompInd: S,
      threeDSServerTransID: O,
      browserAcceptHeader: O,
      browserIP: O,
      browserJavaEnabled: O,
      browserJavascriptEnabled: O,
      browserLanguage: O,
      browserColorDepth: O,
      browserScreenHeight: O,
      browserScreenWidth: O,
      browserTZ: O,
      browserUserAgent: O,
    },
    sendsLogin: true,
    reply: 'async-response',
    groupPath: 'plain',
  }),
  '3ds/v1/upload-cres-result': op({
    id: '3ds/v1/upload-cres-result',
    family: '3ds/v1',
    command: 'upload-cres-result',
    name: 'TDS_UPLOAD_CRES_RESULT',
    auth: 'control',
    allowedAuth: CONTROL_ONLY,
    control: TDS_CONTROL,
    fields: { ...TDS_REF, cRes: S },
    sendsLogin: true,
    reply: 'async-response',
    groupPath: 'plain',
  }),
  '3ds/v1/upload-pares-result': op({
    id: '3ds/v1/upload-pares-result',
    family: '3ds/v1',
    command: 'upload-pares-result',
    name: 'TDS_UPLOAD_PARES_RESULT',
    auth: 'control',
    allowedAuth: CONTROL_ONLY,
    control: TDS_CONTROL,
    fields: { ...TDS_REF, PaRes: S },
    sendsLogin: true,
    reply: 'async-response',
    groupPath: 'plain',
  }),
} as const;

export type Operations = typeof OPERATIONS;
export type OperationId = keyof Operations;
export const OPERATION_IDS = Object.keys(OPERATIONS) as OperationId[];

// ---- request typing derived from the catalogue ----------------------------------------------

type ValueOf<S extends FieldSpec> = S['kind'] extends 'amount'
  ? number
  : S['kind'] extends 'boolean'
    ? boolean
    : string;

type RequiredKeys<F extends FieldMap> = {
  [K in keyof F]: F[K]['required'] extends true ? K : never;
}[keyof F];
type OptionalKeys<F extends FieldMap> = Exclude<keyof F, RequiredKeys<F>>;

/**
 * Request fields of an operation. `amount` is an integer number of MINOR units (safe integer
 * ≥ 0); the client formats it to the gateway's decimal string by the currency's exponent.
 * `extra` carries documented-but-uncatalogued fields (e.g. `customer_browser_*`) as strings.
 */
export type RequestFields<F extends FieldMap> = {
  -readonly [K in RequiredKeys<F>]: ValueOf<F[K]>;
} & {
  -readonly [K in OptionalKeys<F>]?: ValueOf<F[K]> | undefined;
} & { extra?: Readonly<Record<string, string>> };

export type RequestOf<Id extends OperationId> = RequestFields<Operations[Id]['fields']>;
export type ReplyKindOf<Id extends OperationId> = Operations[Id]['reply'];

export function getOperation(id: OperationId): OperationDef {
  return OPERATIONS[id];
}
