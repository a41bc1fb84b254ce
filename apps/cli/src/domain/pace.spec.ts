import fc from 'fast-check';
import { slotFor } from './pace';

describe('slotFor', () => {
  it('spaces items 1/rate apart from the start', () => {
    expect([0, 1, 2, 3].map((n) => slotFor(n, 4, 1_000))).toEqual([1_000, 1_250, 1_500, 1_750]);
    expect(slotFor(3, 0.5, 0)).toBe(6_000);
  });

  it('property: no second ever holds more than ceil(rate) starts', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 1, max: 400 }),
        (rate, count) => {
          const slots = Array.from({ length: count }, (_, n) => slotFor(n, rate, 0));
          return slots.every((at, n) => n < rate || at - slots[n - rate] >= 1_000);
        },
      ),
    );
  });

  it('refuses a bad index or rate', () => {
    expect(() => slotFor(-1, 1, 0)).toThrow(RangeError);
    expect(() => slotFor(0, 0, 0)).toThrow(RangeError);
    expect(() => slotFor(0, Number.POSITIVE_INFINITY, 0)).toThrow(RangeError);
  });
});
