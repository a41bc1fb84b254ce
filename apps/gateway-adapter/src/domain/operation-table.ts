import type {
  Card,
  GatewayAccountVerificationFormRequest,
  GatewayAccountVerificationRequest,
  GatewayFollowUpRequest,
  GatewayHostedFormRequest,
  GatewayOperation,
  GatewayUploadCresResultRequest,
  GatewayUploadMethodUrlResultRequest,
  GatewayUploadParesResultRequest,
  GatewayPayoutCheckRequest,
  GatewayPayoutFormRequest,
  GatewayPayoutPayRequest,
  GatewayCardInfoRequest,
  GatewayCardRefRequest,
  GatewayRebillRequest,
  GatewayCreateRecurringPaymentRequest,
  GatewayPayoutRequest,
  GatewayTransferRequest,
  GatewayPanEligibilityRequest,
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

/** Reply kinds the adapter can classify (classify.ts). */
export type ClassifiableReplyKind =
  | 'async-response'
  | 'async-form-response'
  | 'status-response'
  | 'create-card-ref-response'
  | 'get-card-info-response'
  | 'create-recurring-payment-response';

/** Catalogue operations whose replies the adapter can classify. */
export type AdapterOperationId = {
  [K in OperationId]: ReplyKindOf<K> extends ClassifiableReplyKind ? K : never;
}[OperationId];

/**
 * What a call may take from the endpoint besides the request: the `server_callback_url` and how
 * the endpoint signs create-card-ref (v2 control or v4 RSA-SHA256, per endpoint).
 */
export interface CallContext {
  readonly serverCallbackUrl?: string;
  readonly cardRefApi?: 'v2' | 'v4';
}

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
  readonly call: (request: RequestFor<O>, context: CallContext) => GatewayCall;
}

/**
 * A row that sends cards: opened from the request's sealed cards just before signing (one card;
 * a transfer's source and destination).
 */
export interface SealedCardRow<O extends GatewayOperation> {
  readonly needs: 'sealed-card';
  readonly catalogue: AdapterOperationId;
  readonly mutating: boolean;
  /** The sealed cards, in the order `call` takes them opened. */
  readonly sealedCards: (request: RequestFor<O>) => readonly string[];
  readonly call: (
    request: RequestFor<O>,
    cards: readonly Card[],
    serverCallbackUrl: string,
  ) => GatewayCall;
}

/** A row that needs the endpoint's callback URL but no card (hosted forms). */
export interface CallbackRow<O extends GatewayOperation> {
  readonly needs: 'callback-url';
  readonly catalogue: AdapterOperationId;
  readonly mutating: boolean;
  readonly call: (request: RequestFor<O>, serverCallbackUrl: string) => GatewayCall;
}

export type OperationRow<O extends GatewayOperation> =
  PlainRow<O> | SealedCardRow<O> | CallbackRow<O>;

/**
 * `{ id, fields }` typed per operation. TypeScript cannot see that a pair built under a generic
 * `Id` is a member of the union over all ids (correlated generics), hence the one cast here; the
 * signature is what checks each row.
 */
function callOf<Id extends AdapterOperationId>(id: Id, fields: RequestOf<Id>): GatewayCall {
  return { id, fields } as OperationCall;
}

function plainRow<O extends GatewayOperation, Id extends AdapterOperationId>(
  catalogue: Id,
  fields: (request: RequestFor<O>, context: CallContext) => RequestOf<Id>,
): PlainRow<O> {
  return {
    needs: 'nothing',
    catalogue,
    mutating: OPERATIONS[catalogue].mutating,
    call: (request, context) => callOf(catalogue, fields(request, context)),
  };
}

function sealedCardRow<O extends GatewayOperation, Id extends AdapterOperationId>(
  catalogue: Id,
  sealedCard: (request: RequestFor<O>) => string,
  fields: (request: RequestFor<O>, card: Card, serverCallbackUrl: string) => RequestOf<Id>,
): SealedCardRow<O> {
  return twoCardRow(
    catalogue,
    (request) => [sealedCard(request)],
    (request, [card], cb) => fields(request, card, cb),
  );
}

