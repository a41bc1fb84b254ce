import type {
  Card,
  GatewayAccountVerificationFormRequest,
  GatewayAccountVerificationRequest,
  GatewaySaleRequest,
} from '@payments/contracts';
import { type RequestOf } from '@payments/payment-gateway';
import { defined, type FamilyRows, payerFields, sealedCardRow } from '../operation-rows';

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

const sealedCardOf = (request: GatewaySaleRequest): string => request.sealedCard;

/** Account verification's customer fields (no amount: nothing is charged). */
export function verificationFields(
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

/**
 * Card payments with the card: sale, preauth, account verification. One family of three files of one name: the gateway sandbox's
 * handlers and the client catalogue's rows of these operations are in their `families/card-payments.ts`.
 */
export const CARD_PAYMENT_ROWS: FamilyRows<'sale' | 'preauth' | 'account-verification'> = {
  sale: sealedCardRow('v2/sale', sealedCardOf, cardPaymentFields),
  preauth: sealedCardRow('v2/preauth', sealedCardOf, cardPaymentFields),
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
};
