import fc from 'fast-check';
import { findCardNumbers } from '@payments/core';
import { parseCommand } from './parse-command';
import { captureCommand, saleCommand, voidCommand } from '../test/testing';

const fail = (input: unknown) => {
  const r = parseCommand(input);
  if (r.ok) throw new Error('expected a rejection');
  return r;
};

describe('parseCommand', () => {
  it('accepts a valid sale, capture and void (object, JSON string and bytes)', () => {
    const sale = saleCommand();
    expect(parseCommand(sale)).toEqual({ ok: true, command: sale });
    expect(parseCommand(JSON.stringify(captureCommand())).ok).toBe(true);
    expect(parseCommand(Buffer.from(JSON.stringify(voidCommand()))).ok).toBe(true);
  });

  it('a hosted form carries no card: a sealed card, or a clear one, is refused', () => {
    const { sealedCard, ...fields } = saleCommand();
    const form = { ...fields, type: 'sale-form' };
    expect(parseCommand(form).ok).toBe(true);
    expect(fail({ ...form, sealedCard })).toMatchObject({
      reason: 'SCHEMA_INVALID',
      details: [expect.objectContaining({ path: '$' })],
    });
    expect(fail({ ...form, card: { number: '4444444444444448' } }).reason).toBe('PLAIN_CARD_DATA');
  });

  it('upload-method-url-result takes only Y, N or U; a CRes must be Base64', () => {
    const base = { ...captureCommand(), type: 'upload-method-url-result' };
    expect(parseCommand({ ...base, threeDSCompInd: 'Y' }).ok).toBe(true);
    expect(fail({ ...base, threeDSCompInd: 'maybe' }).reason).toBe('SCHEMA_INVALID');
    const cres = { ...captureCommand(), type: 'upload-cres-result' };
    expect(parseCommand({ ...cres, cRes: 'eyJhIjoxfQ==' }).ok).toBe(true);
    expect(fail({ ...cres, cRes: '<html>' }).reason).toBe('SCHEMA_INVALID');
  });

  it('MALFORMED: not JSON, not an object', () => {
    expect(fail('{nope').reason).toBe('MALFORMED');
    expect(fail([1, 2]).reason).toBe('MALFORMED');
    expect(fail(null).reason).toBe('MALFORMED');
  });

  it('UNKNOWN_TYPE, with whatever ids were readable', () => {
    const r = fail({ ...captureCommand(), type: 'teleport' });
    expect(r.reason).toBe('UNKNOWN_TYPE');
    expect(r.ids.paymentId).toBe(captureCommand().paymentId);
    expect(r.ids.type).toBe('teleport');
  });

  it.each([
    ['float amount', { amount: { minor: 10.5, currency: 'EUR' } }, '$.amount.minor'],
    ['negative amount', { amount: { minor: -1, currency: 'EUR' } }, '$.amount.minor'],
    ['unsafe integer', { amount: { minor: 2 ** 53, currency: 'EUR' } }, '$.amount.minor'],
    ['lower-case currency', { amount: { minor: 1, currency: 'eur' } }, '$.amount.currency'],
    ['bad uuid', { paymentId: 'p-1' }, '$.paymentId'],
    ['bad time', { occurredAt: 'yesterday' }, '$.occurredAt'],
    ['bad email', { customer: { email: 'x', ipAddress: '203.0.113.7' } }, '$.customer.email'],
    ['bad sealed card', { sealedCard: 'not-sealed' }, '$.sealedCard'],
    ['unknown field', { colour: 'red' }, '$'],
  ])('SCHEMA_INVALID: %s', (_name, patch, path) => {
    const r = fail({ ...saleCommand(), ...patch });
    expect(r.reason).toBe('SCHEMA_INVALID');
    expect(r.details.map((d) => d.path)).toContain(path);
  });

  it.each([
    ['card number field', { cardNumber: '4111111111111111' }],
    ['snake_case gateway field', { credit_card_number: '4111111111111111' }],
    ['cvv nested', { customer: { email: 'a@b.co', ipAddress: '203.0.113.7', cvv: '123' } }],
    ['pan in a free-text field', { order: { description: 'card 4111111111111111 pls' } }],
    ['grouped pan in free text', { order: { description: 'card 4111-1111-1111-1111' } }],
    ['expiry fields', { expire_month: 12, expire_year: 2030 }],
    ['a card object', { card: { holder: 'X' } }],
  ])('PLAIN_CARD_DATA: %s, reported by path without the value', (_name, patch) => {
    const r = fail({ ...saleCommand(), ...patch });
    expect(r.reason).toBe('PLAIN_CARD_DATA');
    expect(JSON.stringify(r.details)).not.toMatch(/4111|123"/);
  });

  it('PLAIN_CARD_DATA wins over UNKNOWN_TYPE and schema errors', () => {
    expect(fail({ type: '??', pan: '4111111111111111' }).reason).toBe('PLAIN_CARD_DATA');
  });

  // Found by the fuzz suite (test/fuzz): a card number as a field name, in the type, or nested
  // deeper than the walk used to go reached the command-rejected event (its message quoted the
  // unrecognised key, its commandType the type) or was reported as a mere schema error.
  it.each([
    ['a card number as a field name', { '4111111111111111': 1 }],
    ['a grouped card number as a nested field name', { order: { '4111 1111 1111 1111': 'x' } }],
    ['a card number as the type', { type: '4111111111111111' }],
    [
      'a card number nested 40 levels deep',
      { order: { description: 'x', deep: nest(40, '4111111111111111') } },
    ],
  ])('PLAIN_CARD_DATA: %s, and the card appears nowhere in the answer', (_name, patch) => {
    const r = fail({ ...saleCommand(), ...patch });
    expect(r.reason).toBe('PLAIN_CARD_DATA');
    expect(findCardNumbers(JSON.stringify(r))).toEqual([]);
  });

  it('walks nesting far deeper than any command without overflowing the stack', () => {
    const r = fail({ ...saleCommand(), order: { description: 'x', deep: nest(200_000, 'end') } });
    expect(r.reason).toBe('SCHEMA_INVALID');
  });

  it('does not mistake a random UUID for a grouped card number (found in the benchmark)', () => {
    // "…f6481-2428-4766-9d…" reads as the Luhn-valid 6481 2428 4766 9.
    const id = '984f6481-2428-4766-9dd4-5ae283168d2a';
    expect(parseCommand(saleCommand({ paymentId: id, commandId: id })).ok).toBe(true);
    fc.assert(
      fc.property(fc.uuid({ version: 4 }), fc.uuid({ version: 4 }), (paymentId, commandId) => {
        const r = parseCommand(saleCommand({ paymentId, commandId }));
        expect(r.ok ? 'accepted' : r.reason).toBe('accepted');
      }),
      { numRuns: 20_000 },
    );
  });

  it('still finds a grouped card number standing in text next to ids', () => {
    const r = fail({
      ...saleCommand(),
      order: { description: 'id 984f6481-2428-4766-9dd4-5ae283168d2a card 4111 1111 1111 1111' },
    });
    expect(r.reason).toBe('PLAIN_CARD_DATA');
  });

  it('does not mistake ids, amounts or non-Luhn digit runs for card numbers', () => {
    const sale = saleCommand({
      order: { description: 'ref 1234567890123 and 00000000-0000-0000-0000-000000000000' },
      amount: { minor: 4_111_111_111_111, currency: 'EUR' },
    });
    // 1234567890123 fails Luhn; 4111111111111 (13 digits) fails Luhn too.
    expect(parseCommand(sale).ok).toBe(true);
  });
});

/** `value` inside `depth` nested arrays. */
function nest(depth: number, value: unknown): unknown {
  let out: unknown = value;
  for (let i = 0; i < depth; i++) out = [out];
  return out;
}
