import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { exponentOf, formatMinor, parseMajorAmount, wireMinor } from './money';
import { brandOf, luhnValid, maskPan } from './luhn';
import { parseForm } from './form';

describe('money', () => {
  it('converts the published minor-unit examples', () => {
    const v = JSON.parse(
      readFileSync(join(__dirname, '../../../../../shared/vectors/public-vectors.json'), 'utf8'),
    ).vectors.find((x: { id: string }) => x.id === 'amount-minor-units-doc');
    const got = v.inputs.cases.map((c: { amount: string; currency: string }) => {
      const p = parseMajorAmount(c.amount, c.currency);
      return p.ok ? String(p.minor) : p.reason;
    });
    expect(got).toEqual(v.expected.minor_units);
  });

  it('uses the ISO 4217 exponent', () => {
    expect(parseMajorAmount('100', 'JPY')).toEqual({ ok: true, minor: 100 });
    expect(parseMajorAmount('1.5', 'JPY').ok).toBe(false);
    expect(parseMajorAmount('1.234', 'KWD')).toEqual({ ok: true, minor: 1234 });
    expect(parseMajorAmount('10.5', 'USD')).toEqual({ ok: true, minor: 1050 });
    expect(parseMajorAmount('0.10', 'USD')).toEqual({ ok: true, minor: 10 });
    expect(parseMajorAmount('10.500', 'USD')).toEqual({ ok: true, minor: 1050 });
  });

  it('four-decimal currencies (CLF, UYW) use four decimals, not two', () => {
    expect([exponentOf('CLF'), exponentOf('UYW')]).toEqual([4, 4]);
    expect(parseMajorAmount('12.3456', 'CLF')).toEqual({ ok: true, minor: 123456 });
    expect(parseMajorAmount('0.0001', 'UYW')).toEqual({ ok: true, minor: 1 });
    expect(parseMajorAmount('1.00001', 'UYW').ok).toBe(false);
    expect(parseMajorAmount('1', 'CLF')).toEqual({ ok: true, minor: 10000 });
    expect(formatMinor(123456, 'CLF')).toBe('12.3456');
    expect(formatMinor(1, 'UYW')).toBe('0.0001');
  });

  it('an endpoint exponent changes the decimals on the wire, not the ISO minor units inside', () => {
    // An endpoint expecting two decimals for JPY (what public clients send): 500 yen.
    expect(parseMajorAmount('500.00', 'JPY', 2)).toEqual({ ok: true, minor: 500 });
    expect(parseMajorAmount('500', 'JPY', 2)).toEqual({ ok: true, minor: 500 });
    expect(parseMajorAmount('500.50', 'JPY', 2).ok).toBe(false); // no half yen
    expect(formatMinor(500, 'JPY', 2)).toBe('500.00');
    expect(wireMinor(500, 'JPY', 2)).toBe('50000');
    // KWD (ISO 3) on an endpoint with two decimals: a third decimal is refused.
    expect(parseMajorAmount('1.23', 'KWD', 2)).toEqual({ ok: true, minor: 1230 });
    expect(parseMajorAmount('1.234', 'KWD', 2)).toEqual({
      ok: false,
      reason: 'amount has more than 2 decimal places for KWD',
    });
    expect(formatMinor(1230, 'KWD', 2)).toBe('1.23');
    expect(wireMinor(1230, 'KWD', 2)).toBe('123');
    // CLF (ISO 4) on an endpoint with two decimals.
    expect(parseMajorAmount('12.34', 'CLF', 2)).toEqual({ ok: true, minor: 123400 });
    expect(formatMinor(123400, 'CLF', 2)).toBe('12.34');
    // Without a setting: ISO.
    expect(wireMinor(1500, 'JPY')).toBe('1500');
    expect(wireMinor(123456, 'CLF')).toBe('123456');
  });

  it('refuses what is not a plain decimal', () => {
    for (const bad of ['', '-1', '1e3', '1,00', ' 1', '1.', '.5', '0x10', '1.001', '12345678901']) {
      expect(parseMajorAmount(bad, 'USD').ok).toBe(false);
    }
  });

  it('round-trips through the decimal string (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 99_999_999 }),
        fc.constantFrom('USD', 'JPY', 'KWD', 'CLF', 'UYW'),
        fc.integer({ min: 0, max: 4 }),
        (n, cur, wire) => {
          // Amounts a wire exponent below ISO can express end in zeros.
          const minor = n * 10 ** Math.max(0, exponentOf(cur) - wire);
          const text = formatMinor(minor, cur, wire);
          const back = parseMajorAmount(text, cur, wire);
          const digits = text.replace('.', '').replace(/^0+(?=\d)/, '');
          return back.ok && back.minor === minor && digits === wireMinor(minor, cur, wire);
        },
      ),
    );
  });
});

describe('cards', () => {
  it('checks Luhn', () => {
    expect(luhnValid('4444444444444448')).toBe(true);
    expect(luhnValid('4444444444444444')).toBe(false);
    expect(luhnValid('4485940822379130')).toBe(true);
    expect(luhnValid('4444333322221111')).toBe(true);
    expect(luhnValid('44443333222211')).toBe(false);
    expect(luhnValid('abcd')).toBe(false);
  });

  it('names brands and masks', () => {
    expect(brandOf('4444444444444448')).toBe('VISA');
    expect(brandOf('5555555555554444')).toBe('MASTERCARD');
    expect(maskPan('4444444444444448')).toBe('444444******4448');
  });
});

describe('form bodies', () => {
  it('decodes + as space and keeps duplicates in order', () => {
    const p = parseForm('a=1+2&b=%C3%A9&a=3&flag');
    if (!p.ok) throw new Error(p.reason);
    expect(p.body.pairs).toEqual([
      ['a', '1 2'],
      ['b', 'é'],
      ['a', '3'],
      ['flag', ''],
    ]);
    expect(p.body.fields.get('a')).toBe('1 2');
  });

  it('refuses broken escapes', () => {
    expect(parseForm('a=%zz').ok).toBe(false);
    expect(parseForm('=x').ok).toBe(false);
  });
});
