import {
  Fields,
  Refusal,
  opt,
  optAmount,
  optUrl,
  reqClientOrderId,
  reqCurrency,
  reqPositiveAmount,
} from '../fields';
import { Endpoint } from '../merchants';
import { APPROVED, CardDecision, Result, decideByCvv } from '../outcomes';
import { Contacts, EngineRequest } from './model';

/** Request parts several operation families read the same way, and how a card is decided. */

/** What every new order names first: its client_orderid, then its currency and amount. */
export function orderTerms(
  r: EngineRequest,
  zeroAmount = false,
): { clientOrderId: string; currency: string; amount: number } {
  const clientOrderId = reqClientOrderId(r.fields);
  return { clientOrderId, ...pricing(r, zeroAmount) };
}

/** Currency and amount of a new order, for the endpoint's currency; zero for a verification. */
export function pricing(
  r: EngineRequest,
  zeroAmount = false,
): { currency: string; amount: number } {
  const currency = zeroAmount ? avCurrency(r) : reqCurrency(r.fields);
  const amount = zeroAmount
    ? avAmount(r.fields, currency)
    : reqPositiveAmount(r.fields, currency, r.endpoint.amountExponent);
  checkCurrency(r.endpoint, currency);
  return { currency, amount: zeroAmount ? amount : (r.processedAmountMinor ?? amount) };
}

function avCurrency(r: EngineRequest): string {
  return opt(r.fields, 'currency') === undefined ? r.endpoint.currency : reqCurrency(r.fields);
}

function avAmount(f: Fields, currency: string): number {
  const minor = optAmount(f, currency) ?? 0;
  if (minor !== 0) throw new Refusal('account verification is a zero-amount operation');
  return 0;
}

function checkCurrency(endpoint: Endpoint, currency: string): void {
  if (currency !== endpoint.currency) {
    throw new Refusal(`endpoint ${endpoint.id} does not process ${currency}`);
  }
}

export function optContacts(f: Fields): Contacts {
  return {
    email: opt(f, 'email'),
    redirectUrl: optUrl(f, 'redirect_url'),
    callbackUrl: optUrl(f, 'server_callback_url'),
  };
}

export function optCvv(f: Fields): string | undefined {
  const cvv = opt(f, 'cvv2');
  if (cvv !== undefined && !/^\d{3,4}$/.test(cvv)) throw new Refusal('cvv2 must be 3 or 4 digits');
  return cvv;
}

/** The payer at the card (sale, preauth, hosted page): forced, else by the CVV, 3DS gated. */
export function payerPresent(
  forced: Result | undefined,
  cvv: string | undefined,
  threeDSGate: boolean,
): CardDecision {
  if (forced) return { kind: 'result', result: forced };
  return decideByCvv(cvv ?? '', { threeDSGate, payerPresent: true });
}

/** No payer (rebill, payout, transfer): forced, else by the CVV when given, else approved. */
export function payerAbsent(forced: Result | undefined, cvv: string | undefined): CardDecision {
  if (forced) return { kind: 'result', result: forced };
  if (cvv === undefined) return { kind: 'result', result: APPROVED };
  return decideByCvv(cvv, { threeDSGate: false, payerPresent: false });
}
