/**
 * Money inside the sandbox is an integer number of minor units plus an ISO 4217 currency. The
 * wire carries major-unit decimal strings (`10.42`); they are converted here with string
 * arithmetic only, never through floating point.
 */

/** ISO 4217 exponents that differ from 2 (0, 3, and 4 for CLF and UYW). */
const EXPONENTS: Readonly<Record<string, number>> = {
  BHD: 3,
  BIF: 0,
  CLF: 4,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  IQD: 3,
  ISK: 0,
  JOD: 3,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  PYG: 0,
  RWF: 0,
  TND: 3,
  UGX: 0,
  UYI: 0,
  UYW: 4,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
};

const CURRENCY = /^[A-Z]{3}$/;

export function isCurrency(code: string): boolean {
  return CURRENCY.test(code);
}

/** Number of fraction digits of an ISO 4217 currency (2 unless listed as 0, 3 or 4). */
export function exponentOf(currency: string): number {
  return EXPONENTS[currency] ?? 2;
}

export type AmountParse =
  { readonly ok: true; readonly minor: number } | { readonly ok: false; readonly reason: string };

/** Largest amount accepted: 10 integer digits, as in the docs' "Numeric, length 10". */
const MAX_INTEGER_DIGITS = 10;

/**
 * `"10.42"` in USD → 1042: the amount in ISO 4217 minor units, whatever the endpoint's wire
 * exponent. `wireExponent` (an endpoint's `amountExponent`, default the ISO one) only limits the
 * decimals a request may carry: at most min(ISO, wire) significant ones, so `"500.00"` JPY is
 * 500 on an endpoint expecting two decimals, `"500.50"` is refused (no half yen), and `"1.234"`
 * KWD is refused on an endpoint expecting two. Refuses signs, exponents, blanks and anything that
 * is not plain digits with an optional `.` part.
 */
export function parseMajorAmount(
  text: string,
  currency: string,
  wireExponent = exponentOf(currency),
): AmountParse {
  const exp = exponentOf(currency);
  const allowed = Math.min(exp, wireExponent);
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return { ok: false, reason: `amount must be a decimal number like 10.42` };
  const integer = (match[1] ?? '').replace(/^0+(?=\d)/, '');
  const fraction = match[2] ?? '';
  if (integer.length > MAX_INTEGER_DIGITS) return { ok: false, reason: 'amount is too large' };
  const significant = fraction.replace(/0+$/, '');
  if (significant.length > allowed) {
    return { ok: false, reason: `amount has more than ${allowed} decimal places for ${currency}` };
  }
  const digits = integer + significant.padEnd(exp, '0');
  return { ok: true, minor: Number(digits) };
}

/**
 * ISO minor units → the endpoint's minor units (the amount in `control` checksums), as digits:
 * 1500 JPY → `"1500"`; with a wire exponent of 2 → `"150000"`; 1230 KWD with 2 → `"123"`.
 */
export function wireMinor(
  minor: number,
  currency: string,
  wireExponent = exponentOf(currency),
): string {
  if (!Number.isSafeInteger(minor) || minor < 0) throw new RangeError('minor must be >= 0');
  const exp = exponentOf(currency);
  const digits = String(minor);
  if (wireExponent >= exp) return minor === 0 ? '0' : digits + '0'.repeat(wireExponent - exp);
  const cut = exp - wireExponent;
  if (!/^0*$/.test(digits.slice(-cut))) {
    throw new RangeError(`${currency} ${minor} has more than ${wireExponent} decimals`);
  }
  return digits.length > cut ? digits.slice(0, -cut) : '0';
}

/**
 * ISO minor units → the decimal string the endpoint sends: 1042 USD → `"10.42"`; 5 JPY → `"5"`;
 * 1 KWD → `"0.001"`; 500 JPY with a wire exponent of 2 → `"500.00"`.
 */
export function formatMinor(
  minor: number,
  currency: string,
  wireExponent = exponentOf(currency),
): string {
  const digits = wireMinor(minor, currency, wireExponent);
  if (wireExponent === 0) return digits;
  const padded = digits.padStart(wireExponent + 1, '0');
  return `${padded.slice(0, -wireExponent)}.${padded.slice(-wireExponent)}`;
}
