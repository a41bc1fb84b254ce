import type {
  GatewayCardInfoRequest,
  GatewayCardRefRequest,
  GatewayCreateRecurringPaymentRequest,
  GatewayRebillRequest,
} from '@payments/contracts';
import { OPERATIONS, type RequestOf } from '@payments/payment-gateway';
import {
  type CallContext,
  callOf,
  defined,
  type FamilyRows,
  plainRow,
  type PlainRow,
} from '../operation-rows';

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

/**
 * Card references and recurring payments. One family of three files of one name: the gateway sandbox's
 * handlers and the client catalogue's rows of these operations are in their `families/card-refs-recurring.ts`.
 */
export const CARD_REF_RECURRING_ROWS: FamilyRows<
  'create-card-ref' | 'get-card-info' | 'rebill' | 'create-recurring-payment'
> = {
  'create-card-ref': cardRefRow,
  'get-card-info': plainRow('v2/get-card-info', (request: GatewayCardInfoRequest) => ({
    cardrefid: request.cardRefId,
  })),
  rebill: plainRow('v2/make-rebill', rebillFields),
  'create-recurring-payment': plainRow('v4/create-recurring-payment', recurringPaymentFields),
};
