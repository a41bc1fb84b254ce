import {
  Refusal,
  clientOrderIdOf,
  opt,
  optUrl,
  req,
  reqCard,
  reqClientOrderId,
} from '../../fields';
import { formatMinor } from '../../money';
import { APPROVED, Result, decideByCvv } from '../../outcomes';
import { CardSummary, EngineRequest, RecurringPlan, Reply } from '../model';
import { OrderStore } from '../order-store';
import { optCvv, orderTerms, payerAbsent, pricing } from '../requests';

/**
 * Card references and recurring payments: create-card-ref, get-card-info, make-rebill,
 * create-recurring-payment, the status of a registration, and the schedule's charges.
 */

export function createCardRef(s: OrderStore, r: EngineRequest): Reply {
  const order = s.referenced(r);
  const base = order.ops[0];
  if (
    !order.card ||
    !base ||
    base.status !== 'approved' ||
    (order.kind !== 'sale' && order.kind !== 'preauth' && order.kind !== 'account-verification')
  ) {
    throw new Refusal('create-card-ref needs a card payment in a final successful status');
  }
  let ref = s.cardRefByOrder.get(order.orderId);
  if (!ref) {
    ref = {
      id: s.newRefId(),
      login: order.login,
      card: order.card,
      sourceOrderId: order.orderId,
      verified3d: base.result?.verified3d ?? 'UNKNOWN',
    };
    s.cardRefs.set(ref.id, ref);
    s.cardRefByOrder.set(order.orderId, ref);
  }
  const reply: Reply = {
    type: 'create-card-ref-response',
    status: 'approved',
    'serial-number': s.serial(),
    'merchant-order-id': order.clientOrderId,
    'paynet-order-id': order.orderId,
    'card-ref-id': ref.id,
  };
  if (r.op === 'CARDREF_V4') reply['unq-card-ref-id'] = order.card.panHash.slice(0, 20);
  return reply;
}

export function cardInfo(s: OrderStore, r: EngineRequest): Reply {
  const ref = s.cardRef(r, req(r.fields, 'cardrefid', 20, 'card-ref-id'));
  return {
    type: 'get-card-info-response',
    'serial-number': s.serial(),
    'card-printed-name': ref.card.holder,
    bin: ref.card.bin,
    'last-four-digits': ref.card.lastFour,
    'expire-month': ref.card.expMonth,
    'expire-year': ref.card.expYear,
    'card-type': ref.card.brand,
    'result-3d': ref.verified3d,
  };
}

export function rebill(s: OrderStore, r: EngineRequest): Reply {
  const f = r.fields;
  const clientOrderId = reqClientOrderId(f);
  const ref = s.cardRef(r, req(f, 'cardrefid', 20));
  const { currency, amount } = pricing(r);
  const cvv = optCvv(f);
  const request = {
    kind: 'rebill' as const,
    clientOrderId,
    amountMinor: amount,
    currency,
    identity: [amount, currency, ref.id],
    callbackUrl: optUrl(f, 'server_callback_url'),
    card: ref.card,
  };
  return s.open(r, request, (order) => ({
    op: s.submit(r, order, 'sale', amount, payerAbsent(r.forced, cvv)),
  }));
}

const PERIODS: Readonly<Record<string, RecurringPlan['period']>> = {
  day: 'day',
  daily: 'day',
  week: 'week',
  weekly: 'week',
  month: 'month',
  monthly: 'month',
};

export function createRecurring(s: OrderStore, r: EngineRequest): Reply {
  const f = r.fields;
  const { clientOrderId, currency, amount } = orderTerms(r);
  const periodText = req(f, 'period', 10).toLowerCase();
  // Own keys only: `__proto__` would otherwise name the object's prototype, not a period.
  const period = Object.hasOwn(PERIODS, periodText) ? PERIODS[periodText] : undefined;
  if (period === undefined) throw new Refusal('period must be day, week or month');
  const intervalText = opt(f, 'interval') ?? '1';
  if (!/^[1-9]\d{0,2}$/.test(intervalText)) throw new Refusal('interval must be 1-999');
  const interval = Number(intervalText);
  const repeatsText = opt(f, 'repeats', 'max-repeats');
  if (repeatsText !== undefined && !/^[1-9]\d{0,3}$/.test(repeatsText)) {
    throw new Refusal('repeats must be 1-9999');
  }
  const refId = opt(f, 'cardrefid', 'card-ref-id');
  let card: CardSummary;
  let profile: Result = APPROVED;
  if (refId !== undefined) {
    card = s.cardRef(r, refId).card;
  } else {
    const input = reqCard(f, s.clock.now(), false);
    card = s.summarize(input);
    if (input.cvv !== undefined) {
      const d = decideByCvv(input.cvv, { threeDSGate: false, payerPresent: false });
      if (d.kind === 'result') profile = d.result;
    }
  }
  const now = s.clock.now();
  const startText = opt(f, 'start-date', 'start_date');
  let startAt = addPeriod(now, period, interval);
  if (startText !== undefined) {
    const parsed = /^\d{4}-\d{2}-\d{2}$/.test(startText)
      ? Date.parse(`${startText}T00:00:00Z`)
      : NaN;
    if (Number.isNaN(parsed)) throw new Refusal('start-date must be YYYY-MM-DD');
    startAt = Math.max(parsed, now);
  }
  const key = `rp|${r.endpoint.merchant.login}|${clientOrderId}`;
  const existing = [...s.plans.values()].find((p) => `rp|${p.login}|${p.clientOrderId}` === key);
  if (existing) {
    if (existing.amountMinor !== amount || existing.currency !== currency) {
      throw new Refusal(`client_orderid ${clientOrderId} is already used by another subscription`);
    }
    return recurringReply(s, existing, r.endpointRef);
  }
  const plan: RecurringPlan = {
    id: s.newRefId(),
    login: r.endpoint.merchant.login,
    endpoint: r.endpoint,
    clientOrderId,
    amountMinor: amount,
    currency,
    period,
    interval,
    maxCharges: repeatsText === undefined ? undefined : Number(repeatsText),
    card,
    profile: r.forced ?? profile,
    callbackUrl: optUrl(f, 'server_callback_url'),
    baseUrl: r.baseUrl,
    startAt,
    charges: 0,
    nextAt: startAt,
  };
  s.plans.set(plan.id, plan);
  return recurringReply(s, plan, r.endpointRef);
}

