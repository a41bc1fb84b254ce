import fc from 'fast-check';
import { luhnValid } from '@payments/core';
import { scrubString, scrubValue } from './scrub';

describe('scrubString', () => {
  it('leaves UUIDs intact (their digit segments can read as a Luhn-valid grouped number)', () => {
    // 1234-1234-1234-123453 (from the middle of this id) is 18 digits and passes Luhn.
    const id = '98765432-1234-1234-1234-123453abcdef';
    expect(luhnValid('123412341234123453')).toBe(true);
    expect(scrubString(`payment ${id} approved`)).toBe(`payment ${id} approved`);
    fc.assert(
      fc.property(fc.uuid(), (uuid) => scrubString(`id=${uuid};`) === `id=${uuid};`),
      { numRuns: 20_000 },
    );
    expect(scrubString(`${id} card 4111 1111 1111 1111`)).toBe(`${id} card 411111******1111`);
  });

  it.each([
    ['4111111111111111', '411111******1111'],
    ['card 4000 0000 0000 0002 exp 12/30', 'card 400000******0002 exp 12/30'],
    ['amex 3782-822463-10005.', 'amex 378282******0005.'],
    ['4111 1111 1111 1111 2030', '411111******1111 2030'],
    ['6011111111111117', '601111******1117'],
    ['6250941006528599', '625094******8599'],
  ])('masks %s', (input, expected) => {
    expect(scrubString(input)).toBe(expected);
  });

  it('checks Luhn', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
  });

  it('does not touch non-Luhn or too long digit runs', () => {
    expect(scrubString('id 4111111111111112')).toBe('id 4111111111111112');
    expect(scrubString('41111111111111110000000')).toBe('41111111111111110000000');
  });

  it('drops PEM private keys, including truncated ones', () => {
    expect(
      scrubString('a -----BEGIN RSA PRIVATE KEY-----\nAAA\n-----END RSA PRIVATE KEY----- b'),
    ).toBe('a [PRIVATE KEY REDACTED] b');
    expect(scrubString('x -----BEGIN PRIVATE KEY-----\nAAAA')).toBe('x [PRIVATE KEY REDACTED]');
  });
});

describe('scrubValue', () => {
  it('redacts sensitive keys at any depth without mutating the input', () => {
    const input = { l1: { l2: { l3: { l4: { l5: { Control_Key: 'k', safe: 'v' } } } } } };
    const out = scrubValue(input) as typeof input;
    expect(out.l1.l2.l3.l4.l5).toEqual({ Control_Key: '[REDACTED]', safe: 'v' });
    expect(input.l1.l2.l3.l4.l5.Control_Key).toBe('k');
  });

  it('survives cycles', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    expect(scrubValue(a)).toEqual({ name: 'a', self: '[Circular]' });
  });
});
