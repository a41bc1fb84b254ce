import { BackgroundLoop, type RoundOutcome } from './background-loop';
import { ManualClock, systemClock } from './clock';
import { newId, SequentialIds, uuidGenerator } from './ids';
import { sleep, TimeoutError, withTimeout } from './timeout';
import { WakeableSleep } from './wakeable-sleep';

const HOUR = 3_600_000;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Resolves once `condition` holds (polled on the event loop; no timing asserted). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

describe('clocks and ids', () => {
  it('a manual clock moves only when told', () => {
    const clock = new ManualClock(1000);
    expect(clock.now()).toBe(1000);
    clock.advance(250);
    expect(clock.now()).toBe(1250);
    clock.set(5);
    expect(clock.now()).toBe(5);
    expect(typeof systemClock.now()).toBe('number');
  });

  it('ids are UUID v4, random ones distinct, sequential ones predictable', () => {
    const a = newId();
    expect(a).toMatch(UUID_V4);
    expect(uuidGenerator.next()).not.toBe(a);
    const ids = new SequentialIds();
    expect([ids.next(), ids.next()]).toEqual([
      '00000000-0000-4000-8000-000000000001',
      '00000000-0000-4000-8000-000000000002',
    ]);
    expect(ids.next()).toMatch(UUID_V4);
  });
});

describe('withTimeout and sleep', () => {
  it('passes the result or the failure of work that settles in time', async () => {
    await expect(withTimeout(Promise.resolve(7), HOUR, 'x')).resolves.toBe(7);
    await expect(withTimeout(8, HOUR, 'x')).resolves.toBe(8);
    await expect(withTimeout(Promise.reject(new Error('boom')), HOUR, 'x')).rejects.toThrow('boom');
  });

  it('rejects with a TimeoutError naming what did not answer', async () => {
    const never = new Promise<never>(() => undefined);
    const error = await withTimeout(never, 1, 'broker connect').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toBe('broker connect: no answer within 1 ms');
  });

  it('sleep resolves true when it ran out, false when aborted (before or during)', async () => {
    await expect(sleep(1)).resolves.toBe(true);
    const aborted = new AbortController();
    aborted.abort();
    await expect(sleep(HOUR, aborted.signal)).resolves.toBe(false);
    const later = new AbortController();
    const sleeping = sleep(HOUR, later.signal);
    later.abort();
    await expect(sleeping).resolves.toBe(false);
  });

  it('a wakeable sleep keeps a wake-up that came while nobody slept, until consumed', async () => {
    const sleeper = new WakeableSleep();
    sleeper.wake();
    await sleeper.sleep(HOUR); // returns at once: the wake-up was pending
    sleeper.consume();
    const sleeping = sleeper.sleep(HOUR);
    sleeper.wake();
    await sleeping;
  });
});

describe('BackgroundLoop', () => {
  function loopWith(rounds: Array<RoundOutcome | Error>, backoff = (n: number) => n * 0) {
    const calls: number[] = [];
    const errors: Array<[string, number, number]> = [];
    let round = 0;
    const loop = new BackgroundLoop({
      idleMs: HOUR,
      backoffMs: (failures) => {
        calls.push(failures);
        return backoff(failures);
      },
      onError: (error, failures, delay) => errors.push([String(error), failures, delay]),
      runOnce: () => {
        const next = rounds[Math.min(round, rounds.length - 1)];
        round += 1;
        return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
      },
    });
    return { loop, calls, errors, rounds: () => round };
  }

  it('runs busy rounds back to back, then waits after an idle one until woken', async () => {
    const { loop, rounds } = loopWith(['busy', 'busy', 'idle']);
    loop.start();
    await until(() => rounds() === 3);
    // Idle: with an hour to wait, only wake() can start round 4.
    await new Promise((resolve) => setImmediate(resolve));
    expect(rounds()).toBe(3);
    loop.wake();
    await until(() => rounds() === 4);
    await loop.stop();
    expect(loop.isRunning).toBe(false);
  });

  it('backs off after each failure with the failure count, and resets it after a success', async () => {
    const boom = new Error('boom');
    const { loop, calls, errors, rounds } = loopWith([boom, boom, 'busy', boom, 'idle'], () => 0);
    loop.start();
    await until(() => rounds() >= 5);
    await loop.stop();
    expect(calls.slice(0, 3)).toEqual([1, 2, 1]);
    expect(errors[0]).toEqual(['Error: boom', 1, 0]);
  });

  it('ticking: a round per tick (waits after every round, busy or not), doubling waits after failures up to the cap', async () => {
    const delays: number[] = [];
    let rounds = 0;
    const loop = BackgroundLoop.ticking({
      everyMs: HOUR,
      maxBackoffMs: 5 * HOUR,
      round: async () => {
        rounds += 1;
        if (rounds <= 4) throw new Error(`round ${rounds}`);
      },
      onError: (_error, _failures, delayMs) => {
        delays.push(delayMs);
        loop.wake();
      },
    });
    loop.start();
    await until(() => rounds >= 5);
    // The fifth round succeeded: the loop now waits a whole tick (an hour) for the next.
    await new Promise((resolve) => setImmediate(resolve));
    expect(rounds).toBe(5);
    await loop.stop();
    expect(delays).toEqual([2 * HOUR, 4 * HOUR, 5 * HOUR, 5 * HOUR]);
  });

  it('stop() interrupts the idle wait and aborts the signal of a running round', async () => {
    let seen: AbortSignal | undefined;
    let release: () => void = () => undefined;
    const loop = new BackgroundLoop({
      idleMs: HOUR,
      backoffMs: () => HOUR,
      runOnce: (signal) => {
        seen = signal;
        return new Promise((resolve) => {
          release = () => resolve('idle');
        });
      },
    });
    loop.start();
    loop.start(); // a second start while running does nothing
    await until(() => seen !== undefined);
    const stopping = loop.stop();
    expect(seen?.aborted).toBe(true);
    release();
    await stopping;
    expect(loop.isRunning).toBe(false);
  });
});
