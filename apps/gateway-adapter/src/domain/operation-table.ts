import type {
  Card,
  GatewayFollowUpRequest,
  GatewayOperation,
  GatewayPayoutCheckRequest,
  GatewayPayoutPayRequest,
  GatewayRequest,
  GatewaySaleRequest,
  GatewayStatusRequest,
} from '@payments/contracts';
import {
  OPERATIONS,
  type OperationCall,
  type OperationId,
  type ReplyKindOf,
  type RequestOf,
} from '@payments/payment-gateway';

/**
 * The adapter's operation table: for each contract operation (`GatewayRequest.operation`) the
 * catalogue operation it is performed with, its field builder, whether it sends the sealed card
 * and whether it mutates (then it goes through the at-most-once sent-requests ledger). The
 * service looks a request up here and has no branch per operation; adding an operation is
 * adding a row (README "Adding an operation").
 */

/** Catalogue operations whose replies the adapter can classify (classify.ts). */
export type AdapterOperationId = {
  [K in OperationId]: ReplyKindOf<K> extends 'async-response' | 'status-response' ? K : never;
}[OperationId];

/** One catalogue call: the operation id and its typed fields. */
export type GatewayCall = OperationCall<AdapterOperationId>;

/** The request of one contract operation. */
export type RequestFor<O extends GatewayOperation> = GatewayRequest & { readonly operation: O };

/** A row whose call needs nothing but the request. */
export interface PlainRow<O extends GatewayOperation> {
  readonly needs: 'nothing';
  readonly catalogue: AdapterOperationId;
  /** From the catalogue (`OPERATIONS[catalogue].mutating`): ledger row before the call. */
  readonly mutating: boolean;
  readonly call: (request: RequestFor<O>) => GatewayCall;
}

/** A row that sends a card: opened from the request's sealed card just before signing. */
export interface SealedCardRow<O extends GatewayOperation> {
  readonly needs: 'sealed-card';
  readonly catalogue: AdapterOperationId;
  readonly mutating: boolean;
  readonly sealedCard: (request: RequestFor<O>) => string;
  readonly call: (request: RequestFor<O>, card: Card, serverCallbackUrl: string) => GatewayCall;
}

export type OperationRow<O extends GatewayOperation> = PlainRow<O> | SealedCardRow<O>;

/**
 * `{ id, fields }` typed per operation. TypeScript cannot see that a pair built under a generic
 * `Id` is a member of the union over all ids (correlated generics), hence the one cast here; the
 * signature is what checks each row.
 */
function callOf<Id extends AdapterOperationId>(id: Id, fields: RequestOf<Id>): GatewayCall {
  return { id, fields } as OperationCall as GatewayCall;
}

function plainRow<O extends GatewayOperation, Id extends AdapterOperationId>(
  catalogue: Id,
  fields: (request: RequestFor<O>) => RequestOf<Id>,
): PlainRow<O> {
  return {
    needs: 'nothing',
    catalogue,
    mutating: OPERATIONS[catalogue].mutating,
    call: (request) => callOf(catalogue, fields(request)),
  };
}

function sealedCardRow<O extends GatewayOperation, Id extends AdapterOperationId>(
  catalogue: Id,
  sealedCard: (request: RequestFor<O>) => string,
  fields: (request: RequestFor<O>, card: Card, serverCallbackUrl: string) => RequestOf<Id>,
): SealedCardRow<O> {
  return {
    needs: 'sealed-card',
    catalogue,
    mutating: OPERATIONS[catalogue].mutating,
    sealedCard,
    call: (request, card, cb) => callOf(catalogue, fields(request, card, cb)),
  };
}

/** `server_callback_url` for an endpoint: `<CALLBACK_BASE_URL>/callbacks/gateway/<endpointId>`. */
export function callbackUrl(callbackBaseUrl: string, endpointId: string): string {
  return `${callbackBaseUrl.replace(/\/+$/, '')}/callbacks/gateway/${encodeURIComponent(endpointId)}`;
}

/** Void requires a comment at the gateway; the contract makes it optional. */
export const DEFAULT_VOID_COMMENT = 'void';

function defined<T extends Record<string, unknown>>(o: T): T {
  for (const key of Object.keys(o)) if (o[key] === undefined) delete o[key];
  return o;
}

/**
 * Sale / preauth fields. `amount` stays in integer minor units: the client formats it to the
 * gateway's decimal string by the currency's exponent. The card is in clear only inside the
 * returned object, which lives until the call is signed and sent.
 */
function cardPaymentFields(
  request: GatewaySaleRequest,
  card: Card,
  serverCallbackUrl: string,
): RequestOf<'v2/sale'> & RequestOf<'v2/preauth'> {
  const { customer, billingAddress: address, browser } = request;
  return defined({
    client_orderid: request.clientOrderId,
    order_desc: request.orderDescription,
    amount: request.amount.minor,
    currency: request.amount.currency,
    address1: address.address1,
    city: address.city,
    zip_code: address.zipCode,
    country: address.country,
    state: address.state,
    email: customer.email,
    ipaddress: customer.ipAddress,
    // The catalogue requires a phone for sale/preauth. Commands without one are rejected by the
    // orchestrator's command parsing (gateway requirements, libs/contracts); a request that still
    // lacks one is refused by the client before anything is sent (rejected, client-validation).
    phone: customer.phone ?? '',
    first_name: customer.firstName,
    last_name: customer.lastName,
    birthday: customer.birthday,
    ssn: customer.ssnLastFour,
    merchant_data: request.merchantData,
    server_callback_url: serverCallbackUrl,
    redirect_url: request.redirectUrl,
    card_printed_name: card.holderName,
    credit_card_number: card.number,
    expire_month: String(card.expiryMonth).padStart(2, '0'),
    expire_year: String(card.expiryYear),
    cvv2: card.cvv ?? '',
    extra: browser
      ? {
          customer_browser_info: 'true',
          customer_browser_accept_header: browser.acceptHeader,
          customer_browser_user_agent: browser.userAgent,
          customer_browser_accept_language: browser.acceptLanguage,
          customer_browser_javascript_enabled: String(browser.javascriptEnabled),
          customer_browser_java_enabled: String(browser.javaEnabled),
          customer_browser_color_depth: String(browser.colorDepth),
          customer_browser_screen_width: String(browser.screenWidth),
          customer_browser_screen_height: String(browser.screenHeight),
          customer_browser_time_zone: String(browser.timeZoneOffsetMinutes),
        }
      : undefined,
  });
}

