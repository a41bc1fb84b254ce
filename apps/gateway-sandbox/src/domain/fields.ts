import { luhnValid, normalizePan, brandOf } from './luhn';
import { isCurrency, parseMajorAmount } from './money';

/**
 * Request-field validation. A problem is raised as a Refusal, which the engine turns into a
 * `validation-error` reply; nothing is stored before every field of a request has passed.
 */
export class Refusal extends Error {
  constructor(
    message: string,
    readonly code = 1,
  ) {
    super(message);
    this.name = 'Refusal';
  }
}

export type Fields = ReadonlyMap<string, string>;

/** First non-empty value among the names (the API spells some names several ways). */
export function opt(f: Fields, ...names: string[]): string | undefined {
  for (const n of names) {
    const v = f.get(n);
    if (v !== undefined && v !== '') return v;
  }
  return undefined;
}

export function req(f: Fields, name: string, max: number, ...aliases: string[]): string {
  const v = opt(f, name, ...aliases);
  if (v === undefined) throw new Refusal(`${name} is required`);
  if (v.length > max) throw new Refusal(`${name} is longer than ${max} characters`);
  return v;
}

export function clientOrderIdOf(f: Fields): string | undefined {
  return opt(f, 'client_orderid', 'client-order-id', 'client-orderid');
}

export function reqClientOrderId(f: Fields): string {
  const v = clientOrderIdOf(f);
  if (v === undefined) throw new Refusal('client_orderid is required');
  if (v.length > 128) throw new Refusal('client_orderid is longer than 128 characters');
  return v;
}

export function reqCurrency(f: Fields): string {
  const c = req(f, 'currency', 3);
  if (!isCurrency(c)) throw new Refusal('currency must be an ISO 4217 code such as USD');
  return c;
}

/** ISO minor units; `wireExponent` is the endpoint's `amountExponent` (default ISO). */
export function reqAmount(f: Fields, currency: string, wireExponent?: number): number {
  const minor = optAmount(f, currency, wireExponent);
  if (minor === undefined) throw new Refusal('amount is required');
  return minor;
}

export function optAmount(f: Fields, currency: string, wireExponent?: number): number | undefined {
  const text = opt(f, 'amount');
  if (text === undefined) return undefined;
  const parsed = parseMajorAmount(text, currency, wireExponent);
  if (!parsed.ok) throw new Refusal(parsed.reason);
  return parsed.minor;
}

export function reqPositiveAmount(f: Fields, currency: string, wireExponent?: number): number {
  const minor = reqAmount(f, currency, wireExponent);
  if (minor <= 0) throw new Refusal('amount must be greater than zero');
  return minor;
}

export function optUrl(f: Fields, name: string): string | undefined {
  const v = opt(f, name);
  if (v === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new Refusal(`${name} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Refusal(`${name} must be an absolute http(s) URL`);
  }
  if (v.length > 1024) throw new Refusal(`${name} is longer than 1024 characters`);
  return v;
}

export function reqUrl(f: Fields, name: string): string {
  const v = optUrl(f, name);
  if (v === undefined) throw new Refusal(`${name} is required`);
  return v;
}

export function reqEmail(f: Fields): string {
  const v = req(f, 'email', 50);
  if (!/^[^\s@]+@[^\s@]+$/.test(v)) throw new Refusal('email is not an e-mail address');
  return v;
}

/** The customer fields the docs mark required for sale/preauth/account verification. */
export function reqCustomer(f: Fields): void {
  req(f, 'order_desc', 65536);
  req(f, 'address1', 50);
  req(f, 'city', 50);
  req(f, 'zip_code', 10);
  const country = req(f, 'country', 2);
  if (!/^[A-Za-z]{2}$/.test(country)) throw new Refusal('country must be an ISO alpha-2 code');
  const ip = req(f, 'ipaddress', 45);
  if (!/^[0-9A-Fa-f:.]{7,45}$/.test(ip)) throw new Refusal('ipaddress is not an IP address');
}

export interface CardInput {
  readonly pan: string;
  readonly holder: string;
  readonly expMonth: string;
  readonly expYear: string;
  readonly cvv: string | undefined;
  readonly brand: string;
}

/** Card fields (snake_case as in v2, hyphenated as in create-recurring-payment). */
export function reqCard(f: Fields, now: number, cvvRequired: boolean): CardInput {
  const rawPan = req(f, 'credit_card_number', 23, 'credit-card-number');
  const pan = normalizePan(rawPan);
  if (!luhnValid(pan)) throw new Refusal('credit_card_number is not a valid card number');
  const holder = req(f, 'card_printed_name', 128, 'card-printed-name');
  const { month, year } = reqExpiry(f, now);
  const cvv = opt(f, 'cvv2');
  if (cvv !== undefined && !/^\d{3,4}$/.test(cvv)) throw new Refusal('cvv2 must be 3 or 4 digits');
  if (cvvRequired && cvv === undefined) throw new Refusal('cvv2 is required');
  return { pan, holder, expMonth: month, expYear: year, cvv, brand: brandOf(pan) };
}

export function reqExpiry(f: Fields, now: number): { month: string; year: string } {
  const month = req(f, 'expire_month', 2, 'expire-month');
  const yearText = req(f, 'expire_year', 4, 'expire-year');
  if (!/^(0?[1-9]|1[0-2])$/.test(month)) throw new Refusal('expire_month must be 01-12');
  if (!/^(\d{2}|\d{4})$/.test(yearText)) throw new Refusal('expire_year must be 2 or 4 digits');
  const year = yearText.length === 2 ? `20${yearText}` : yearText;
  const today = new Date(now);
  const y = today.getUTCFullYear();
  const m = today.getUTCMonth() + 1;
  if (Number(year) < y || (Number(year) === y && Number(month) < m)) {
    throw new Refusal('the card has expired');
  }
  return { month: month.padStart(2, '0'), year };
}

/** A destination card number (payouts, transfers), Luhn-checked. */
export function optDestinationPan(f: Fields, ...names: string[]): string | undefined {
  const raw = opt(f, ...names);
  if (raw === undefined) return undefined;
  const pan = normalizePan(raw);
  if (!luhnValid(pan)) throw new Refusal(`${names[0]} is not a valid card number`);
  return pan;
}
