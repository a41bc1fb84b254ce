import fc from 'fast-check';
import { vector } from '../test/support';
import { GatewayClientError } from './errors';
import {
  currencyExponent,
  formatMinorUnits,
  parseMajorUnits,
  toWireAmount,
  wireExponent,
} from './money';

describe('money', () => {
  it('vector amount-minor-units-doc', () => {
    const v = vector('amount-minor-units-doc');
    const cases = (v.inputs as { cases: { amount: string; currency: string }[] }).cases;
    const minor = (v.expected as { minor_units: string[] }).minor_units;
    cases.forEach((c, i) => {
      expect(String(parseMajorUnits(c.amount, c.currency))).toBe(minor[i]);
      expect(formatMinorUnits(Number(minor[i]), c.currency)).toBe(c.amount);
    });
  });

  it.each([
    [1042, 'USD', '10.42'],
    [5, 'USD', '0.05'],
    [0, 'EUR', '0.00'],
    [500, 'JPY', '500'],
    [1000, 'KRW', '1000'],
    [1234, 'KWD', '1.234'],
    [1, 'BHD', '0.001'],
    [10000, 'TND', '10.000'],
    [Number.MAX_SAFE_INTEGER, 'USD', '90071992547409.91'],
  ])('%d %s → %s', (minor, cur, major) => {
    expect(formatMinorUnits(minor, cur)).toBe(major);
  });

  it('exponents', () => {
    expect(
      ['JPY', 'KRW', 'USD', 'EUR', 'BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'].map(
        currencyExponent,
      ),
    ).toEqual([0, 0, 2, 2, 3, 3, 3, 3, 3, 3, 3]);
  });

  it.each([-1, 1.5, NaN, Infinity, Number.MAX_SAFE_INTEGER + 1, '100', 10n])(
    'refuses amount %p',
    (a) => {
      expect(() => formatMinorUnits(a as number, 'USD')).toThrow(GatewayClientError);
    },
  );

  it.each(['usd', 'XYZ', '', 'US', 'XAU'])('refuses currency %p', (c) => {
    expect(() => formatMinorUnits(1, c)).toThrow(/currency/);
  });

  it('round trip parse(format(n)) == n for any safe amount and currency', () => {
    const cur = fc.constantFrom('USD', 'JPY', 'KWD', 'CLF', 'EUR', 'BHD', 'KRW');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), cur, (n, c) => {
        expect(parseMajorUnits(formatMinorUnits(n, c), c)).toBe(n);
      }),
      { numRuns: 1000 },
    );
  });

  it.each([
    // amount (ISO minor), currency, overrides, wire decimal, gateway minor units
    [500, 'JPY', { JPY: 2 }, '500.00', '50000'],
    [0, 'JPY', { '*': 2 }, '0.00', '0'],
    [1042, 'USD', { '*': 2 }, '10.42', '1042'],
    [1230, 'KWD', { '*': 2 }, '1.23', '123'],
    [3000, 'KWD', { KWD: 0 }, '3', '3'],
    [12_3456, 'CLF', {}, '12.3456', '123456'],
    [12_3400, 'CLF', { CLF: 2 }, '12.34', '1234'],
    [7, 'UYW', { '*': 2, UYW: 4 }, '0.0007', '7'],
    [1042, 'USD', { USD: 3 }, '10.420', '10420'],
  ])('%d %s with %j → %s (minor %s)', (amount, currency, overrides, decimal, minor) => {
    expect(toWireAmount(amount, currency, overrides)).toEqual({ decimal, minor });
    expect(formatMinorUnits(amount, currency, overrides)).toBe(decimal);
  });

  it('an override the amount cannot be expressed in is refused, not rounded', () => {
    expect(() => toWireAmount(1234, 'KWD', { '*': 2 })).toThrow(
      expect.objectContaining({ code: 'invalid-amount' }) as Error,
    );
    expect(() => toWireAmount(5, 'CLF', { CLF: 0 })).toThrow(/more decimals than the 0/);
  });

  it('the explicit code wins over "*", which wins over ISO', () => {
    expect(wireExponent('JPY', { '*': 2, JPY: 0 })).toBe(0);
    expect(wireExponent('JPY', { '*': 2 })).toBe(2);
    expect(wireExponent('JPY')).toBe(0);
    expect(() => wireExponent('XYZ', { '*': 2 })).toThrow(/currency/);
  });

  it('parse(wire decimal under any override ≥ ISO) gives back the ISO minor units (property)', () => {
    const cur = fc.constantFrom('USD', 'JPY', 'KWD', 'CLF', 'UYW', 'BHD', 'KRW');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 999_999_999 }),
        cur,
        fc.integer({ min: 0, max: 4 }),
        (n, c, extra) => {
          const exp = Math.min(4, currencyExponent(c) + extra);
          const wire = toWireAmount(n, c, { [c]: exp });
          expect(parseMajorUnits(wire.decimal, c)).toBe(n);
          expect(wire.decimal.replace('.', '').replace(/^0+(?=\d)/, '')).toBe(wire.minor);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('parseMajorUnits accepts trailing zeros only', () => {
    expect(parseMajorUnits('10.500', 'USD')).toBe(1050);
    expect(parseMajorUnits('10.5', 'USD')).toBe(1050);
    expect(parseMajorUnits('007', 'JPY')).toBe(7);
    expect(() => parseMajorUnits('10.5', 'JPY')).toThrow(GatewayClientError);
    expect(() => parseMajorUnits('1,00', 'USD')).toThrow(GatewayClientError);
  });
});
