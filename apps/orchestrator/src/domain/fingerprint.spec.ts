import { saleCommand } from '@payments/contracts/testing';
import { canonicalJson, commandFingerprint, idempotencyVerdict } from './fingerprint';

describe('commandFingerprint', () => {
  const sale = saleCommand();

  it('is independent of key order', () => {
    const reordered = Object.fromEntries(Object.entries(sale).reverse()) as typeof sale;
    expect(commandFingerprint(reordered)).toBe(commandFingerprint(sale));
    expect(canonicalJson({ b: 1, a: { d: 2, c: [3, { f: 1, e: 0 }] } })).toBe(
      '{"a":{"c":[3,{"e":0,"f":1}],"d":2},"b":1}',
    );
  });

  it('changes with the body: amount, currency, customer', () => {
    const base = commandFingerprint(sale);
    expect(commandFingerprint({ ...sale, amount: { minor: 10_001, currency: 'EUR' } })).not.toBe(
      base,
    );
    expect(commandFingerprint({ ...sale, amount: { minor: 10_000, currency: 'USD' } })).not.toBe(
      base,
    );
    expect(
      commandFingerprint({ ...sale, customer: { ...sale.customer, email: 'x@example.com' } }),
    ).not.toBe(base);
  });

  it('ignores the re-stamped time and the re-sealed card of a producer retry', () => {
    expect(
      commandFingerprint({
        ...sale,
        occurredAt: '2030-01-01T00:00:00.000Z',
        sealedCard: 'v1..b3RoZXI.aXY.Y3Q.dGFn',
      }),
    ).toBe(commandFingerprint(sale));
  });

  it('verdicts: new, duplicate, conflict', () => {
    const f = commandFingerprint(sale);
    expect(idempotencyVerdict(undefined, f)).toBe('new');
    expect(idempotencyVerdict(f, f)).toBe('duplicate');
    expect(
      idempotencyVerdict(f, commandFingerprint({ ...sale, amount: { minor: 1, currency: 'EUR' } })),
    ).toBe('conflict');
  });
});
