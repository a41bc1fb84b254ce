import fc from 'fast-check';
import { ManualClock } from '@payments/core';
import { ADAPTER_REASONS } from './classify';
import { Semaphore } from './semaphore';
import {
  DEFAULT_BACKGROUND_SHARE_IDLE_MS,
  type StatusAnswer,
  type StatusBudgetOptions,
  StatusBudget,
  type Wake,
} from './status-budget';
import { StatusLine } from './status-line';
import { TokenBucket } from './token-bucket';

/**
 * The budget's timer moved by hand: `fire(upTo)` runs what is due by then, the clock set to each
 * instant; `next` is when the pending one is due.
 */
function manualWake(clock: ManualClock) {
  let pending: { at: number; fn: () => void } | undefined;
  const wake: Wake = (fn, delayMs) => {
    const timer = { at: clock.now() + delayMs, fn };
    pending = timer;
    return () => {
      if (pending === timer) pending = undefined;
    };
  };
  const fire = (upTo: number) => {
    while (pending !== undefined && pending.at <= upTo) {
      const timer = pending;
      pending = undefined;
      clock.set(Math.max(clock.now(), timer.at));
      timer.fn();
    }
  };
  return { wake, fire, next: () => pending?.at ?? Infinity };
}

function setup(
  over: Partial<StatusBudgetOptions> = {},
  endpoint = { ratePerSecond: 10, burst: 10 },
  slots = 4,
) {
  const clock = new ManualClock();
  const timers = manualWake(clock);
  const bucket = new TokenBucket(endpoint, clock);
  const semaphore = new Semaphore(slots);
  const budget = new StatusBudget(
    {
      ratePerSecond: 100,
      burst: 100,
      moneyReservedTokens: 4,
      minIntervalMs: 1_000,
      slotWaitMs: 2_000,
      ...over,
    },
    bucket,
    semaphore,
    clock,
    timers.wake,
  );
  /** Admits a status query for `paymentId` and finishes its call at once. */
  const poll = (paymentId: string) => {
    const admission = budget.admit(paymentId);
    if (admission.kind === 'send') admission.done();
    return admission;
  };
  timersOf.set(budget, timers);
  return { clock, bucket, semaphore, budget, poll, timers };
}

const timersOf = new WeakMap<StatusBudget, ReturnType<typeof manualWake>>();

const held = (reason: string, retryAt: number) => ({ kind: 'held', reason, retryAt });

