import { callbackControl } from '../../control';
import { CardInput, Fields, Refusal, opt, optUrl, reqCard, reqEmail, reqUrl } from '../../fields';
import { maskPan } from '../../luhn';
import { formatMinor } from '../../money';
import { autoPostPage, hostedCardPage, messagePage } from '../../pages';
import { EngineRequest, Hosted, Operation, Order, PageResult, Reply, TYPE_OF } from '../model';
import { OrderStore } from '../order-store';
import { html } from '../replies';
import { orderTerms, payerAbsent, payerPresent } from '../requests';

/**
 * Hosted forms (sale-form, preauth-form, payment-form, account-verification-form, payout-form):
 * the order waits for the payer on the sandbox's card page, then goes on as a card payment (or,
 * for a payout, to the card entered as destination).
 */

export function formPayment(
  s: OrderStore,
  r: EngineRequest,
  kind: 'sale' | 'preauth' | 'account-verification' | 'payout',
): Reply {
  const f = r.fields;
  const { clientOrderId, currency, amount } = orderTerms(r, kind === 'account-verification');
  const email = kind === 'payout' ? opt(f, 'email') : reqEmail(f);
  const redirectUrl = reqUrl(f, 'redirect_url');
  const callbackUrl = optUrl(f, 'server_callback_url');
  const request = {
    kind,
    clientOrderId,
    amountMinor: amount,
    currency,
    identity: [amount, currency],
    email,
    redirectUrl,
    callbackUrl,
  };
  return s.open(r, request, (order) => {
    const op = s.addOp(order, TYPE_OF[kind], amount);
    op.dueAt = undefined; // waits for the payer on the hosted page
    order.forced = r.forced;
    const token = s.token();
    order.hosted = { token, destination: kind === 'payout', submitted: false };
    s.byToken.set(token, order);
    return {
      op,
      extra: { 'redirect-url': `${r.baseUrl}/hpp/${token}` },
      type: 'async-form-response',
    };
  });
}

export function hostedPage(s: OrderStore, token: string): PageResult {
  const page = openHostedPage(s, token);
  return 'kind' in page ? page : html(200, hostedForm(page.order));
}

export function hostedSubmit(s: OrderStore, token: string, fields: Fields): PageResult {
  const page = openHostedPage(s, token);
  if ('kind' in page) return page;
  const { order, hosted } = page;
  let card: CardInput;
  try {
    card = reqCard(fields, s.clock.now(), !hosted.destination);
  } catch (error) {
    if (error instanceof Refusal) return html(400, hostedForm(order, error.message));
    throw error;
  }
  hosted.submitted = true;
  order.card = s.summarize(card);
  if (hosted.destination) order.destination = maskPan(card.pan);
  const op = s.last(order);
  // A payout's destination card has no CVV to decide by.
  const decision = hosted.destination
    ? payerAbsent(order.forced, undefined)
    : payerPresent(order.forced, card.cvv, order.endpoint.threeDSecure);
  if (decision.kind === 'challenge') {
    s.startThreeDS(order, op, true);
    return { kind: 'redirect', location: `${order.baseUrl}/acs/${order.threeDS?.token ?? ''}` };
  }
  s.finish(order, op, decision.result);
  return html(200, returnToMerchant(order, op));
}

/** The signed POST back to redirect_url (facts §5): status, orderid, merchant_order, control. */
export function returnToMerchant(order: Order, op: Operation): string {
  const key = order.endpoint.merchant.controlKey;
  const fields = {
    status: op.status,
    orderid: order.orderId,
    merchant_order: order.clientOrderId,
    client_orderid: order.clientOrderId,
    control: callbackControl(op.status, order.orderId, order.clientOrderId, key),
  };
  if (!order.redirectUrl) return messagePage('Finished', `Payment ${op.status}.`);
  return autoPostPage('Returning to the merchant', order.redirectUrl, fields);
}

/** The order behind a hosted page not yet submitted, or the page that says why there is none. */
function openHostedPage(
  s: OrderStore,
  token: string,
): { order: Order; hosted: Hosted } | PageResult {
  const order = s.byToken.get(token);
  const hosted = order?.hosted;
  if (!order || !hosted) {
    return html(404, messagePage('Not found', 'Unknown or expired payment page.'));
  }
  if (hosted.submitted) {
    return html(409, messagePage('Already submitted', 'This payment page was already used.'));
  }
  return { order, hosted };
}

function hostedForm(order: Order, error?: string): string {
  const destination = order.hosted?.destination ?? false;
  return hostedCardPage({
    action: `${order.baseUrl}/hpp/${order.hosted?.token ?? ''}`,
    title: destination ? 'Sandbox payout' : 'Sandbox payment',
    merchantOrder: order.clientOrderId,
    amount: formatMinor(order.amountMinor, order.currency, order.endpoint.amountExponent),
    currency: order.currency,
    destination,
    error,
  });
}
