import { callbackControl } from '../control';
import { Movement } from '../ledger';
import { formatMinor } from '../money';
import { OpType, Operation, Order } from './model';

/**
 * What an approved operation does to its order, as pure functions the order store applies: the
 * ledger movements, the order's money figures, and the callback that tells the merchant.
 */

/** Money moved when an operation is approved. Pure: returns the movements and the new figures. */
export function movementsOnApproval(order: Order, op: Operation): Array<[Movement, number]> {
  switch (op.type) {
    case 'sale':
      return [['charged', op.amountMinor]];
    case 'preauth':
      return [['authorized', op.amountMinor]];
    case 'capture': {
      const rest = order.authorizedMinor - op.amountMinor;
      return rest > 0
        ? [
            ['captured', op.amountMinor],
            ['released', rest],
          ]
        : [['captured', op.amountMinor]];
    }
    case 'void':
      return order.holdOpen
        ? [['released', order.authorizedMinor]]
        : [['voided', order.capturedMinor]];
    case 'return':
      return order.holdOpen
        ? [['released', order.authorizedMinor]]
        : [['refunded', op.amountMinor]];
    case 'payout':
      return [['paid-out', op.amountMinor]];
    case 'transfer':
      return [['transferred', op.amountMinor]];
    case 'account-verification':
    case 'payout-check':
    case 'pan-eligibility':
      return [];
  }
}

/** The order's money figures after an approved operation. */
export function evolveOnApproval(
  order: Order,
  op: Operation,
  now: number,
  settlementDelayMs: number,
): void {
  switch (op.type) {
    case 'sale':
      order.capturedMinor = op.amountMinor;
      order.settleAt = now + settlementDelayMs;
      return;
    case 'preauth':
      order.authorizedMinor = op.amountMinor;
      order.holdOpen = true;
      return;
    case 'capture':
      order.capturedMinor = op.amountMinor;
      order.holdOpen = false;
      order.settleAt = now + settlementDelayMs;
      return;
    case 'void':
      if (order.holdOpen) order.holdOpen = false;
      else order.voided = true;
      return;
    case 'return':
      if (order.holdOpen) order.holdOpen = false;
      else order.refundedMinor += op.amountMinor;
      return;
    case 'payout':
    case 'transfer':
    case 'account-verification':
    case 'payout-check':
    case 'pan-eligibility':
      return;
  }
}

/** The fields of the callback about an operation's final status (signed with the control key). */
export function callbackParams(order: Order, op: Operation): Record<string, string> {
  const merchant = order.endpoint.merchant;
  const status = op.status;
  const params: Record<string, string> = {
    status,
    merchant_order: order.clientOrderId,
    client_orderid: order.clientOrderId,
    orderid: order.orderId,
    type: callbackType(op.type),
    amount: formatMinor(op.amountMinor, order.currency, order.endpoint.amountExponent),
    currency: order.currency,
    control: callbackControl(status, order.orderId, order.clientOrderId, merchant.controlKey),
  };
  const result = op.result;
  if (result?.errorMessage) params.error_message = result.errorMessage;
  if (result?.errorCode !== undefined) params.error_code = String(result.errorCode);
  if (op.approvalCode) params['approval-code'] = op.approvalCode;
  if (order.card) {
    params['last-four-digits'] = order.card.lastFour;
    params.bin = order.card.bin;
    if (order.card.brand) params['card-type'] = order.card.brand;
    if (order.card.holder) params.name = order.card.holder;
  }
  if (order.email) params.email = order.email;
  if (order.merchantData) params.merchantdata = order.merchantData;
  params.descriptor = 'sandbox';
  return params;
}

function callbackType(type: OpType): string {
  return type === 'return' ? 'reversal' : type;
}
