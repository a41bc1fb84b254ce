import { GatewayClientError } from './errors';

/**
 * ISO 4217 minor-unit exponents. Money enters the library as an integer number of minor units
 * (a safe integer ≥ 0) plus a currency code, and is formatted to the gateway's decimal string
 * with string arithmetic only — never floating point.
 */
const ZERO = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF';
const THREE = 'BHD IQD JOD KWD LYD OMR TND';
const FOUR = 'CLF UYW';
const TWO =
  'AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN ' +
  'BZD CAD CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP ' +
  'GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP ' +
  'LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR ' +
  'NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN ' +
  'SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ' +
  'ZMW ZWG';

const EXPONENTS: ReadonlyMap<string, number> = new Map([
  ...ZERO.split(' ').map((c) => [c, 0] as const),
  ...TWO.split(' ').map((c) => [c, 2] as const),
  ...THREE.split(' ').map((c) => [c, 3] as const),
  ...FOUR.split(' ').map((c) => [c, 4] as const),
]);

/** Minor-unit exponent of an ISO 4217 code; throws `invalid-currency` for anything else. */
export function currencyExponent(currency: string): number {
  const exp = EXPONENTS.get(currency);
  if (exp === undefined) {
    throw new GatewayClientError('invalid-currency', `unknown ISO 4217 currency code`, {
      field: 'currency',
    });
  }
  return exp;
}

export function isKnownCurrency(currency: string): boolean {
  return EXPONENTS.has(currency);
}

/** A safe, non-negative integer number of minor units. */
export function assertMinorUnits(amount: unknown, field = 'amount'): asserts amount is number {
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 0) {
    throw new GatewayClientError(
      'invalid-amount',
      `${field} must be a safe integer number of minor units >= 0`,
      { field },
    );
  }
}

/** 1042 USD → "10.42"; 5 USD → "0.05"; 500 JPY → "500"; 1234 KWD → "1.234". */
export function formatMinorUnits(amount: number, currency: string): string {
  assertMinorUnits(amount);
  const exp = currencyExponent(currency);
  const digits = String(amount);
  if (exp === 0) return digits;
  const padded = digits.padStart(exp + 1, '0');
  return `${padded.slice(0, -exp)}.${padded.slice(-exp)}`;
}

/**
 * Major-unit decimal string (as the gateway sends it in callbacks and status replies) → minor
 * units. "10.5" USD → 1050, "100" JPY → 100. Extra fraction digits are accepted only when they
 * are zeros ("10.500" USD); anything else (signs, exponents, "1,00", too many digits) throws.
 */
export function parseMajorUnits(value: string, currency: string, field = 'amount'): number {
  const exp = currencyExponent(currency);
  const m = /^(\d+)(?:\.(\d+))?$/.exec(value);
  if (!m) {
    throw new GatewayClientError('invalid-amount', `${field} is not a decimal amount`, { field });
  }
  const whole = m[1] ?? '';
  let frac = m[2] ?? '';
  if (frac.length > exp) {
    if (!/^0*$/.test(frac.slice(exp))) {
      throw new GatewayClientError(
        'invalid-amount',
        `${field} has more fraction digits than ${currency} allows`,
        { field },
      );
    }
    frac = frac.slice(0, exp);
  }
  const minorDigits = (whole + frac.padEnd(exp, '0')).replace(/^0+(?=\d)/, '');
  const minor = Number(minorDigits);
  if (!Number.isSafeInteger(minor)) {
    throw new GatewayClientError('invalid-amount', `${field} is too large`, { field });
  }
  return minor;
}
