import { OAuthMethod } from './oauth';

/**
 * The 27 operations of the gateway (spec §4 table and §4.2) with the authentication scheme each
 * one uses. `control` formulas are listed as the request fields to concatenate; two pseudo-fields
 * stand for values that are not plain request fields: `@endpoint` (the endpoint or endpoint-group
 * id from the path) and `@amount` (the request amount in minor units).
 */
export type OperationName =
  | 'TDS_UPLOAD_CRES_RESULT'
  | 'TDS_UPLOAD_METHOD_URL_RESULT'
  | 'TDS_UPLOAD_PARES_RESULT'
  | 'ACCOUNT_VERIFICATION_FORM'
  | 'ACCOUNT_VERIFICATION'
  | 'CAPTURE'
  | 'CARDREF'
  | 'CARDINFO'
  | 'REBILL'
  | 'PAYMENTFORM'
  | 'PAYOUTFORM'
  | 'PAYOUT'
  | 'PREAUTHFORM'
  | 'PREAUTH'
  | 'RETURN'
  | 'SALEFORM'
  | 'SALE'
  | 'STATUS'
  | 'VOID'
  | 'CARDREF_V4'
  | 'CREATE_RP_V4'
  | 'PAYOUT_V4_CHECK'
  | 'PAYOUT_V4_PAY'
  | 'PAN_ELIGIBILITY_SEND'
  | 'TRANSFER_V4'
  | 'TRANSFER_BY_REF_V4'
  | 'PAYOUT_V4';

/** A request field name, or one of the pseudo-fields `@endpoint` and `@amount`. */
export type ControlPart = string;

export type AuthScheme =
  | { readonly kind: 'control'; readonly parts: readonly ControlPart[] }
  | { readonly kind: 'oauth'; readonly method: OAuthMethod };

export interface OperationDef {
  readonly name: OperationName;
  /** Path after `/api/`, without the endpoint id, e.g. `v2/sale`. */
  readonly path: string;
  readonly auth: AuthScheme;
}

const control = (...parts: ControlPart[]): AuthScheme => ({ kind: 'control', parts });
const HMAC: AuthScheme = { kind: 'oauth', method: 'HMAC-SHA1' };
const RSA: AuthScheme = { kind: 'oauth', method: 'RSA-SHA256' };

const PAYMENT = control('@endpoint', 'client_orderid', '@amount', 'email');
const VERIFY = control('@endpoint', 'client_orderid', 'email');
const TDS = control('login', 'client-order-id', 'orderid');

export const OPERATIONS: readonly OperationDef[] = [
  { name: 'TDS_UPLOAD_CRES_RESULT', path: '3ds/v1/upload-cres-result', auth: TDS },
  { name: 'TDS_UPLOAD_METHOD_URL_RESULT', path: '3ds/v1/upload-method-url-result', auth: TDS },
  { name: 'TDS_UPLOAD_PARES_RESULT', path: '3ds/v1/upload-pares-result', auth: TDS },
  { name: 'ACCOUNT_VERIFICATION_FORM', path: 'v2/account-verification-form', auth: VERIFY },
  { name: 'ACCOUNT_VERIFICATION', path: 'v2/account-verification', auth: VERIFY },
  {
    name: 'CAPTURE',
    path: 'v2/capture',
    auth: control('login', 'client_orderid', 'orderid', '@amount', 'currency'),
  },
  {
    name: 'CARDREF',
    path: 'v2/create-card-ref',
    auth: control('login', 'client_orderid', 'orderid'),
  },
  // Spec: "no control formula is given"; facts §2.1: login + cardrefid.
  { name: 'CARDINFO', path: 'v2/get-card-info', auth: control('login', 'cardrefid') },
  {
    name: 'REBILL',
    path: 'v2/make-rebill',
    auth: control('login', 'client_orderid', 'cardrefid', '@amount', 'currency'),
  },
  // Spec: "no control formula is given"; decided: the sale-form formula (README, decisions).
  { name: 'PAYMENTFORM', path: 'v2/payment-form', auth: PAYMENT },
  // Spec: "no control formula is given"; facts §2.2: "Use OAuth HMAC-SHA1".
  { name: 'PAYOUTFORM', path: 'v2/payout-form', auth: HMAC },
  { name: 'PAYOUT', path: 'v2/payout', auth: HMAC },
  { name: 'PREAUTHFORM', path: 'v2/preauth-form', auth: PAYMENT },
  { name: 'PREAUTH', path: 'v2/preauth', auth: PAYMENT },
  {
    name: 'RETURN',
    path: 'v2/return',
    auth: control('login', 'client_orderid', 'orderid', '@amount', 'currency'),
  },
  { name: 'SALEFORM', path: 'v2/sale-form', auth: PAYMENT },
  { name: 'SALE', path: 'v2/sale', auth: PAYMENT },
  { name: 'STATUS', path: 'v2/status', auth: control('login', 'client_orderid', 'orderid') },
  { name: 'VOID', path: 'v2/void', auth: control('login', 'client_orderid', 'orderid') },
  { name: 'CARDREF_V4', path: 'v4/create-card-ref', auth: RSA },
  { name: 'CREATE_RP_V4', path: 'v4/create-recurring-payment', auth: RSA },
  { name: 'PAYOUT_V4_CHECK', path: 'v4/payout-check', auth: RSA },
  { name: 'PAYOUT_V4_PAY', path: 'v4/payout-pay', auth: RSA },
  { name: 'PAN_ELIGIBILITY_SEND', path: 'v2/pan-eligibility/send', auth: HMAC },
  { name: 'TRANSFER_V4', path: 'v4/transfer', auth: RSA },
  { name: 'TRANSFER_BY_REF_V4', path: 'v4/transfer-by-ref', auth: RSA },
  { name: 'PAYOUT_V4', path: 'v4/payout', auth: RSA },
];

const BY_PATH = new Map(OPERATIONS.map((op) => [op.path, op]));

export interface RoutedPath {
  readonly operation: OperationDef;
  /** Endpoint id, or endpoint-group id when `group` is true. */
  readonly id: string;
  readonly group: boolean;
  /** Everything before `/api/` (e.g. `/paynet`), kept for building URLs. */
  readonly prefix: string;
}

/**
 * `[/<prefix>]/api/<operation path>/[group/]<id>` → the operation. The prefix is any run of path
 * segments before `/api/` (the real gateway lives under `/paynet`). The 3DS uploads also accept
 * a group id without the `group/` segment (facts §1), which the registry resolves.
 */
export function routePath(pathname: string): RoutedPath | undefined {
  const at = pathname.indexOf('/api/');
  if (at === -1) return undefined;
  const prefix = pathname.slice(0, at);
  const segments = pathname
    .slice(at + '/api/'.length)
    .split('/')
    .filter((s, i, all) => s !== '' || i < all.length - 1);
  if (segments.some((s) => s === '')) return undefined;
  const id = segments.pop();
  if (id === undefined || segments.length === 0) return undefined;
  const group = segments[segments.length - 1] === 'group';
  if (group) {
    const operation = BY_PATH.get(segments.slice(0, -1).join('/'));
    if (operation) return { operation, id, group: true, prefix };
  }
  const operation = BY_PATH.get(segments.join('/'));
  return operation ? { operation, id, group: false, prefix } : undefined;
}
