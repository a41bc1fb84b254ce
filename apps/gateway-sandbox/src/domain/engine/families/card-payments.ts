import { optUrl, reqCard, reqCustomer, reqEmail, reqUrl } from '../../fields';
import { EngineRequest, Reply, TYPE_OF } from '../model';
import { Opened, OrderStore } from '../order-store';
import { orderTerms, payerPresent } from '../requests';

/** Card payments with the payer at the card: sale, preauth and account verification. */
export function cardPayment(
  s: OrderStore,
  r: EngineRequest,
  kind: 'sale' | 'preauth' | 'account-verification',
): Reply {
  const f = r.fields;
  const { clientOrderId, currency, amount } = orderTerms(r, kind === 'account-verification');
  const email = reqEmail(f);
  if (s.settings.requireCustomerFields) reqCustomer(f);
  const card = reqCard(f, s.clock.now(), true);
  const redirectUrl = s.settings.requireCustomerFields
    ? reqUrl(f, 'redirect_url')
    : optUrl(f, 'redirect_url');
  const callbackUrl = optUrl(f, 'server_callback_url');
  const request = {
    kind,
    clientOrderId,
    amountMinor: amount,
    currency,
    identity: [amount, currency, card.pan.slice(-4)],
    email,
    redirectUrl,
    callbackUrl,
  };
  return s.open(r, { ...request, card: s.summarize(card) }, (order): Opened => ({
    op: s.submit(
      r,
      order,
      TYPE_OF[kind],
      amount,
      payerPresent(r.forced, card.cvv, r.endpoint.threeDSecure),
    ),
    // The JSON type quirk (facts §1): a sale reply carries paynet-order-id as a number.
    extra: r.op === 'SALE' ? { 'paynet-order-id': Number(order.orderId) } : {},
  }));
}