/** A row whose call takes opened cards (`sealedCards` gives them in order). */
function twoCardRow<O extends GatewayOperation, Id extends AdapterOperationId>(
  catalogue: Id,
  sealedCards: (request: RequestFor<O>) => readonly string[],
  fields: (
    request: RequestFor<O>,
    cards: readonly [Card, ...Card[]],
    serverCallbackUrl: string,
  ) => RequestOf<Id>,
): SealedCardRow<O> {
  return {
    needs: 'sealed-card',
    catalogue,
    mutating: OPERATIONS[catalogue].mutating,
    sealedCards,
    call: (request, cards, cb) => {
      const count = sealedCards(request).length;
      if (cards.length !== count || cards.length === 0)
        throw new Error(`${catalogue} takes ${count} opened card(s), got ${cards.length}`);
      return callOf(catalogue, fields(request, cards as readonly [Card, ...Card[]], cb));
    },
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

/** The payer's address and contact fields, common to sales, forms and account verification. */
function payerFields(request: {
  readonly customer: GatewaySaleRequest['customer'];
  readonly billingAddress: GatewaySaleRequest['billingAddress'];
}) {
  const { customer, billingAddress: address } = request;
  return {
    address1: address.address1,
    city: address.city,
    zip_code: address.zipCode,
    country: address.country,
    state: address.state,
    email: customer.email,
    ipaddress: customer.ipAddress,
    first_name: customer.firstName,
    last_name: customer.lastName,
    birthday: customer.birthday,
    ssn: customer.ssnLastFour,
  };
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
  const { customer, browser } = request;
  return defined({
    client_orderid: request.clientOrderId,
    order_desc: request.orderDescription,
    amount: request.amount.minor,
    currency: request.amount.currency,
    ...payerFields(request),
    // The catalogue requires a phone for sale/preauth. Commands without one are rejected by the
    // orchestrator's command parsing (gateway requirements, libs/contracts); a request that still
    // lacks one is refused by the client before anything is sent (rejected, client-validation).
    phone: customer.phone ?? '',
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

/**
 * A payout to the sealed destination card (no CVV: the payee is not present): v4 payout-check,
 * v2 payout and v4 payout share these fields; v4 payout names the order id `client-order-id`.
 */
function payoutFields(
  request: GatewayPayoutCheckRequest | GatewayPayoutRequest,
  card: Card,
  serverCallbackUrl: string,
): Omit<RequestOf<'v4/payout-check'>, 'client_orderid'> {
  return defined({
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

/** make-rebill: the card reference, no card data; callbacks come back to callback-ingest. */
function rebillFields(
  request: GatewayRebillRequest,
  context: CallContext,
): RequestOf<'v2/make-rebill'> {
  return defined({
    client_orderid: request.clientOrderId,
    cardrefid: request.cardRefId,
    amount: request.amount.minor,
    currency: request.amount.currency,
    order_desc: request.orderDescription,
    server_callback_url: context.serverCallbackUrl,
  });
}

/**
 * v4 create-recurring-payment (OAuth RSA-SHA256, signed by the client like every v4 call): the
 * schedule on a card reference, no card data. Field names as documented (facts §7, with the
 * hyphenated `client-orderid`); the schedule's own fields were not readable in the public doc,
 * so `start-date` and `repeats` are the names the sandbox takes. Charges come back to
 * callback-ingest through `server_callback_url`.
 */
function recurringPaymentFields(
  request: GatewayCreateRecurringPaymentRequest,
  context: CallContext,
): RequestOf<'v4/create-recurring-payment'> {
  return defined({
    'client-orderid': request.clientOrderId,
    period: request.period,
    interval: String(request.interval),
    amount: request.amount.minor,
    currency: request.amount.currency,
    order_desc: request.orderDescription,
    cardrefid: request.cardRefId,
    'start-date': request.startDate,
    repeats: request.repeats === undefined ? undefined : String(request.repeats),
    server_callback_url: context.serverCallbackUrl,
  });
}

/** create-card-ref: v2 (control) by default, v4 (RSA-SHA256) where the endpoint says so. */
const cardRefRow: PlainRow<'create-card-ref'> = {
  needs: 'nothing',
  catalogue: 'v2/create-card-ref',
  mutating: OPERATIONS['v2/create-card-ref'].mutating && OPERATIONS['v4/create-card-ref'].mutating,
  call: (request: GatewayCardRefRequest, context) => {
    const fields = { client_orderid: request.clientOrderId, orderid: request.gatewayOrderId };
    return context.cardRefApi === 'v4'
      ? callOf('v4/create-card-ref', fields)
      : callOf('v2/create-card-ref', fields);
  },
};

/** Hosted forms: the order and payer fields; the card is typed on the gateway's page. */
function hostedFormFields(
  request: GatewayHostedFormRequest,
  serverCallbackUrl: string,
): RequestOf<'v2/sale-form'> & RequestOf<'v2/preauth-form'> & RequestOf<'v2/payment-form'> {
  return defined({
    client_orderid: request.clientOrderId,
    order_desc: request.orderDescription,
    amount: request.amount.minor,
    currency: request.amount.currency,
    ...payerFields(request),
    phone: request.customer.phone,
    merchant_data: request.merchantData,
    server_callback_url: serverCallbackUrl,
    redirect_url: request.redirectUrl,
  });
}

/** Account verification's customer fields (no amount: nothing is charged). */
function verificationFields(
  request: GatewayAccountVerificationRequest | GatewayAccountVerificationFormRequest,
  serverCallbackUrl: string,
): Omit<RequestOf<'v2/account-verification-form'>, 'redirect_url'> {
  return defined({
    client_orderid: request.clientOrderId,
    order_desc: request.orderDescription,
    ...payerFields(request),
    phone: request.customer.phone,
    server_callback_url: serverCallbackUrl,
  });
}

/** The 3-D Secure uploads name the order by `client-order-id` and `orderid`. */
const uploadReference = (request: { clientOrderId: string; gatewayOrderId: string }) => ({
  'client-order-id': request.clientOrderId,
  orderid: request.gatewayOrderId,
});

/**
 * Rows whose call needs the callback URL but no card: a plain row cannot know the URL, so these
 * are built per endpoint by {@link hostedRow}.
 */
function hostedRow<O extends GatewayOperation, Id extends AdapterOperationId>(
  catalogue: Id,
  fields: (request: RequestFor<O>, serverCallbackUrl: string) => RequestOf<Id>,
): CallbackRow<O> {
  return {
    needs: 'callback-url',
    catalogue,
    mutating: OPERATIONS[catalogue].mutating,
    call: (request, cb) => callOf(catalogue, fields(request, cb)),
  };
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
    defined({
      client_orderid: request.clientOrderId,
      orderid: request.gatewayOrderId,
      'by-request-sn': request.subjectSerial,
    }),
  ),
  'payout-check': sealedCardRow(
    'v4/payout-check',
    (request: GatewayPayoutCheckRequest) => request.sealedCard,
    (request, card, callbackUrl) => ({
      client_orderid: request.clientOrderId,
      ...payoutFields(request, card, callbackUrl),
    }),
  ),
  payout: sealedCardRow(
    'v2/payout',
    (request: GatewayPayoutRequest) => request.sealedCard,
    (request, card, callbackUrl) => ({
      client_orderid: request.clientOrderId,
      ...payoutFields(request, card, callbackUrl),
    }),
  ),
  // Spec §4.2: v4 payout's sample names the order id `client-order-id`.
  'payout-v4': sealedCardRow(
    'v4/payout',
    (request: GatewayPayoutRequest) => request.sealedCard,
    (request, card, callbackUrl) => ({
      'client-order-id': request.clientOrderId,
      ...payoutFields(request, card, callbackUrl),
    }),
  ),
  // The payee enters the card on the gateway's hosted form: no card passes through us. The
  // callback URL makes the gateway report the final status (facts §6) instead of leaving the
  // outcome to polling alone.
  'payout-form': hostedRow(
    'v2/payout-form',
    (request: GatewayPayoutFormRequest, serverCallbackUrl) =>
      defined({
        client_orderid: request.clientOrderId,
        amount: request.amount.minor,
        currency: request.amount.currency,
        redirect_url: request.redirectUrl,
        order_desc: request.orderDescription,
        purpose: request.purpose,
        server_callback_url: serverCallbackUrl,
      }),
  ),
  // v4 transfer from the source card (with its CVV) to the destination card number.
  transfer: twoCardRow(
    'v4/transfer',
    (request: GatewayTransferRequest) => [request.sealedCard ?? '', request.sealedDestinationCard],
    (request, [source, destination], callbackUrl) =>
      defined({
        client_orderid: request.clientOrderId,
        amount: request.amount.minor,
        currency: request.amount.currency,
        order_desc: request.orderDescription,
        server_callback_url: callbackUrl,
        credit_card_number: source.number,
        cvv2: source.cvv,
        expire_month: String(source.expiryMonth).padStart(2, '0'),
        expire_year: String(source.expiryYear),
        card_printed_name: source.holderName,
        'destination-card-no': destination?.number,
      }),
  ),
  // v4 transfer-by-ref (spec 4.2): client-order-id, amount, currency, order_desc, destination-card-no.
  'transfer-by-ref': sealedCardRow(
    'v4/transfer-by-ref',
    (request: GatewayTransferRequest) => request.sealedDestinationCard,
    (request, destination) =>
      defined({
        'client-order-id': request.clientOrderId,
        amount: request.amount.minor,
        currency: request.amount.currency,
        order_desc: request.orderDescription,
        'destination-card-no': destination.number,
      }),
  ),
  // Spec table: `client-order-id`, `sending-card-ref-id` (a gateway card reference, no card data).
  'pan-eligibility': plainRow(
    'v2/pan-eligibility/send',
    (request: GatewayPanEligibilityRequest) => ({
      'client-order-id': request.clientOrderId,
      'sending-card-ref-id': request.cardRefId,
    }),
  ),
  'payout-pay': plainRow('v4/payout-pay', (request: GatewayPayoutPayRequest) => ({
    client_orderid: request.clientOrderId,
    orderid: request.gatewayOrderId,
  })),
  rebill: plainRow('v2/make-rebill', rebillFields),
  'create-recurring-payment': plainRow('v4/create-recurring-payment', recurringPaymentFields),
  'create-card-ref': cardRefRow,
  'get-card-info': plainRow('v2/get-card-info', (request: GatewayCardInfoRequest) => ({
    cardrefid: request.cardRefId,
  })),
  'sale-form': hostedRow('v2/sale-form', hostedFormFields),
  'preauth-form': hostedRow('v2/preauth-form', hostedFormFields),
  'payment-form': hostedRow('v2/payment-form', hostedFormFields),
  'account-verification': sealedCardRow(
    'v2/account-verification',
    (request: GatewayAccountVerificationRequest) => request.sealedCard,
    (request: GatewayAccountVerificationRequest, card: Card, cb: string) => ({
      ...verificationFields(request, cb),
      ...(request.redirectUrl === undefined ? {} : { redirect_url: request.redirectUrl }),
      card_printed_name: card.holderName,
      credit_card_number: card.number,
      expire_month: String(card.expiryMonth).padStart(2, '0'),
      expire_year: String(card.expiryYear),
      cvv2: card.cvv ?? '',
    }),
  ),
  'account-verification-form': hostedRow(
    'v2/account-verification-form',
    (request: GatewayAccountVerificationFormRequest, cb: string) => ({
      ...verificationFields(request, cb),
      redirect_url: request.redirectUrl,
    }),
  ),
  'upload-method-url-result': plainRow(
    '3ds/v1/upload-method-url-result',
    (request: GatewayUploadMethodUrlResultRequest) => {
      const b = request.browser;
      return defined({
        ...uploadReference(request),
        threeDSCompInd: request.threeDSCompInd,
        threeDSServerTransID: request.threeDSServerTransID,
        browserAcceptHeader: b?.acceptHeader,
        browserUserAgent: b?.userAgent,
        browserLanguage: b?.acceptLanguage,
        browserJavascriptEnabled: b === undefined ? undefined : String(b.javascriptEnabled),
        browserJavaEnabled: b === undefined ? undefined : String(b.javaEnabled),
        browserColorDepth: b === undefined ? undefined : String(b.colorDepth),
        browserScreenWidth: b === undefined ? undefined : String(b.screenWidth),
        browserScreenHeight: b === undefined ? undefined : String(b.screenHeight),
        browserTZ: b === undefined ? undefined : String(b.timeZoneOffsetMinutes),
      });
    },
  ),
  'upload-cres-result': plainRow(
    '3ds/v1/upload-cres-result',
    (request: GatewayUploadCresResultRequest) => ({
      ...uploadReference(request),
      cRes: request.cRes,
    }),
  ),
  'upload-pares-result': plainRow(
    '3ds/v1/upload-pares-result',
    (request: GatewayUploadParesResultRequest) => ({
      ...uploadReference(request),
      PaRes: request.paRes,
    }),
  ),
};

/** What performing one request takes, read from its row (no branch per operation). */
export type CallPlan =
  | {
      readonly needs: 'nothing';
      readonly mutating: boolean;
      readonly call: (context: CallContext) => GatewayCall;
    }
  | {
      readonly needs: 'sealed-card';
      readonly mutating: boolean;
      readonly sealedCards: readonly string[];
      readonly call: (cards: readonly Card[], serverCallbackUrl: string) => GatewayCall;
    }
  | {
      readonly needs: 'callback-url';
      readonly mutating: boolean;
      readonly call: (serverCallbackUrl: string) => GatewayCall;
    };

function planFor<O extends GatewayOperation>(operation: O, request: RequestFor<O>): CallPlan {
  const row: OperationRow<O> = OPERATION_TABLE[operation];
  switch (row.needs) {
    case 'nothing':
      return {
        needs: 'nothing',
        mutating: row.mutating,
        call: (context) => row.call(request, context),
      };
    case 'sealed-card':
      return {
        needs: 'sealed-card',
        mutating: row.mutating,
        sealedCards: row.sealedCards(request),
        call: (cards, serverCallbackUrl) => row.call(request, cards, serverCallbackUrl),
      };
    case 'callback-url':
      return {
        needs: 'callback-url',
        mutating: row.mutating,
        call: (serverCallbackUrl) => row.call(request, serverCallbackUrl),
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
  return plan.call([card], serverCallbackUrl);
}

/** The call of a request that needs nothing besides itself (capture, void, return, status). */
function plainCall(request: GatewayFollowUpRequest | GatewayStatusRequest): GatewayCall {
  const plan = planCall(request);
  if (plan.needs !== 'nothing') throw new Error(`${request.operation} needs a card`);
  return plan.call({});
}

export const followUpCall: (request: GatewayFollowUpRequest) => GatewayCall = plainCall;
export const statusCall: (request: GatewayStatusRequest) => GatewayCall = plainCall;

/** True for operations that move money: they go through the sent-requests ledger. */
export function isMutating(request: GatewayRequest): boolean {
  return OPERATION_TABLE[request.operation].mutating;
}
