import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { luhnValid } from '@payments/core';
import { cardSummary, type Card } from './card';
import { open, parseSealed, seal, SealingError } from './sealing';

const pair = () =>
  generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
const adapter = pair();
const other = pair();

const card: Card = {
  number: '4444444444444448',
  expiryMonth: 12,
  expiryYear: 2030,
  cvv: '123',
  holderName: 'JANE DOE',
};
const paymentId = '0f8b8c1e-4d4a-4c4e-9a53-6f1f0c2d3e4a';

const code = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof SealingError) return e.code;
    throw e;
  }
  throw new Error('expected a SealingError');
};

describe('card sealing', () => {
  it('round-trips and carries the key id', () => {
    const sealed = seal(card, adapter.publicKey, paymentId, { keyId: 'adapter-2025' });
    expect(open(sealed, adapter.privateKey, paymentId)).toEqual(card);
    expect(parseSealed(sealed).keyId).toBe('adapter-2025');
  });

  it('opens with a parsed KeyObject as with the PEM, and refuses another parsed key', () => {
    const sealed = seal(card, adapter.publicKey, paymentId);
    expect(open(sealed, createPrivateKey(adapter.privateKey), paymentId)).toEqual(card);
    expect(code(() => open(sealed, createPrivateKey(other.privateKey), paymentId))).toBe(
      'SEAL_OPEN_FAILED',
    );
  });

  it('never contains the PAN, CVV or holder in any encoding we can think of', () => {
    const sealed = seal(card, adapter.publicKey, paymentId);
    for (const secret of [card.number, 'JANE DOE']) {
      expect(sealed).not.toContain(secret);
      expect(sealed).not.toContain(Buffer.from(secret).toString('base64url'));
      expect(sealed).not.toContain(Buffer.from(secret).toString('hex'));
    }
  });

  it('is randomised: sealing twice gives different strings', () => {
    expect(seal(card, adapter.publicKey, paymentId)).not.toBe(
      seal(card, adapter.publicKey, paymentId),
    );
  });

  it('does not open under another payment id (no replay into another payment)', () => {
    const sealed = seal(card, adapter.publicKey, paymentId);
    expect(code(() => open(sealed, adapter.privateKey, 'another-payment'))).toBe(
      'SEAL_OPEN_FAILED',
    );
  });

  it('does not open with another key', () => {
    const sealed = seal(card, adapter.publicKey, paymentId);
    expect(code(() => open(sealed, other.privateKey, paymentId))).toBe('SEAL_OPEN_FAILED');
  });

  it.each([2, 3, 4, 5])('detects tampering with part %i', (index) => {
    const parts = seal(card, adapter.publicKey, paymentId).split('.');
    const bytes = Buffer.from(parts[index], 'base64url');
    bytes[0] = bytes[0] ^ 0x01;
    parts[index] = bytes.toString('base64url');
    expect(() => open(parts.join('.'), adapter.privateKey, paymentId)).toThrow(SealingError);
  });

  it('rejects malformed envelopes and unknown versions', () => {
    expect(code(() => open('v1.a.b', adapter.privateKey, paymentId))).toBe('SEAL_MALFORMED');
    const parts = seal(card, adapter.publicKey, paymentId).split('.');
    parts[0] = 'v9';
    expect(code(() => open(parts.join('.'), adapter.privateKey, paymentId))).toBe(
      'SEAL_UNSUPPORTED_VERSION',
    );
  });

  it('refuses to seal an invalid card (Luhn, month, cvv)', () => {
    expect(
      code(() => seal({ ...card, number: '4444444444444449' }, adapter.publicKey, paymentId)),
    ).toBe('SEAL_INVALID_CARD');
    expect(code(() => seal({ ...card, expiryMonth: 13 }, adapter.publicKey, paymentId))).toBe(
      'SEAL_INVALID_CARD',
    );
    expect(code(() => seal({ ...card, cvv: '12' }, adapter.publicKey, paymentId))).toBe(
      'SEAL_INVALID_CARD',
    );
  });
});

describe('card helpers', () => {
  it.each([
    ['4444444444444448', true],
    ['4485940822379130', true],
    ['4485940822379131', false],
    ['79927398713', true],
  ])('luhn(%s) = %s', (n, ok) => expect(luhnValid(n)).toBe(ok));

  it.each([
    ['4444444444444448', { bin: '444444', lastFour: '4448', brand: 'VISA' }],
    ['5203060000001236', { bin: '520306', lastFour: '1236', brand: 'MASTERCARD' }],
    ['2221000000000009', { bin: '222100', lastFour: '0009', brand: 'MASTERCARD' }],
    ['377679000000006', { bin: '377679', lastFour: '0006', brand: 'AMEX' }],
    ['2200000000000004', { bin: '220000', lastFour: '0004', brand: 'MIR' }],
  ])('cardSummary(%s)', (number, expected) => expect(cardSummary({ number })).toEqual(expected));
});
