import fc from 'fast-check';
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

  describe('status queries (issue #38: they move no money)', () => {
    it('are never refused while open, and change nothing then', () => {
      const { breaker, fail, clock, changes } = setup(2, 5_000);
      fail();
      fail();
      expect(breaker.state).toBe('open');
      const openedUntil = breaker.halfOpensAt();
      const answered = breaker.statusPermit();
      answered.success();
      const failed = breaker.statusPermit();
      failed.failure();
      // Neither the answer ends the cool-down early nor the failure extends it.
      expect(breaker.state).toBe('open');
      expect(breaker.halfOpensAt()).toBe(openedUntil);
      expect(breaker.tryAcquire()).toBeUndefined();
      clock.advance(5_000);
      expect(breaker.state).toBe('half-open');
      expect(changes).toEqual(['open', 'half-open']);
    });

    it('count towards opening it while closed, like any call', () => {
      const { breaker, fail } = setup(3);
      fail();
      breaker.statusPermit().failure();
      expect(breaker.state).toBe('closed');
      breaker.statusPermit().success();
      fail();
      fail();
      expect(breaker.state).toBe('closed');
      breaker.statusPermit().failure();
      expect(breaker.state).toBe('open');
    });

    it('are the trial when half-open: an answer closes it, a failure opens it for a full cool-down', () => {
      const { breaker, fail, clock } = setup(1, 1_000);
      fail();
      clock.advance(1_000);
      const trial = breaker.statusPermit();
      // The trial is in flight: a money operation is refused, another status query passes.
      expect(breaker.tryAcquire()).toBeUndefined();
      breaker.statusPermit().failure();
      expect(breaker.state).toBe('half-open');
      trial.failure();
      expect(breaker.state).toBe('open');
      expect(breaker.halfOpensAt()).toBe(clock.now() + 1_000);
      clock.advance(1_000);
      breaker.statusPermit().success();
      expect(breaker.state).toBe('closed');
      expect(breaker.tryAcquire()).toBeDefined();
    });

    it('a money trial in flight is not ended by a status query passing beside it', () => {
      const { breaker, fail, clock } = setup(1, 1_000);
      fail();
      clock.advance(1_000);
      const trial = breaker.tryAcquire();
      expect(trial).toBeDefined();
      breaker.statusPermit().success();
      expect(breaker.state).toBe('half-open');
      expect(breaker.isRefusing()).toBe(true);
      trial?.success();
      expect(breaker.state).toBe('closed');
    });

    it('property: status queries made while it is open never change what money operations are let through', () => {
      // A script of money calls and clock moves, run twice: alone, and with status queries of
      // any outcome wherever the breaker is open. Every money admission and the states must be
      // the same: an open breaker's cool-down is money's, whatever the status queries meet.
      type Step =
        | { kind: 'money'; ok: boolean }
        | { kind: 'wait'; ms: number }
        | { kind: 'status'; ok: boolean };
      const step: fc.Arbitrary<Step> = fc.oneof(
        fc.record({ kind: fc.constant('money' as const), ok: fc.boolean() }),
        fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 3_000 }) }),
        fc.record({ kind: fc.constant('status' as const), ok: fc.boolean() }),
      );
      fc.assert(
        fc.property(
          fc.array(step, { maxLength: 60 }),
          fc.integer({ min: 1, max: 4 }),
          fc.integer({ min: 0, max: 5_000 }),
          (script, threshold, cooldownMs) => {
            const run = (withStatus: boolean) => {
              const clock = new ManualClock();
              const breaker = new CircuitBreaker(
                { failureThreshold: threshold, cooldownMs },
                clock,
              );
              const seen: string[] = [];
              for (const s of script) {
                if (s.kind === 'wait') clock.advance(s.ms);
                else if (s.kind === 'money') {
                  const permit = breaker.tryAcquire();
                  seen.push(permit === undefined ? 'refused' : 'let through');
                  if (s.ok) permit?.success();
                  else permit?.failure();
                } else if (withStatus && breaker.state === 'open') {
                  const permit = breaker.statusPermit();
                  if (s.ok) permit.success();
                  else permit.failure();
                }
                seen.push(breaker.state);
              }
              return seen;
            };
            expect(run(true)).toEqual(run(false));
          },
        ),
      );
    });
  });
});
