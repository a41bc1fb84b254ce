import {
  CardInput,
  Refusal,
  opt,
  optDestinationPan,
  req,
  reqCard,
  reqClientOrderId,
} from '../../fields';
import { maskPan } from '../../luhn';
import { APPROVED, CardDecision } from '../../outcomes';
import { CardSummary, EngineRequest, Reply } from '../model';
import { Opened, OrderStore } from '../order-store';
import { envelope } from '../replies';
import { optContacts, optCvv, orderTerms, payerAbsent } from '../requests';

/**
 * Money sent to a card or account: payout (one step, or payout-check then payout-pay), transfer
 * (by card, recurring payment or card reference), and the pan-eligibility check before sending.
 */

export function payout(s: OrderStore, r: EngineRequest, kind: 'payout' | 'payout-two-step'): Reply {
  const f = r.fields;
  const { clientOrderId, currency, amount } = orderTerms(r);
  const pan = optDestinationPan(
    f,
    'credit_card_number',
    'destination-card-no',
    'credit-card-number',
  );
  const refId = opt(f, 'destination-card-ref-id', 'card-ref-id', 'cardrefid');
  const account = opt(f, 'account_number');
  const ref = refId === undefined ? undefined : s.cardRef(r, refId);
  if (pan === undefined && ref === undefined && account === undefined) {
    throw new Refusal(
      'a destination is required: credit_card_number, destination-card-ref-id or account_number',
    );
  }
  if (account !== undefined && pan === undefined && ref === undefined) req(f, 'bank_name', 128);
  const cvv = optCvv(f);
  const destination =
    pan !== undefined
      ? maskPan(pan)
      : ref !== undefined
        ? `card-ref ${ref.id}`
        : `account ****${(account ?? '').slice(-4)}`;
  let card: CardSummary | undefined = ref?.card;
  if (pan !== undefined) {
    card = s.summarize({
      pan,
      holder: opt(f, 'card_printed_name') ?? '',
      expMonth: opt(f, 'expire_month') ?? '',
      expYear: opt(f, 'expire_year') ?? '',
      cvv: undefined,
      brand: '',
    });
  }
  const request = {
    kind,
    clientOrderId,
    amountMinor: amount,
    currency,
    identity: [amount, currency, destination],
    laterContacts: () => optContacts(f),
    card,
    destination,
  };
  const decision = payerAbsent(r.forced, cvv);
  return s.open(r, request, (order): Opened => {
    if (kind === 'payout-two-step') {
      order.payoutCheck = {
        expiresAt: s.clock.now() + s.settings.payoutCheckTtlMs,
        state: 'open',
      };
      s.openChecks.add(order);
      order.forced = decision.kind === 'result' ? decision.result : undefined;
      const approved: CardDecision = { kind: 'result', result: APPROVED };
      return { op: s.submit(r, order, 'payout-check', amount, approved) };
    }
    return {
      op: s.submit(r, order, 'payout', amount, decision),
      extra: r.op === 'PAYOUT_V4' ? { 'payout-id': order.orderId } : {},
    };
  });
}

export function payoutPay(s: OrderStore, r: EngineRequest): Reply {
  const order = s.referenced(r);
  const check = order.payoutCheck;
  if (order.kind !== 'payout-two-step' || !check) {
    throw new Refusal('payout-pay needs an order registered by payout-check');
  }
  if (check.state === 'paid') {
    // A repeated confirmation returns the payout already made, never a second one.
    const paid = order.ops.find((o) => o.type === 'payout');
    if (paid) return envelope('async-response', order, paid);
  }
  s.requireIdle(order);
  if (check.state === 'expired' || s.clock.now() >= check.expiresAt) {
    throw new Refusal('the payout check has expired; register a new payout-check');
  }
  if (order.ops[0]?.status !== 'approved') {
    throw new Refusal('the payout check was not approved');
  }
  check.state = 'paid';
  return s.followUp(r, order, 'payout', order.amountMinor, {
    kind: 'result',
    result: r.forced ?? order.forced ?? APPROVED,
  });
}

export function transfer(s: OrderStore, r: EngineRequest): Reply {
  const f = r.fields;
  const { clientOrderId, currency, amount } = orderTerms(r);
  const deposit = opt(f, 'deposit2card') === 'true';
  const sourceRp = opt(f, 'card_recurring_payment_id');
  let source: CardInput | undefined;
  if (!deposit && sourceRp === undefined) source = reqCard(f, s.clock.now(), true);
  if (sourceRp !== undefined) s.plan(r, sourceRp);
  const destPan = optDestinationPan(f, 'destination-card-no', 'destination_card_no');
  const destRp = opt(f, 'destination_card_recurring_payment_id');
  if (destRp !== undefined) s.plan(r, destRp);
  if (destPan === undefined && destRp === undefined) {
    throw new Refusal('destination-card-no or destination_card_recurring_payment_id is required');
  }
  const destination = destPan !== undefined ? maskPan(destPan) : `rp ${destRp ?? ''}`;
  return transferOrder(s, r, clientOrderId, amount, currency, source, destination);
}

export function transferByRef(s: OrderStore, r: EngineRequest): Reply {
  const f = r.fields;
  const { clientOrderId, currency, amount } = orderTerms(r);
  const sourceRef = opt(f, 'source-card-ref-id');
  if (sourceRef !== undefined) s.cardRef(r, sourceRef);
  const destPan = optDestinationPan(f, 'destination-card-no');
  const destRef = opt(f, 'destination-card-ref-id');
  if (destRef !== undefined) s.cardRef(r, destRef);
  if (destPan === undefined && destRef === undefined) {
    throw new Refusal('destination-card-no or destination-card-ref-id is required');
  }
  const destination = destPan !== undefined ? maskPan(destPan) : `card-ref ${destRef ?? ''}`;
  return transferOrder(s, r, clientOrderId, amount, currency, undefined, destination);
}

function transferOrder(
  s: OrderStore,
  r: EngineRequest,
  clientOrderId: string,
  amount: number,
  currency: string,
  source: CardInput | undefined,
  destination: string,
): Reply {
  const request = {
    kind: 'transfer' as const,
    clientOrderId,
    amountMinor: amount,
    currency,
    identity: [amount, currency, destination],
    laterContacts: () => optContacts(r.fields),
    card: source && s.summarize(source),
    destination,
  };
  return s.open(r, request, (order) => ({
    op: s.submit(r, order, 'transfer', amount, payerAbsent(r.forced, source?.cvv)),
    extra: { 'transaction-id': order.orderId },
  }));
}

export function panEligibility(s: OrderStore, r: EngineRequest): Reply {
  const f = r.fields;
  const clientOrderId = reqClientOrderId(f);
  const ref = s.cardRef(r, req(f, 'sending-card-ref-id', 20));
  const request = {
    kind: 'pan-eligibility' as const,
    clientOrderId,
    amountMinor: 0,
    currency: r.endpoint.currency,
    identity: [ref.id],
    card: ref.card,
  };
  return s.open(r, request, (order) => {
    const op = s.addOp(order, 'pan-eligibility', 0);
    s.finish(order, op, r.forced ?? APPROVED);
    return {
      op,
      extra: { status: op.status, eligible: op.status === 'approved' ? 'true' : 'false' },
    };
  });
}
