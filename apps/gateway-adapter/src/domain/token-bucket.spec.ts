import { ManualClock } from '@payments/core';
import { TokenBucket } from './token-bucket';

describe('TokenBucket', () => {
  it('lets a burst through at once, then books future tokens at the rate', () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket({ ratePerSecond: 10, burst: 3 }, clock);
    expect([bucket.reserve(0), bucket.reserve(0), bucket.reserve(0)]).toEqual([0, 0, 0]);
    // The 4th token arrives after 100 ms, the 5th after 200 ms.
    expect(bucket.reserve(1000)).toBe(100);
    expect(bucket.reserve(1000)).toBe(200);
  });

  it('refuses without consuming when the wait would exceed the bound', () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket({ ratePerSecond: 1, burst: 1 }, clock);
    expect(bucket.reserve(0)).toBe(0);
    expect(bucket.reserve(500)).toBeUndefined();
    expect(bucket.available()).toBe(0);
    expect(bucket.reserve(1000)).toBe(1000);
  });

  it('refills with time but never beyond the burst', () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket({ ratePerSecond: 2, burst: 2 }, clock);
    bucket.reserve(0);
    bucket.reserve(0);
    expect(bucket.reserve(0)).toBeUndefined();
    clock.advance(500);
    expect(bucket.reserve(0)).toBe(0);
    clock.advance(60_000);
    expect(bucket.available()).toBe(2);
  });

  it('availableAt: now while a token is there, else when the next one is due after the bookings', () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket({ ratePerSecond: 4, burst: 2 }, clock);
    const t0 = clock.now();
    expect(bucket.availableAt()).toBe(t0);
    bucket.reserve(0);
    bucket.reserve(0);
    // Empty: the next token refills in 1000 / 4 ms.
    expect(bucket.availableAt()).toBe(t0 + 250);
    // Two more booked ahead (waits of 250 and 500 ms): the next free one is due after them.
    expect(bucket.reserve(1000)).toBe(250);
    expect(bucket.reserve(1000)).toBe(500);
    expect(bucket.availableAt()).toBe(t0 + 750);
    // The instant a refused reservation is told to come back is the wait it was refused for.
    expect(bucket.reserve(700)).toBeUndefined();
    expect(bucket.availableAt()).toBe(t0 + 750);
    clock.advance(750);
    expect(bucket.reserve(0)).toBe(0);
    // A higher level: two whole tokens from empty.
    expect(bucket.availableAt(2)).toBe(clock.now() + 500);
  });

  it('rejects nonsense options', () => {
    expect(() => new TokenBucket({ ratePerSecond: 0, burst: 1 }, new ManualClock())).toThrow();
    expect(() => new TokenBucket({ ratePerSecond: 1, burst: 0 }, new ManualClock())).toThrow();
  });
});
