import fc from 'fast-check';
import { vector } from '../test/support';
import { GatewayClientError } from './errors';
import { currencyExponent, formatMinorUnits, parseMajorUnits } from './money';

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

  it('parseMajorUnits accepts trailing zeros only', () => {
    expect(parseMajorUnits('10.500', 'USD')).toBe(1050);
    expect(parseMajorUnits('10.5', 'USD')).toBe(1050);
    expect(parseMajorUnits('007', 'JPY')).toBe(7);
    expect(() => parseMajorUnits('10.5', 'JPY')).toThrow(GatewayClientError);
    expect(() => parseMajorUnits('1,00', 'USD')).toThrow(GatewayClientError);
  });
});
