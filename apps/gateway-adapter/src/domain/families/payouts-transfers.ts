import type {
  Card,
  GatewayPanEligibilityRequest,
  GatewayPayoutCheckRequest,
  GatewayPayoutPayRequest,
  GatewayPayoutRequest,
  GatewayTransferRequest,
} from '@payments/contracts';
import { type RequestOf } from '@payments/payment-gateway';
import { defined, type FamilyRows, plainRow, sealedCardRow, twoCardRow } from '../operation-rows';

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

/**
 * Payouts, transfers and pan-eligibility. One family of three files of one name: the gateway sandbox's
 * handlers and the client catalogue's rows of these operations are in their `families/payouts-transfers.ts`.
 */
export const PAYOUT_TRANSFER_ROWS: FamilyRows<
  | 'payout-check'
  | 'payout'
  | 'payout-v4'
  | 'payout-pay'
  | 'transfer'
  | 'transfer-by-ref'
  | 'pan-eligibility'
> = {
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
  'payout-pay': plainRow('v4/payout-pay', (request: GatewayPayoutPayRequest) => ({
    client_orderid: request.clientOrderId,
    orderid: request.gatewayOrderId,
  })),
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
};
