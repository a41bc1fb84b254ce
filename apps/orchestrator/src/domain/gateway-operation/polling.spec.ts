import fc from 'fast-check';
import { HOUR, MINUTE, nextPollDelay, notSentRetryDelay, SECOND } from './polling';

describe('nextPollDelay (facts §4)', () => {
  it.each([
    [0, 0, 3 * SECOND],
    [1, 10 * SECOND, 4 * SECOND],
    [2, 4 * MINUTE, 5 * SECOND],
    [0, 6 * MINUTE, 5 * MINUTE],
    [5, 30 * MINUTE, 10 * MINUTE],
    [0, 2 * HOUR, HOUR],
  ])('attempt %i after %i ms → %i ms', (attempt, elapsed, expected) => {
    expect(nextPollDelay(attempt, elapsed)).toBe(expected);
  });

  it('stays in the band of its phase', () => {
    fc.assert(
      fc.property(fc.nat(10_000), fc.nat(10 * HOUR), (attempt, elapsed) => {
        const d = nextPollDelay(attempt, elapsed);
        if (elapsed < 5 * MINUTE) return d >= 3 * SECOND && d <= 5 * SECOND;
        if (elapsed < HOUR) return d >= 5 * MINUTE && d <= 10 * MINUTE;
        return d === HOUR;
      }),
    );
  });

  it('not-sent resends back off exponentially up to five minutes', () => {
    expect([1, 2, 3, 20].map(notSentRetryDelay)).toEqual([
      SECOND,
      2 * SECOND,
      4 * SECOND,
      5 * MINUTE,
    ]);
  });
});