function recurringReply(s: OrderStore, plan: RecurringPlan, endpointRef: string): Reply {
  return {
    type: 'async-response',
    status: 'approved',
    'serial-number': s.serial(),
    'merchant-order-id': plan.clientOrderId,
    'recurring-payment-id': plan.id,
    'end-point-id': endpointRef,
  };
}

/**
 * A status query by client_orderid alone that names a recurring registration (no order has that
 * client_orderid): the facts leave open how a merchant learns whether a create-recurring-payment
 * whose reply was lost took effect; the sandbox answers the status query about it (approved,
 * `transaction-type` create-recurring-payment, its `recurring-payment-id`). A client_orderid
 * nothing was registered under is refused like an unknown order.
 */
export function registrationAsked(s: OrderStore, r: EngineRequest): RecurringPlan | undefined {
  if (opt(r.fields, 'orderid') !== undefined) return undefined;
  const clientOrderId = clientOrderIdOf(r.fields);
  const login = opt(r.fields, 'login') ?? r.oauthLogin;
  if (clientOrderId === undefined || login !== r.endpoint.merchant.login) return undefined;
  if (s.byClientOrder(login, clientOrderId)) return undefined;
  return [...s.plans.values()].find((p) => p.login === login && p.clientOrderId === clientOrderId);
}

export function registrationStatus(s: OrderStore, plan: RecurringPlan, endpointRef: string): Reply {
  return {
    type: 'status-response',
    status: 'approved',
    amount: formatMinor(plan.amountMinor, plan.currency, plan.endpoint.amountExponent),
    currency: plan.currency,
    'merchant-order-id': plan.clientOrderId,
    'serial-number': s.serial(),
    'transaction-type': 'create-recurring-payment',
    'recurring-payment-id': plan.id,
    'end-point-id': endpointRef,
  };
}

/** The schedules' charges due at `now`, each a rebill order decided by the plan's profile. */
export function chargeDuePlans(s: OrderStore, now: number): void {
  for (const plan of s.plans.values()) chargeDue(s, plan, now);
}

function chargeDue(s: OrderStore, plan: RecurringPlan, now: number): void {
  let guard = 0;
  while (
    plan.nextAt <= now &&
    (plan.maxCharges === undefined || plan.charges < plan.maxCharges) &&
    guard < 1000
  ) {
    guard += 1;
    plan.charges += 1;
    const clientOrderId = `${plan.clientOrderId}-${plan.charges}`;
    const order = s.storeOrder({
      orderId: s.newOrderId(),
      login: plan.login,
      endpoint: plan.endpoint,
      endpointRef: String(plan.endpoint.id),
      clientOrderId,
      kind: 'rebill',
      amountMinor: plan.amountMinor,
      currency: plan.currency,
      fingerprint: `recurring|${plan.id}|${plan.charges}`,
      baseUrl: plan.baseUrl,
      callbackUrl: plan.callbackUrl,
    });
    order.card = plan.card;
    const op = s.addOp(order, 'sale', plan.amountMinor);
    s.finish(order, op, plan.profile);
    plan.nextAt = addPeriod(plan.nextAt, plan.period, plan.interval);
  }
}

export function addPeriod(at: number, period: 'day' | 'week' | 'month', interval: number): number {
  switch (period) {
    case 'day':
      return at + interval * 86_400_000;
    case 'week':
      return at + interval * 7 * 86_400_000;
    case 'month': {
      const d = new Date(at);
      const day = d.getUTCDate();
      d.setUTCDate(1);
      d.setUTCMonth(d.getUTCMonth() + interval);
      const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
      d.setUTCDate(Math.min(day, last));
      return d.getTime();
    }
  }
}
