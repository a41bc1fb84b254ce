import fc from 'fast-check';
import {
  containsCardNumber,
  findCardNumbers,
  isCardNumber,
  isCardSecurityCodeField,
  luhnValid,
  maskCardNumber,
  maskCardNumbers,
} from './card-number';
import { maskCardDataInJson, maskCardDataInText } from './card-data';

/** A Luhn-valid number of `length` digits (not one digit repeated), from arbitrary leading digits. */
const pan = fc
  .integer({ min: 12, max: 19 })
  .chain((length) =>
    fc.array(fc.integer({ min: 0, max: 9 }), { minLength: length - 1, maxLength: length - 1 }),
  )
  .map((body) => {
    for (let check = 0; check <= 9; check++) {
      const candidate = `${body.join('')}${check}`;
      if (luhnValid(candidate)) return candidate;
    }
    throw new Error('unreachable: one check digit always fits');
  })
  .filter((n) => !/^(\d)\1*$/.test(n));

/** How a person or a system writes it: contiguous, 4-4-4-… or (15 digits) 4-6-5, space or dash. */
function written(digits: string, style: number, separator: string): string {
  if (style === 0) return digits;
  if (style === 2 && digits.length === 15) {
    return [digits.slice(0, 4), digits.slice(4, 10), digits.slice(10)].join(separator);
  }
  const groups = digits.match(/.{1,4}/g) ?? [];
  // A last group of 1-2 digits is joined to the one before (4-4-4-4-3 stays, 4-4-4-1 → 4-4-5).
  if (groups.length > 1 && groups[groups.length - 1].length < 3) {
    const tail = groups.pop() ?? '';
    groups[groups.length - 1] += tail;
  }
  return groups.join(separator);
}

describe('card-number detector and masker', () => {
  it.each([
    ['4111111111111111', '411111******1111'],
    ['card 4000 0000 0000 0002 exp 12/30', 'card 400000******0002 exp 12/30'],
    ['amex 3782-822463-10005.', 'amex 378282******0005.'],
    ['4111 1111 1111 1111 2030', '411111******1111 2030'],
    ['two: 4111 1111 1111 1111 5555 5555 5555 4444', 'two: 411111******1111 555555******4444'],
    ['"pan":"4012888888881881"', '"pan":"401288******1881"'],
    ['12-digit 123456789015', '12-digit 123456******9015'],
  ])('masks %s', (input, expected) => {
    expect(maskCardNumbers(input)).toBe(expected);
  });

  it.each([
    ['not Luhn', 'id 4111111111111112'],
    ['too long', '41111111111111110000000'],
    ['too short (11 digits)', 'ref 12345678903'],
    ['one digit repeated', 'placeholder 0000 0000 0000 0000 and 0000000000000'],
    ['a grouped run joined to an identifier', 'ord-4111-1111-1111-1111 and 4111-1111-1111-1111-x9'],
    ['a grouped run touching letters', 'x4111 1111 1111 1111'],
    ['a UUID whose digit segments pass Luhn', '98765432-1234-1234-1234-123453abcdef'],
    ['the UUID found in the benchmark', '984f6481-2428-4766-9dd4-5ae283168d2a'],
  ])('leaves %s alone', (_name, input) => {
    expect(findCardNumbers(input)).toEqual([]);
    expect(maskCardNumbers(input)).toBe(input);
  });

  it('reports positions and digits of each card in the original text', () => {
    const text = 'a 4111-1111-1111-1111 b 5555555555554444';
    expect(findCardNumbers(text)).toEqual([
      { start: 2, end: 21, digits: '4111111111111111' },
      { start: 24, end: 40, digits: '5555555555554444' },
    ]);
    expect(containsCardNumber(text)).toBe(true);
  });

  it('checks Luhn and the length bounds', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(luhnValid('')).toBe(false);
    expect(luhnValid('4111-1111')).toBe(false);
    expect(isCardNumber('123456789015')).toBe(luhnValid('123456789015'));
    expect(isCardNumber('12345678903')).toBe(false);
    expect(maskCardNumber('378282246310005')).toBe('378282******0005');
  });

  it('names CVV-like fields in any spelling', () => {
    for (const name of [
      'cvv',
      'CVV2',
      'cvc',
      'securityCode',
      'security_code',
      'card-security-code',
    ]) {
      expect(isCardSecurityCodeField(name)).toBe(true);
    }
    for (const name of ['cardNumber', 'currency', 'code', 'cv']) {
      expect(isCardSecurityCodeField(name)).toBe(false);
    }
  });

  it('property: a UUID in arbitrary text is never touched', () => {
    fc.assert(
      fc.property(fc.string(), fc.uuid(), fc.string(), (before, id, after) => {
        expect(maskCardNumbers(`${before} ${id} ${after}`)).toContain(id);
      }),
      { numRuns: 20_000 },
    );
  });

  it('property: every Luhn-valid card number standing in arbitrary text is masked', () => {
    fc.assert(
      fc.property(
        fc.string(),
        pan,
        fc.integer({ min: 0, max: 2 }),
        fc.constantFrom(' ', '-'),
        fc.string(),
        (before, digits, style, separator, after) => {
          const card = written(digits, style, separator);
          const out = maskCardNumbers(`${before} ${card} ${after}`);
          expect(out).not.toContain(card);
          expect(out).not.toContain(digits);
          expect(out).toContain('******');
        },
      ),
      { numRuns: 20_000 },
    );
  });
});

describe('card data in whole messages', () => {
  it('JSON: masks card numbers in strings and numbers, blanks CVV-like fields, keeps the rest', () => {
    const message = {
      type: 'sale',
      paymentId: '984f6481-2428-4766-9dd4-5ae283168d2a',
      card: { number: '4111 1111 1111 1111', cvv: '123', CVV2: 456, expiryMonth: 12 },
      notes: ['pan 5555555555554444'],
      raw: 4012888888881881,
      security_code: '999',
    };
    const before = JSON.stringify(message);
    expect(maskCardDataInJson(message)).toEqual({
      type: 'sale',
      paymentId: '984f6481-2428-4766-9dd4-5ae283168d2a',
      card: { number: '411111******1111', cvv: '', CVV2: '', expiryMonth: 12 },
      notes: ['pan 555555******4444'],
      raw: '401288******1881',
      security_code: '',
    });
    expect(JSON.stringify(message)).toBe(before);
  });

  it('JSON nested deeper than the walk goes is masked as text', () => {
    let deep: unknown = { cvv: '123', pan: '4111111111111111' };
    for (let i = 0; i < 100; i++) deep = { inner: deep };
    const out = JSON.stringify(maskCardDataInJson(deep));
    expect(out).not.toContain('4111111111111111');
    expect(out).not.toContain('123');
  });

  it.each([
    [
      'broken JSON',
      '{"cvv":"123","number":"4111111111111111", broken',
      '{"cvv":"","number":"411111******1111", broken',
    ],
    [
      'form encoding',
      'cvv2=123&credit_card_number=4111111111111111&amount=10',
      'cvv2=&credit_card_number=411111******1111&amount=10',
    ],
    [
      'free text',
      "securityCode: 1234, card 4111-1111-1111-1111 'cvc'='987'",
      "securityCode: , card 411111******1111 'cvc'=''",
    ],
    ['nothing to mask', 'code=123&order=42', 'code=123&order=42'],
  ])('text (%s)', (_name, input, expected) => {
    expect(maskCardDataInText(input)).toBe(expected);
  });
});