const reference = (request: GatewayFollowUpRequest) => ({
  client_orderid: request.clientOrderId,
  orderid: request.gatewayOrderId,
});

/** Capture / return: absent amount = the whole amount, so amount and currency are left out. */
const referenceAndMoney = (request: GatewayFollowUpRequest) =>
  defined({
    ...reference(request),
    ...(request.amount ? { amount: request.amount.minor, currency: request.amount.currency } : {}),
    comment: request.comment,
  });

const sealedCardOf = (request: GatewaySaleRequest): string => request.sealedCard;

/** v4 payout-check to the sealed destination card (no CVV: the payee is not present). */
function payoutCheckFields(
  request: GatewayPayoutCheckRequest,
  card: Card,
  serverCallbackUrl: string,
): RequestOf<'v4/payout-check'> {
  return defined({
    client_orderid: request.clientOrderId,
    amount: request.amount.minor,
    currency: request.amount.currency,
    order_desc: request.orderDescription,
    purpose: request.purpose,
    server_callback_url: serverCallbackUrl,
    credit_card_number: card.number,
    expire_month: String(card.expiryMonth).padStart(2, '0'),
    expire_year: String(card.expiryYear),
    card_printed_name: card.holderName,
  });
}

export const OPERATION_TABLE: { readonly [O in GatewayOperation]: OperationRow<O> } = {
  sale: sealedCardRow('v2/sale', sealedCardOf, cardPaymentFields),
  preauth: sealedCardRow('v2/preauth', sealedCardOf, cardPaymentFields),
  capture: plainRow('v2/capture', referenceAndMoney),
  // No partial amount on void (spec §3): the amount, if any, is not sent.
  void: plainRow('v2/void', (request: GatewayFollowUpRequest) => ({
    ...reference(request),
    comment: request.comment ?? DEFAULT_VOID_COMMENT,
  })),
  return: plainRow('v2/return', referenceAndMoney),
  status: plainRow('v2/status', (request: GatewayStatusRequest) =>
    defined({ client_orderid: request.clientOrderId, orderid: request.gatewayOrderId }),
  ),
  'payout-check': sealedCardRow(
    'v4/payout-check',
    (request: GatewayPayoutCheckRequest) => request.sealedCard,
    payoutCheckFields,
  ),
  'payout-pay': plainRow('v4/payout-pay', (request: GatewayPayoutPayRequest) => ({
    client_orderid: request.clientOrderId,
    orderid: request.gatewayOrderId,
  })),
};

/** What performing one request takes, read from its row (no branch per operation). */
export type CallPlan =
  | { readonly needs: 'nothing'; readonly mutating: boolean; readonly call: GatewayCall }
  | {
      readonly needs: 'sealed-card';
      readonly mutating: boolean;
      readonly sealedCard: string;
      readonly call: (card: Card, serverCallbackUrl: string) => GatewayCall;
    };

function planFor<O extends GatewayOperation>(operation: O, request: RequestFor<O>): CallPlan {
  const row: OperationRow<O> = OPERATION_TABLE[operation];
  switch (row.needs) {
    case 'nothing':
      return { needs: 'nothing', mutating: row.mutating, call: row.call(request) };
    case 'sealed-card':
      return {
        needs: 'sealed-card',
        mutating: row.mutating,
        sealedCard: row.sealedCard(request),
        call: (card, serverCallbackUrl) => row.call(request, card, serverCallbackUrl),
      };
    default: {
      const never: never = row;
      return never;
    }
  }
}

/** Looks the request's operation up in {@link OPERATION_TABLE}. */
export function planCall(request: GatewayRequest): CallPlan {
  return planFor(request.operation, request);
}

/** The sale/preauth call of a request whose card is already opened (tests, readability). */
export function cardPaymentCall(
  request: GatewaySaleRequest,
  card: Card,
  serverCallbackUrl: string,
): GatewayCall {
  const plan = planCall(request);
  if (plan.needs !== 'sealed-card') throw new Error(`${request.operation} sends no card`);
  return plan.call(card, serverCallbackUrl);
}

/** The call of a request that needs nothing besides itself (capture, void, return, status). */
function plainCall(request: GatewayFollowUpRequest | GatewayStatusRequest): GatewayCall {
  const plan = planCall(request);
  if (plan.needs !== 'nothing') throw new Error(`${request.operation} needs a card`);
  return plan.call;
}

export const followUpCall: (request: GatewayFollowUpRequest) => GatewayCall = plainCall;
export const statusCall: (request: GatewayStatusRequest) => GatewayCall = plainCall;

/** True for operations that move money: they go through the sent-requests ledger. */
export function isMutating(request: GatewayRequest): boolean {
  return OPERATION_TABLE[request.operation].mutating;
}
