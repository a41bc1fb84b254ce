import { type BreakerState, CircuitBreaker } from './circuit-breaker';
import { ManualClock } from '@payments/core';

function setup(threshold = 3, cooldownMs = 10_000) {
  const clock = new ManualClock();
  const changes: BreakerState[] = [];
  const breaker = new CircuitBreaker({ failureThreshold: threshold, cooldownMs }, clock, (s) =>
    changes.push(s),
  );
  const fail = () => breaker.tryAcquire()?.failure();
  return { clock, breaker, changes, fail };
}

describe('CircuitBreaker', () => {
  it('opens after N consecutive failures and refuses calls', () => {
    const { breaker, fail, changes } = setup(3);
    fail();
    fail();
    expect(breaker.state).toBe('closed');
    fail();
    expect(breaker.state).toBe('open');
    expect(breaker.isRefusing()).toBe(true);
    expect(breaker.tryAcquire()).toBeUndefined();
    expect(changes).toEqual(['open']);
  });

  it('a success in between resets the count', () => {
    const { breaker, fail } = setup(2);
    fail();
    breaker.tryAcquire()?.success();
    fail();
    expect(breaker.state).toBe('closed');
  });

  it('half-opens after the cool-down and lets exactly one trial through', () => {
    const { breaker, fail, clock } = setup(1, 5_000);
    fail();
    clock.advance(4_999);
    expect(breaker.tryAcquire()).toBeUndefined();
    clock.advance(1);
    expect(breaker.state).toBe('half-open');
    const trial = breaker.tryAcquire();
    expect(trial).toBeDefined();
    expect(breaker.tryAcquire()).toBeUndefined();
    expect(breaker.isRefusing()).toBe(true);
    trial?.success();
    expect(breaker.state).toBe('closed');
    expect(breaker.tryAcquire()).toBeDefined();
  });

  it('halfOpensAt: the end of the cool-down while open; unknown while closed or during a trial', () => {
    const { breaker, fail, clock } = setup(2, 5_000);
    expect(breaker.halfOpensAt()).toBeUndefined();
    fail();
    clock.advance(1_234);
    fail();
    const openedAt = clock.now();
    expect(breaker.halfOpensAt()).toBe(openedAt + 5_000);
    clock.advance(4_999);
    expect(breaker.halfOpensAt()).toBe(openedAt + 5_000);
    clock.advance(1);
    const trial = breaker.tryAcquire();
    expect(breaker.halfOpensAt()).toBeUndefined();
    // The trial fails: open again, half-opening one full cool-down later.
    clock.advance(300);
    trial?.failure();
    expect(breaker.halfOpensAt()).toBe(openedAt + 5_300 + 5_000);
  });

  it('a failed trial opens it again for a full cool-down', () => {
    const { breaker, fail, clock, changes } = setup(1, 1_000);
    fail();
    clock.advance(1_000);
    breaker.tryAcquire()?.failure();
    expect(breaker.state).toBe('open');
    clock.advance(999);
    expect(breaker.state).toBe('open');
    clock.advance(1);
    expect(breaker.state).toBe('half-open');
    expect(changes).toEqual(['open', 'half-open', 'open', 'half-open']);
  });

  it('a cancelled trial frees the slot without changing state; a permit counts once', () => {
    const { breaker, fail, clock } = setup(1, 0);
    fail();
    clock.advance(1);
    const trial = breaker.tryAcquire();
    trial?.cancel();
    trial?.failure();
    expect(breaker.state).toBe('half-open');
    expect(breaker.tryAcquire()).toBeDefined();
  });
});