describe('StatusBudget', () => {
  it('never takes the tokens reserved for money operations', () => {
    const { bucket, poll, clock } = setup({ moneyReservedTokens: 4 });
    const kinds = Array.from({ length: 8 }, (_, i) => poll(`p${i}`).kind);
    // 10 tokens, 4 kept for money: six polls go, the rest are held.
    expect(kinds.filter((k) => k === 'send')).toHaveLength(6);
    expect(bucket.available()).toBe(4);
    // Held until the bucket holds 5 whole tokens again: one refill at 10 per second; p6 and p7,
    // held before it, have the places before p9's in the routine line (10 ms apart at 100/s).
    expect(poll('p9')).toEqual(held(ADAPTER_REASONS.moneyFirst, clock.now() + 100 + 2 * 10));
    // The reserve is there for money at once: four money operations, no wait.
    expect([0, 1, 2, 3].map(() => bucket.reserve(0))).toEqual([0, 0, 0, 0]);
  });

  it('a money operation waiting for a token holds every poll back until it is served', () => {
    const { bucket, poll, clock } = setup(
      { moneyReservedTokens: 0 },
      { ratePerSecond: 10, burst: 2 },
    );
    bucket.reserve(0);
    bucket.reserve(0);
    // A money operation books the next token, 100 ms ahead.
    expect(bucket.reserve(1_000)).toBe(100);
    const t0 = clock.now();
    // The poll may not take that token: it comes back once one more has refilled after it.
    expect(poll('a')).toEqual(held(ADAPTER_REASONS.moneyFirst, t0 + 200));
    clock.advance(100);
    expect(poll('a')).toEqual(held(ADAPTER_REASONS.moneyFirst, t0 + 200));
    clock.advance(100);
    expect(poll('a').kind).toBe('send');
  });

  it('polls share a bounded budget of their own and are told when the next one is due', () => {
    const { poll, clock } = setup({ ratePerSecond: 2, burst: 3, moneyReservedTokens: 0 });
    expect(['a', 'b', 'c'].map((p) => poll(p).kind)).toEqual(['send', 'send', 'send']);
    expect(poll('d')).toEqual(held(ADAPTER_REASONS.statusBudget, clock.now() + 500));
    clock.advance(500);
    expect(poll('d').kind).toBe('send');
  });

  it('one status query per payment at a time, and not again within the interval', () => {
    const { budget, poll, clock } = setup({ minIntervalMs: 1_000, slotWaitMs: 2_000 });
    const t0 = clock.now();
    const first = budget.admit('a');
    expect(first.kind).toBe('send');
    // Still in flight: held, at least a slot wait ahead.
    expect(budget.admit('a')).toEqual(held(ADAPTER_REASONS.statusInFlight, t0 + 2_000));
    // Other payments are not affected.
    expect(poll('b').kind).toBe('send');
    clock.advance(300);
    if (first.kind === 'send') first.done();
    expect(poll('a')).toEqual(held(ADAPTER_REASONS.statusRecent, t0 + 1_000));
    clock.advance(700);
    expect(poll('a').kind).toBe('send');
  });

  it('never waits for a slot and leaves one free for a money operation', async () => {
    const { budget, semaphore, clock } = setup(
      { minIntervalMs: 0, slotWaitMs: 2_000 },
      undefined,
      3,
    );
    const a = budget.admit('a');
    const b = budget.admit('b');
    expect([a.kind, b.kind]).toEqual(['send', 'send']);
    // Two of three slots busy: the last is money's.
    expect(budget.admit('c')).toEqual(
      held(ADAPTER_REASONS.concurrencyLimited, clock.now() + 2_000),
    );
    expect(semaphore.waiting).toBe(0);
    const money = await semaphore.acquire();
    // A money operation queued for a slot gets the one a poll frees, before any poll.
    const queued = semaphore.acquire();
    if (a.kind === 'send') a.done();
    const moneyAgain = await queued;
    expect(budget.admit('c').kind).toBe('held');
    money();
    moneyAgain();
    expect(budget.admit('c').kind).toBe('send');
  });

  it('with a single slot a poll may take it (there is no other)', () => {
    const { budget } = setup({}, undefined, 1);
    const only = budget.admit('a');
    expect(only.kind).toBe('send');
    expect(budget.admit('b').kind).toBe('held');
  });

  it('a held poll consumes nothing', () => {
    const { budget, bucket, poll } = setup({ ratePerSecond: 1, burst: 1, moneyReservedTokens: 0 });
    expect(poll('a').kind).toBe('send');
    const before = bucket.available();
    expect(poll('b').kind).toBe('held');
    expect(poll('a').kind).toBe('held');
    expect(bucket.available()).toBe(before);
    expect(budget.tracked).toBe(1);
  });

  it('forgets payments once their interval has passed (memory stays bounded)', () => {
    const { budget, poll, clock } = setup(
      { minIntervalMs: 1_000, moneyReservedTokens: 0 },
      {
        ratePerSecond: 1_000,
        burst: 1_000,
      },
    );
    for (let i = 0; i < 50; i += 1) poll(`p${i}`);
    const inFlight = budget.admit('still-running');
    expect(budget.tracked).toBe(51);
    clock.advance(1_000);
    poll('next');
    // The 50 finished ones are gone; the one in flight and the new one stay.
    expect(budget.tracked).toBe(2);
    if (inFlight.kind === 'send') inFlight.done();
  });
});

/** A clock whose every reading moves on by a drawn step (as Date.now() does between two calls). */
class TickingClock {
  private current = 1_700_000_000_000;
  private index = 0;
  constructor(private readonly steps: readonly number[]) {}
  now(): number {
    this.current += this.steps[this.index % this.steps.length] ?? 0;
    this.index += 1;
    return this.current;
  }
}

describe('StatusBudget on a clock that moves between readings', () => {
  // The CI flake of 2026-11-26 (status-budget.int-spec): a payment's first query was refused as
  // "status budget spent" with a token in the bucket, because the bucket read the clock again and
  // its "now" was a millisecond after the budget's own.
  it('admits exactly `burst` distinct payments when no token refills meanwhile, whatever the ticks', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 40 }),
        (steps, burst, payments) => {
          const clock = new TickingClock(steps);
          const endpoint = new TokenBucket({ ratePerSecond: 1_000, burst: 1_000 }, clock);
          const budget = new StatusBudget(
            {
              // One token per 10^6 s: none refills within the run.
              ratePerSecond: 0.000_001,
              burst,
              moneyReservedTokens: 0,
              minIntervalMs: 1_000_000,
              slotWaitMs: 100,
            },
            endpoint,
            new Semaphore(1_000),
            clock,
          );
          const answers = Array.from({ length: payments }, (_, i) => {
            const a = budget.admit(`p${i}`);
            if (a.kind === 'send') a.done();
            return a.kind === 'send' ? 'send' : a.reason;
          });
          const admitted = Math.min(burst, payments);
          expect(answers.slice(0, admitted)).toEqual(Array(admitted).fill('send'));
          expect(answers.slice(admitted)).toEqual(
            Array(payments - admitted).fill(ADAPTER_REASONS.statusBudget),
          );
        },
      ),
    );
  });
});

