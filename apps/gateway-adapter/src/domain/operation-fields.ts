import type {
  Card,
  GatewayFollowUpRequest,
  GatewayRequest,
  GatewaySaleRequest,
  GatewayStatusRequest,
} from '@payments/contracts';
import type { RequestOf } from '@payments/payment-gateway';

/** One catalogue call: the operation id and its typed fields. */
export type GatewayCall =
  | { readonly id: 'v2/sale'; readonly fields: RequestOf<'v2/sale'> }
  | { readonly id: 'v2/preauth'; readonly fields: RequestOf<'v2/preauth'> }
  | { readonly id: 'v2/capture'; readonly fields: RequestOf<'v2/capture'> }
  | { readonly id: 'v2/void'; readonly fields: RequestOf<'v2/void'> }
  | { readonly id: 'v2/return'; readonly fields: RequestOf<'v2/return'> }
  | { readonly id: 'v2/status'; readonly fields: RequestOf<'v2/status'> };

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
export function cardPaymentCall(
  request: GatewaySaleRequest,
  card: Card,
  serverCallbackUrl: string,
): GatewayCall {
  const { customer, billingAddress: address, browser } = request;
  const fields = defined({
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
    // The catalogue requires a phone for sale/preauth while the contract makes it optional: an
    // absent one is refused by the client before anything is sent (rejected, client-validation).
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
  return request.operation === 'sale' ? { id: 'v2/sale', fields } : { id: 'v2/preauth', fields };
}

export function followUpCall(request: GatewayFollowUpRequest): GatewayCall {
  const ref = { client_orderid: request.clientOrderId, orderid: request.gatewayOrderId };
  const money = request.amount
    ? { amount: request.amount.minor, currency: request.amount.currency }
    : {};
  switch (request.operation) {
    case 'capture':
      return { id: 'v2/capture', fields: defined({ ...ref, ...money, comment: request.comment }) };
    case 'return':
      return { id: 'v2/return', fields: defined({ ...ref, ...money, comment: request.comment }) };
    case 'void':
      // No partial amount on void (spec §3): the amount, if any, is not sent.
      return {
        id: 'v2/void',
        fields: { ...ref, comment: request.comment ?? DEFAULT_VOID_COMMENT },
      };
  }
}

export function statusCall(request: GatewayStatusRequest): GatewayCall {
  return {
    id: 'v2/status',
    fields: defined({ client_orderid: request.clientOrderId, orderid: request.gatewayOrderId }),
  };
}

/** True for operations that move money: they go through the sent-requests ledger. */
export function isMutating(request: GatewayRequest): boolean {
  return request.operation !== 'status';
}
