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

/**
 * Per-endpoint wire exponents where the gateway does not use the ISO 4217 one: currency code →
 * number of decimals (0–4) the endpoint expects, `'*'` for every currency not listed. Absent or
 * empty: ISO for every currency. Amounts entering the library stay ISO minor units either way.
 */
export type CurrencyExponents = Readonly<Record<string, number>>;

const MAX_WIRE_EXPONENT = 4;

/** Checks an override map (known codes or `'*'`, integers 0–4); throws `invalid-config`. */
export function checkCurrencyExponents(exponents: CurrencyExponents): void {
  for (const [code, exp] of Object.entries(exponents)) {
    if (code !== '*' && !EXPONENTS.has(code)) {
      throw new GatewayClientError(
        'invalid-config',
        `currencyExponents: ${code} is not an ISO 4217 code (or "*")`,
      );
    }
    if (!Number.isInteger(exp) || exp < 0 || exp > MAX_WIRE_EXPONENT) {
      throw new GatewayClientError(
        'invalid-config',
        `currencyExponents.${code}: expected an integer from 0 to ${MAX_WIRE_EXPONENT}`,
      );
    }
  }
}

/** Decimals the gateway expects for `currency`: the override, else the ISO 4217 exponent. */
export function wireExponent(currency: string, exponents: CurrencyExponents = {}): number {
  const iso = currencyExponent(currency);
  return exponents[currency] ?? exponents['*'] ?? iso;
}

/** An amount as the gateway sees it: the decimal string and its minor units (for `control`). */
export interface WireAmount {
  /** `"10.42"`; digits only when the exponent is 0. */
  readonly decimal: string;
  /** The same amount in the gateway's minor units, as digits: `"1042"`. */
  readonly minor: string;
}

/**
 * ISO minor units → the gateway's representation under the endpoint's exponent. A larger wire
 * exponent appends zeros (500 JPY with exponent 2 → "500.00", minor "50000"); a smaller one
 * drops trailing zero digits and refuses an amount it cannot express (1234 KWD with exponent 2
 * → `invalid-amount`; 1230 → "1.23"). String arithmetic only.
 */
export function toWireAmount(
  amount: number,
  currency: string,
  exponents: CurrencyExponents = {},
  field = 'amount',
): WireAmount {
  assertMinorUnits(amount, field);
  const iso = currencyExponent(currency);
  const exp = wireExponent(currency, exponents);
  let minor = String(amount);
  if (exp > iso) {
    minor = amount === 0 ? '0' : minor + '0'.repeat(exp - iso);
  } else if (exp < iso) {
    const dropped = minor.padStart(iso - exp + 1, '0').slice(-(iso - exp));
    if (!/^0*$/.test(dropped)) {
      throw new GatewayClientError(
        'invalid-amount',
        `${field} has more decimals than the ${exp} this endpoint sends for ${currency}`,
        { field },
      );
    }
    minor = minor.length > iso - exp ? minor.slice(0, -(iso - exp)) : '0';
  }
  if (exp === 0) return { decimal: minor, minor };
  const padded = minor.padStart(exp + 1, '0');
  return { decimal: `${padded.slice(0, -exp)}.${padded.slice(-exp)}`, minor };
}

/**
 * 1042 USD → "10.42"; 5 USD → "0.05"; 500 JPY → "500"; 1234 KWD → "1.234"; with an endpoint's
 * override, 500 JPY and `{ JPY: 2 }` → "500.00".
 */
export function formatMinorUnits(
  amount: number,
  currency: string,
  exponents: CurrencyExponents = {},
): string {
  return toWireAmount(amount, currency, exponents).decimal;
}

/**
 * Major-unit decimal string (as the gateway sends it in callbacks and status replies) → ISO minor
 * units. "10.5" USD → 1050, "100" JPY → 100. Extra fraction digits are accepted only when they
 * are zeros ("10.500" USD, or "500.00" JPY from an endpoint with a `{ JPY: 2 }` override), so
 * parsing needs no per-endpoint exponent; anything else (signs, exponents, "1,00", a non-zero
 * digit beyond the ISO exponent) throws.
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