describe('StatusBudget by priority class (issue #38: need before arrival)', () => {
  const classes = (over: Partial<StatusBudgetOptions> = {}) =>
    setup(
      {
        ratePerSecond: 4,
        burst: 4,
        moneyReservedTokens: 0,
        urgentReservedTokens: 1,
        backgroundShare: 0.25,
        waitMs: 1_000,
        ...over,
      },
      { ratePerSecond: 1_000, burst: 1_000 },
      100,
    );
  /**
   * Asks as the adapter does (`later`: the query may wait in the room); `answer` gets the answer
   * when it comes — now, or from a later timer — with the clock at that instant.
   */
  const ask = (
    budget: StatusBudget,
    paymentId: string,
    priority: 'urgent' | 'routine' | 'payer' | 'background',
    answer: (admission: StatusAnswer) => void,
  ) => {
    const later = (admission: StatusAnswer) => {
      if (admission.kind === 'send') admission.done();
      answer(admission);
    };
    const now = budget.admit(paymentId, priority, later);
    if (now.kind !== 'wait') later(now);
  };
  const pollAs = (
    budget: StatusBudget,
    paymentId: string,
    priority: 'urgent' | 'routine' | 'payer' | 'background',
  ) => {
    const admission = budget.admit(paymentId, priority);
    if (admission.kind === 'send') admission.done();
    return admission;
  };

  it('routine and payer queries leave the urgent reserve: an urgent query finds a token when they are held', () => {
    const { budget, clock } = classes();
    expect(['r1', 'r2', 'r3'].map((p) => pollAs(budget, p, 'routine').kind)).toEqual([
      'send',
      'send',
      'send',
    ]);
    // One token left, kept for urgent queries; routine and payer are told when one is beyond it.
    expect(pollAs(budget, 'r4', 'routine')).toEqual(
      held(ADAPTER_REASONS.statusUrgentFirst, clock.now() + 250),
    );
    expect(pollAs(budget, 'w1', 'payer')).toEqual(
      held(ADAPTER_REASONS.statusUrgentFirst, clock.now() + 250),
    );
    expect(pollAs(budget, 'u1', 'urgent').kind).toBe('send');
    expect(pollAs(budget, 'u2', 'urgent')).toEqual(
      held(ADAPTER_REASONS.statusBudget, clock.now() + 250),
    );
  });

  /**
   * Payments asking as the orchestrator does: each at its next poll, a held one again at its
   * `retryAt` (the jitter left out); `ask(tick)` says who asks anew at that tick (100 ms each).
   */
  const run = (
    budget: StatusBudget,
    clock: ManualClock,
    ticks: number,
    asks: (
      tick: number,
    ) => ReadonlyArray<readonly [string, 'urgent' | 'routine' | 'payer' | 'background']>,
  ) => {
    const timers = timersOf.get(budget);
    const retry = new Map<
      string,
      { at: number; priority: 'urgent' | 'routine' | 'payer' | 'background' }
    >();
    const sent: { tick: number; paymentId: string; priority: string }[] = [];
    const t0 = clock.now();
    let tick = 0;
    for (; tick < ticks; tick++) {
      clock.set(Math.max(clock.now(), t0 + tick * 100));
      const due = [...retry].filter(([, r]) => r.at <= clock.now());
      const asking = [
        ...asks(tick).filter(([p]) => !retry.has(p)),
        ...due.map(([p, r]) => [p, r.priority] as const),
      ];
      for (const [paymentId, priority] of asking) {
        // Waiting in the room: not asked again until answered.
        retry.set(paymentId, { at: Infinity, priority });
        ask(budget, paymentId, priority, (admission) => {
          if (admission.kind === 'send') {
            retry.delete(paymentId);
            sent.push({ tick, paymentId, priority });
          } else retry.set(paymentId, { at: admission.retryAt, priority });
        });
      }
      timers?.fire(t0 + tick * 100 + 99);
    }
    return sent;
  };

  /**
   * Payments asking exactly when told (no tick, no jitter: what is measured is the budget): each
   * asks at `firstAt`, again at `retryAt` when held, and `everyMs` after it was sent; those due at
   * one instant ask in the same order every time. Returns the sends, up to `untilMs` from now.
   */
  const exact = (
    budget: StatusBudget,
    clock: ManualClock,
    askers: ReadonlyArray<{
      readonly id: string;
      readonly priority: 'urgent' | 'routine' | 'payer' | 'background';
      readonly firstAt: number;
      readonly everyMs: number;
    }>,
    untilMs: number,
  ) => {
    const t0 = clock.now();
    const timers = timersOf.get(budget);
    const next = askers.map((a) => t0 + a.firstAt);
    const sent: { at: number; id: string; priority: string }[] = [];
    for (;;) {
      const at = Math.min(...next);
      const timerAt = timers?.next() ?? Infinity;
      if (Math.min(at, timerAt) > t0 + untilMs) return sent;
      if (timerAt <= at) {
        timers?.fire(timerAt);
        continue;
      }
      clock.set(at);
      askers.forEach((asker, i) => {
        if (next[i] !== at) return;
        next[i] = Infinity;
        ask(budget, asker.id, asker.priority, (admission) => {
          const now = clock.now();
          if (admission.kind === 'send') {
            sent.push({ at: now - t0, id: asker.id, priority: asker.priority });
            next[i] = now + asker.everyMs;
          } else next[i] = Math.max(admission.retryAt, now + 1);
        });
      });
    }
  };

  it('property: with only background queries asking, the whole status rate is used (within a token), not their share', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 2, max: 8 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 3_000, max: 15_000 }),
        (rate, burst, extra, untilMs) => {
          const reserve = Math.min(burst - 1, 1);
          const { budget, clock } = classes({
            ratePerSecond: rate,
            burst,
            urgentReservedTokens: reserve,
          });
          // More payments than the rate serves (each at most once a second, the interval).
          const askers = Array.from({ length: 2 * rate + 2 + extra }, (_, i) => ({
            id: `b${i}`,
            priority: 'background' as const,
            firstAt: 0,
            everyMs: 1_000,
          }));
          const sent = exact(budget, clock, askers, untilMs);
          // Every token but the urgent reserve: the burst less the reserve, then the rate.
          expect(sent.length).toBeGreaterThanOrEqual(
            Math.floor(burst - reserve + (rate * untilMs) / 1000) - 1,
          );
          expect(sent.length).toBeLessThanOrEqual(burst + (rate * untilMs) / 1000);
        },
      ),
      { numRuns: 100 },
    );
  });

  /**
   * Another class asking: a payer's query kept in flight (its first ask takes a token), asked
   * again each time (held: in flight), so the background share binds (rule 2).
   */
  const othersAsk = (budget: StatusBudget) => budget.admit('busy-payer', 'payer');

  it('property: no payment starved, whatever the mix: each background payment is sent within two rounds of the share serving the whole population', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 2, max: 8 }),
        fc.integer({ min: 1, max: 30 }),
        fc.array(
          fc.record({
            priority: fc.constantFrom('routine' as const, 'payer' as const),
            firstAt: fc.integer({ min: 0, max: 5_000 }),
            everyMs: fc.integer({ min: 1_000, max: 5_000 }),
          }),
          { maxLength: 16 },
        ),
        fc.integer({ min: 0, max: 30_000 }),
        (rate, burst, population, others, spreadMs) => {
          const { budget, clock } = classes({
            ratePerSecond: rate,
            burst,
            urgentReservedTokens: 1,
          });
          const everyMs = 15_000;
          const askers = [
            ...others.map((o, i) => ({ id: `o${i}`, ...o })),
            ...Array.from({ length: population }, (_, i) => ({
              id: `b${i}`,
              priority: 'background' as const,
              firstAt: (i * 7_919) % (spreadMs + 1),
              everyMs,
            })),
          ];
          const untilMs = 120_000;
          const sent = exact(budget, clock, askers, untilMs);
          const bound = (2 * (population + 1) * 1000) / (rate * 0.25);
          for (const asker of askers.filter((a) => a.priority === 'background')) {
            const times = sent.filter((s) => s.id === asker.id).map((s) => s.at);
            // Due at its first ask, then `everyMs` after each send; sent within the bound.
            const dues = [asker.firstAt, ...times.map((t) => t + everyMs)];
            dues.forEach((due, i) => {
              const sentAt = times[i] ?? Number.POSITIVE_INFINITY;
              if (due + bound <= untilMs) expect(sentAt - due).toBeLessThanOrEqual(bound);
            });
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('background queries take at most their share of the rate while another class asks, however many ask', () => {
    const { budget, clock } = classes();
    // Fifty payments ask at once at the start and again every 15 s; each held asks at retryAt;
    // a payer is asked about every tick.
    const sent = run(budget, clock, 100, (tick) => [
      ['w', 'payer'] as const,
      ...(tick % 150 === 0
        ? Array.from({ length: 50 }, (_, i) => [`b${i}`, 'background'] as const)
        : []),
    ]).filter((s) => s.priority === 'background');
    // 10 s at a quarter of 4 per second: one at once (the share's burst), then one a second.
    expect(sent.length).toBeLessThanOrEqual(11);
    expect(sent.length).toBeGreaterThanOrEqual(10);
    // In the order they were first held: the line, not the order of arrival each time.
    expect(sent.map((s) => s.paymentId)).toEqual(
      Array.from({ length: sent.length }, (_, i) => `b${i}`),
    );
    othersAsk(budget);
    expect(budget.admit('b-last', 'background').kind).toBe('held');
  });

  it('the share binds again as soon as another class asks, and lets go a window after the last', () => {
    const { budget, clock } = classes({ backgroundShareIdleMs: 1_000 });
    // Nothing else asking: beyond the share, down to the urgent reserve (3 of 4 tokens).
    expect(['b1', 'b2', 'b3', 'b4'].map((p) => pollAs(budget, p, 'background').kind)).toEqual([
      'send',
      'send',
      'send',
      'held',
    ]);
    // The urgent reserve is there at once.
    expect(pollAs(budget, 'u1', 'urgent').kind).toBe('send');
    clock.advance(1_000);
    // A payer asks: the share (one a second, its token taken by b1 a second ago) binds; b4, held
    // first, comes back and takes the share's token.
    expect(pollAs(budget, 'w1', 'payer').kind).toBe('send');
    expect(pollAs(budget, 'b4', 'background').kind).toBe('send');
    expect(pollAs(budget, 'b6', 'background')).toEqual(
      held(ADAPTER_REASONS.statusBackgroundShare, clock.now() + 1_000),
    );
    // Still within the window 999 ms later; a window after the payer's query, beyond it again.
    clock.advance(999);
    expect(pollAs(budget, 'b7', 'background')).toMatchObject({
      reason: ADAPTER_REASONS.statusBackgroundShare,
    });
    clock.advance(1);
    expect(pollAs(budget, 'b6', 'background').kind).toBe('send');
    expect(pollAs(budget, 'b7', 'background').kind).toBe('send');
  });

  it('a background query is not shut out by a crowd of routine ones: its share comes first', () => {
    const { budget, clock } = classes();
    const sent = run(budget, clock, 100, (tick) => [
      // Routine queries ask first every tick, more than the rate allows.
      ...Array.from({ length: 10 }, (_, i) => [`r${tick}-${i}`, 'routine'] as const),
      [`b${tick % 5}`, 'background'] as const,
    ]);
    expect(sent.filter((s) => s.priority === 'background').length).toBeGreaterThanOrEqual(5);
  });

  it('two background payments asking in the same order every time are both served: the one held goes first next time (issue #38)', () => {
    const { budget, clock } = classes();
    // a and b fire together every 2 s, a first; the share admits one a second (burst 1).
    const sent = run(budget, clock, 200, (tick) =>
      tick % 20 === 0
        ? [
            ['a', 'background'],
            ['b', 'background'],
          ]
        : [],
    );
    const of = (p: string) => sent.filter((s) => s.paymentId === p).length;
    expect(of('b')).toBeGreaterThanOrEqual(8);
    expect(Math.abs(of('a') - of('b'))).toBeLessThanOrEqual(1);
  });

  it('the waiting room: a token goes to the query waiting, at once when it comes (the budget never idles while one waits); one held earlier goes before a newcomer present with it', () => {
    // Another class asks throughout: the share binds.
    const { budget, clock, timers } = classes({ backgroundShareIdleMs: 10_000 });
    const answers = new Map<string, { at: number; kind: string; retryAt?: number }>();
    const bg = (paymentId: string) => {
      othersAsk(budget);
      ask(budget, paymentId, 'background', (a) =>
        answers.set(paymentId, {
          at: clock.now(),
          kind: a.kind,
          ...(a.kind === 'held' ? { retryAt: a.retryAt } : {}),
        }),
      );
      return answers.get(paymentId);
    };
    const t0 = clock.now();
    expect(bg('first')?.kind).toBe('send');
    // The share's next token comes in 1 s: 'second' and 'late' wait for it; 'second' came first.
    expect(bg('second')).toBeUndefined();
    expect(bg('late')).toBeUndefined();
    expect(budget.present).toBe(2);
    timers.fire(t0 + 1_000);
    expect(answers.get('second')).toEqual({ at: t0 + 1_000, kind: 'send' });
    // 'late' waited its whole wait: held, its place taken, told to come back half a wait before
    // its turn (the share's next token, at 2 s).
    expect(answers.get('late')).toEqual({ at: t0 + 1_000, kind: 'held', retryAt: t0 + 1_500 });
    // A newcomer comes before 'late' is back; at the 2 s token both are there: 'late' goes.
    clock.set(t0 + 1_200);
    expect(bg('newcomer')).toBeUndefined();
    clock.set(t0 + 1_500);
    answers.delete('late');
    expect(bg('late')).toBeUndefined();
    timers.fire(t0 + 2_000);
    expect(answers.get('late')).toEqual({ at: t0 + 2_000, kind: 'send' });
    expect(answers.get('newcomer')).toBeUndefined();
    // Not served within its wait, the newcomer is held with a place (its turn the 3 s token).
    timers.fire(t0 + 2_200);
    expect(answers.get('newcomer')).toEqual({
      at: t0 + 2_200,
      kind: 'held',
      retryAt: t0 + 2_500,
    });
    // Nobody waiting and the share's token there: a newcomer goes at once (work-conserving: no
    // token is kept for a payment that is not there).
    clock.set(t0 + 3_000);
    expect(bg('quick')).toEqual({ at: t0 + 3_000, kind: 'send' });
  });

  it("a hint's urgent query (its request names urgentSince) takes the next token before unknowns' urgent queries waiting longer", () => {
    const { budget, clock, timers } = classes({
      ratePerSecond: 1,
      burst: 1,
      urgentReservedTokens: 0,
    });
    const answers = new Map<string, string>();
    const askUrgent = (paymentId: string, hinted: boolean) => {
      const later = (admission: StatusAnswer) => {
        if (admission.kind === 'send') admission.done();
        answers.set(paymentId, `${admission.kind}@${clock.now()}`);
      };
      const now = budget.admit(paymentId, 'urgent', later, hinted);
      if (now.kind !== 'wait') later(now);
    };
    const t0 = clock.now();
    askUrgent('first', false);
    expect(answers.get('first')).toBe(`send@${t0}`);
    // The only token is spent: two unknowns wait, then a callback's hinted query comes.
    clock.set(t0 + 100);
    askUrgent('unknown-1', false);
    clock.set(t0 + 200);
    askUrgent('unknown-2', false);
    clock.set(t0 + 300);
    askUrgent('hinted', true);
    expect(budget.present).toBe(3);
    timers.fire(t0 + 1_000);
    expect(answers.get('hinted')).toBe(`send@${t0 + 1_000}`);
    expect(answers.get('unknown-1')).toBeUndefined();
  });

  it("a hint's urgent query held behind many unknowns' places is told a turn counting only the hinted places before it (the room serves hints first)", () => {
    // No wait in the room: every query the tokens cannot take now is held at once with its turn.
    const { budget, clock } = classes({
      ratePerSecond: 1,
      burst: 1,
      urgentReservedTokens: 0,
      waitMs: 0,
    });
    const ask = (paymentId: string, hinted: boolean) => {
      let answer: StatusAnswer | undefined;
      const now = budget.admit(paymentId, 'urgent', (a) => (answer = a), hinted);
      if (now.kind !== 'wait') answer = now;
      if (answer?.kind === 'send') answer.done();
      return answer;
    };
    const t0 = clock.now();
    expect(ask('first', false)?.kind).toBe('send');
    // Ten unknowns (urgent by age) ask while the only token is spent: ten places, a token apart.
    const unknownTurns = Array.from({ length: 10 }, (_, i) => ask(`unknown-${i}`, false)).map(
      (a) => (a?.kind === 'held' ? a.retryAt : undefined),
    );
    expect(unknownTurns).toEqual(Array.from({ length: 10 }, (_, i) => t0 + 1_000 * (i + 1)));
    // A callback's hinted query: the room serves it before every unknown, so its turn is the
    // next token's, not the end of the unknowns' line (t0 + 11 s, as every place counted before).
    clock.set(t0 + 100);
    expect(ask('hinted', true)).toEqual(held(ADAPTER_REASONS.statusBudget, t0 + 1_000));
    // A second hint goes one token after the first, still before the unknowns.
    expect(ask('hinted-2', true)).toEqual(held(ADAPTER_REASONS.statusBudget, t0 + 2_000));
    // Back at its turn, the first hint is sent.
    clock.set(t0 + 1_000);
    expect(ask('hinted', true)?.kind).toBe('send');
  });

  it('a query waiting is answered exactly once, and a second query about the same payment meanwhile is held at once', () => {
    const { budget, clock, timers } = classes({ ratePerSecond: 1, burst: 2 });
    const seen: string[] = [];
    const later = (a: StatusAnswer) => seen.push(a.kind);
    expect(budget.admit('a', 'routine', later).kind).toBe('send');
    // Routine needs a token beyond the urgent reserve: 'b' waits for the bucket to refill.
    expect(budget.admit('b', 'routine', later).kind).toBe('wait');
    expect(budget.admit('b', 'routine', later)).toMatchObject({
      kind: 'held',
      reason: ADAPTER_REASONS.statusInFlight,
    });
    timers.fire(clock.now() + 5_000);
    expect(seen).toEqual(['send']);
    expect(budget.present).toBe(0);
  });

  it('places given at the status rate while nothing else asked are spread out at the share rate, in line order, once another class asks (not all told the same instant)', () => {
    const { budget, clock } = classes();
    const t0 = clock.now();
    expect(['b0', 'b1', 'b2'].map((p) => pollAs(budget, p, 'background').kind)).toEqual([
      'send',
      'send',
      'send',
    ]);
    // Nothing else asking: turns one token of the status rate (4/s) apart.
    expect(['b3', 'b4', 'b5'].map((p) => pollAs(budget, p, 'background'))).toEqual([
      held(ADAPTER_REASONS.statusUrgentFirst, t0 + 250),
      held(ADAPTER_REASONS.statusUrgentFirst, t0 + 500),
      held(ADAPTER_REASONS.statusUrgentFirst, t0 + 750),
    ]);
    // A payer asks from t0 + 250: the share (1/s, its token taken by b0 at t0) binds; each place
    // coming back is told a turn one token of the share after the one before it.
    for (const [i, p] of ['b3', 'b4', 'b5'].entries()) {
      clock.set(t0 + 250 * (i + 1));
      othersAsk(budget);
      expect(pollAs(budget, p, 'background')).toEqual(
        held(ADAPTER_REASONS.statusBackgroundShare, t0 + 1_000 * (i + 1)),
      );
    }
    clock.set(t0 + 1_000);
    othersAsk(budget);
    expect(pollAs(budget, 'b3', 'background').kind).toBe('send');
    clock.set(t0 + 2_000);
    othersAsk(budget);
    expect(pollAs(budget, 'b4', 'background').kind).toBe('send');
  });

  it('refuses a reserve that would shut every non-urgent query out, and a share outside (0, 1]', () => {
    expect(() => classes({ urgentReservedTokens: 4 })).toThrow(/urgentReservedTokens/);
    expect(() => classes({ backgroundShare: 0 })).toThrow(/backgroundShare/);
    expect(() => classes({ backgroundShare: 1.5 })).toThrow(/backgroundShare/);
  });

  it('property: whatever the mix and timing of classes, sends never exceed the rate and burst, nor background its share while other classes ask', () => {
    const priorities = ['urgent', 'routine', 'payer', 'background'] as const;
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            gapMs: fc.integer({ min: 0, max: 400 }),
            priority: fc.constantFrom(...priorities),
            payment: fc.integer({ min: 0, max: 30 }),
          }),
          { minLength: 1, maxLength: 400 },
        ),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 8 }),
        (asks, rate, burst) => {
          const { budget, clock } = classes({
            ratePerSecond: rate,
            burst,
            urgentReservedTokens: Math.min(burst - 1, 1),
            minIntervalMs: 0,
          });
          const sends: { at: number; priority: string; othersAsking: boolean }[] = [];
          let otherAskedAt = Number.NEGATIVE_INFINITY;
          for (const ask of asks) {
            clock.advance(ask.gapMs);
            if (ask.priority !== 'background') otherAskedAt = clock.now();
            if (pollAs(budget, `p${ask.payment}`, ask.priority).kind === 'send')
              sends.push({
                at: clock.now(),
                priority: ask.priority,
                othersAsking: clock.now() - otherAskedAt < DEFAULT_BACKGROUND_SHARE_IDLE_MS,
              });
          }
          const within = (list: number[], perSecond: number, allowed: number) => {
            for (let i = 0; i < list.length; i++)
              for (let j = i; j < list.length; j++)
                expect(j - i + 1).toBeLessThanOrEqual(
                  allowed + (perSecond * (list[j] - list[i])) / 1000 + 1e-9,
                );
          };
          within(
            sends.map((s) => s.at),
            rate,
            burst,
          );
          // The background queries sent while another class had asked within the window.
          within(
            sends.filter((s) => s.priority === 'background' && s.othersAsking).map((s) => s.at),
            rate * 0.25,
            1,
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('property: a fresh urgent query is sent at once after a window (and a token) of background only, and within two tokens of the status rate whatever the mix and timing of the other classes', () => {
    // Background asks most: windows in which nothing else asks are common.
    const others = ['routine', 'payer', 'background', 'background', 'background'] as const;
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            gapMs: fc.integer({ min: 0, max: 600 }),
            priority: fc.constantFrom(...others),
            payment: fc.integer({ min: 0, max: 30 }),
            urgentAsks: fc.boolean(),
          }),
          { minLength: 1, maxLength: 300 },
        ),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 2, max: 8 }),
        (asks, rate, burst) => {
          const { budget, clock } = classes({
            ratePerSecond: rate,
            burst,
            urgentReservedTokens: 1,
            minIntervalMs: 0,
          });
          const bound = 2 * Math.ceil(1000 / rate);
          // One urgent query at a time (a fresh payment), asking again exactly at its retryAt.
          let urgent: { id: string; firstAt: number; retryAt: number } | undefined;
          let probes = 0;
          let otherAskedAt = Number.NEGATIVE_INFINITY;
          const askUrgent = () => {
            if (urgent === undefined) return;
            // A background query within its share may take the reserve while others ask: a
            // token time after the window, it is back.
            const quiet =
              clock.now() - otherAskedAt >=
              DEFAULT_BACKGROUND_SHARE_IDLE_MS + Math.ceil(1000 / rate) + 1;
            otherAskedAt = clock.now();
            const admission = pollAs(budget, urgent.id, 'urgent');
            // Only background queries asked within the window: the urgent reserve is there.
            if (quiet && urgent.firstAt === clock.now()) expect(admission.kind).toBe('send');
            if (admission.kind === 'send') {
              expect(clock.now() - urgent.firstAt).toBeLessThanOrEqual(bound);
              urgent = undefined;
            } else urgent.retryAt = admission.retryAt;
          };
          for (const ask of asks) {
            const at = clock.now() + ask.gapMs;
            while (urgent !== undefined && urgent.retryAt < at) {
              clock.set(Math.max(clock.now(), urgent.retryAt));
              askUrgent();
            }
            clock.set(at);
            // The other classes ask first at an instant shared with the urgent query's retry.
            if (ask.priority !== 'background') otherAskedAt = at;
            pollAs(budget, `p${ask.payment}`, ask.priority);
            if (urgent !== undefined && urgent.retryAt <= at) askUrgent();
            if (ask.urgentAsks && urgent === undefined) {
              urgent = { id: `u${probes++}`, firstAt: at, retryAt: at };
              askUrgent();
            }
          }
          while (urgent !== undefined) {
            clock.set(Math.max(clock.now(), urgent.retryAt));
            askUrgent();
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('StatusLine', () => {
  it('tells turns one token apart in the order places were taken, keeps a place held again, and remembers when it was taken', () => {
    const line = new StatusLine(100, 1_000);
    expect(line.held('a', 0, 0)).toBe(0);
    expect(line.held('b', 0, 0)).toBe(100);
    // 'a' came back at its turn and the tokens held it again: it keeps its place, told 200.
    expect(line.held('a', 100, 200)).toBe(200);
    // 'b', held again at 200, is told a turn one token after 'a's.
    expect(line.held('b', 200, 200)).toBe(300);
    // Its rank in the waiting room: when it took its place, whatever its turns since.
    expect([line.since('a', 200), line.since('b', 200), line.since('c', 200)]).toEqual([
      0,
      0,
      undefined,
    ]);
    line.admitted('a');
    expect(line.since('a', 300)).toBeUndefined();
    // A place lapsed (its claim window) is remembered a minute, then forgotten.
    expect(line.since('b', 300 + 1_000 + 60_000)).toBe(0);
    expect(line.since('b', 300 + 1_000 + 60_001)).toBeUndefined();
  });

  it('counts only hinted places before a hinted one, every live hinted place before an unhinted one, and a hint that came drops the turn its place had', () => {
    const line = new StatusLine(100, 1_000);
    expect(['a', 'b', 'c'].map((p) => line.held(p, 0, 0))).toEqual([0, 100, 200]);
    // Hinted places: after the hinted ones only, whatever the unhinted line holds.
    expect(line.held('h1', 0, 0, 100, true)).toBe(0);
    expect(line.held('h2', 0, 0, 100, true)).toBe(100);
    // An unhinted newcomer: after every live place, hinted ones included.
    expect(line.held('d', 0, 0)).toBe(500);
    // 'b' held again: after 'a' (before it in line) and both hinted places (they go first).
    expect(line.held('b', 50, 100)).toBe(400);
    // 'd' held again with a hint that came meanwhile: after 'h1' and 'h2' only, not its old 500.
    expect(line.held('d', 60, 100, 100, true)).toBe(300);
  });
});
