import type {
  GatewayAccountVerificationFormRequest,
  GatewayHostedFormRequest,
  GatewayPayoutFormRequest,
} from '@payments/contracts';
import { type RequestOf } from '@payments/payment-gateway';
import { defined, type FamilyRows, hostedRow, payerFields } from '../operation-rows';
import { verificationFields } from './card-payments';

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

/**
 * Hosted forms: the card is typed on the gateway's page, none passes through us. One family of three files of one name: the gateway sandbox's
 * handlers and the client catalogue's rows of these operations are in their `families/hosted-forms.ts`.
 */
export const HOSTED_FORM_ROWS: FamilyRows<
  'sale-form' | 'preauth-form' | 'payment-form' | 'account-verification-form' | 'payout-form'
> = {
  'sale-form': hostedRow('v2/sale-form', hostedFormFields),
  'preauth-form': hostedRow('v2/preauth-form', hostedFormFields),
  'payment-form': hostedRow('v2/payment-form', hostedFormFields),
  'account-verification-form': hostedRow(
    'v2/account-verification-form',
    (request: GatewayAccountVerificationFormRequest, cb: string) => ({
      ...verificationFields(request, cb),
      redirect_url: request.redirectUrl,
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
};
