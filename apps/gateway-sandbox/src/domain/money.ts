/**
 * Money inside the sandbox is an integer number of minor units plus an ISO 4217 currency. The
 * wire carries major-unit decimal strings (`10.42`); they are converted here with string
 * arithmetic only, never through floating point.
 */

/** ISO 4217 exponents that differ from 2, plus the common 2-digit ones for validation. */
const EXPONENTS: Readonly<Record<string, number>> = {
  BHD: 3,
  BIF: 0,
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

/** Number of fraction digits of an ISO 4217 currency (2 unless listed as 0 or 3). */
export function exponentOf(currency: string): number {
  return EXPONENTS[currency] ?? 2;
}

export type AmountParse =
  { readonly ok: true; readonly minor: number } | { readonly ok: false; readonly reason: string };

/** Largest amount accepted: 10 integer digits, as in the docs' "Numeric, length 10". */
const MAX_INTEGER_DIGITS = 10;

/**
 * `"10.42"` in USD → 1042. Refuses signs, exponents, blanks, more fraction digits than the
 * currency has, and anything that is not plain digits with an optional `.` part.
 */
export function parseMajorAmount(text: string, currency: string): AmountParse {
  const exp = exponentOf(currency);
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return { ok: false, reason: `amount must be a decimal number like 10.42` };
  const integer = (match[1] ?? '').replace(/^0+(?=\d)/, '');
  const fraction = match[2] ?? '';
  if (integer.length > MAX_INTEGER_DIGITS) return { ok: false, reason: 'amount is too large' };
  const significant = fraction.replace(/0+$/, '');
  if (significant.length > exp) {
    return { ok: false, reason: `amount has more than ${exp} decimal places for ${currency}` };
  }
  const digits = integer + significant.padEnd(exp, '0');
  return { ok: true, minor: Number(digits) };
}

/** 1042 in USD → `"10.42"`; 5 in JPY → `"5"`; 1 in KWD → `"0.001"`. */
export function formatMinor(minor: number, currency: string): string {
  if (!Number.isSafeInteger(minor) || minor < 0) throw new RangeError('minor must be >= 0');
  const exp = exponentOf(currency);
  const digits = String(minor);
  if (exp === 0) return digits;
  const padded = digits.padStart(exp + 1, '0');
  return `${padded.slice(0, -exp)}.${padded.slice(-exp)}`;
}
