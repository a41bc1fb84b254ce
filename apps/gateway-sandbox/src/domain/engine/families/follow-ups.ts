import { Fields, Refusal, opt, optAmount, req, reqAmount } from '../../fields';
import { EngineRequest, Order, Reply } from '../model';
import { OrderStore } from '../order-store';

/** Operations on an existing order: capture, void, return (reversal). */

export function capture(s: OrderStore, r: EngineRequest): Reply {
  const order = s.referenced(r);
  const { amount, partial } = optPartialAmount(r.fields, order);
  if (order.kind !== 'preauth') throw new Refusal('capture needs an order authorized by preauth');
  s.requireIdle(order);
  if (!order.holdOpen) {
    throw new Refusal(
      order.capturedMinor > 0
        ? 'the authorization has already been captured'
        : 'the order is not an approved, open authorization',
    );
  }
  const minor = partial ? amount : order.authorizedMinor;
  if (minor <= 0) throw new Refusal('amount must be greater than zero');
  if (minor > order.authorizedMinor) {
    throw new Refusal('capture amount exceeds the authorized amount');
  }
  return s.followUp(r, order, 'capture', minor);
}

export function voidOrder(s: OrderStore, r: EngineRequest): Reply {
  const order = s.referenced(r);
  // DOC-V2-VOID marks `comment` (≤ 50) required.
  if (s.settings.requireCustomerFields) req(r.fields, 'comment', 50);
  s.requireIdle(order);
  const amountText = opt(r.fields, 'amount');
  if (amountText !== undefined) {
    const minor = optAmount(r.fields, order.currency, order.endpoint.amountExponent) ?? 0;
    const full = order.holdOpen ? order.authorizedMinor : order.capturedMinor;
    if (minor !== full) throw new Refusal('void does not support a partial amount');
  }
  const now = s.clock.now();
  const voidable =
    order.holdOpen ||
    (order.capturedMinor > 0 &&
      order.refundedMinor === 0 &&
      !order.voided &&
      order.settleAt !== undefined &&
      now < order.settleAt);
  if (!voidable) {
    throw new Refusal(
      order.capturedMinor > 0 && order.settleAt !== undefined && now >= order.settleAt
        ? 'the transaction is settled and can no longer be voided; use return'
        : 'void needs an authorized transaction that is not settled',
    );
  }
  return s.followUp(r, order, 'void', order.holdOpen ? order.authorizedMinor : order.capturedMinor);
}

export function returnOrder(s: OrderStore, r: EngineRequest): Reply {
  const order = s.referenced(r);
  const { amount, partial } = optPartialAmount(r.fields, order);
  s.requireIdle(order);
  let minor: number;
  if (order.holdOpen) {
    if (partial && amount !== order.authorizedMinor) {
      throw new Refusal('a return on a preauth cancels it in full; partial amount not allowed');
    }
    minor = order.authorizedMinor;
  } else {
    const remaining = order.capturedMinor - order.refundedMinor;
    if (order.voided || order.capturedMinor === 0 || !finalSuccess(order)) {
      throw new Refusal('return needs a transaction in a final successful status');
    }
    if (remaining <= 0) throw new Refusal('the transaction has already been fully returned');
    minor = partial ? amount : remaining;
    if (minor <= 0) throw new Refusal('amount must be greater than zero');
    if (minor > remaining) {
      throw new Refusal('return amount exceeds the captured amount not yet returned');
    }
  }
  return s.followUp(r, order, 'return', minor);
}

function finalSuccess(order: Order): boolean {
  const money = order.ops.filter((o) => o.type === 'sale' || o.type === 'capture');
  return money.some((o) => o.status === 'approved');
}

function optPartialAmount(f: Fields, order: Order): { amount: number; partial: boolean } {
  const amountText = opt(f, 'amount');
  const currency = opt(f, 'currency');
  if (amountText === undefined) {
    if (currency !== undefined && currency !== order.currency) {
      throw new Refusal('currency does not match the order');
    }
    return { amount: 0, partial: false };
  }
  if (currency === undefined) throw new Refusal('currency is required together with amount');
  if (currency !== order.currency) throw new Refusal('currency does not match the order');
  return { amount: reqAmount(f, currency, order.endpoint.amountExponent), partial: true };
}
