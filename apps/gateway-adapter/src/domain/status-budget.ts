import type { StatusPriority } from '@payments/contracts';
import type { Clock } from '@payments/core';
import { ADAPTER_REASONS } from './classify';
import type { Semaphore } from './semaphore';
import { StatusLine } from './status-line';
import { TokenBucket } from './token-bucket';

export interface StatusBudgetOptions {
  /** Status queries per second this endpoint may send (their own bucket). */
  readonly ratePerSecond: number;
  /** Status queries allowed at once after a quiet period. */
  readonly burst: number;
  /** Tokens of the endpoint's rate limit a status query never takes: they are money's. */
  readonly moneyReservedTokens: number;
  /** Least time between the starts of two status queries for one payment. */
  readonly minIntervalMs: number;
  /** How far ahead `retryAt` lies when every slot is busy (the adapter's bounded slot wait). */
  readonly slotWaitMs: number;
  /**
   * Tokens of the status bucket only `urgent` queries may take (undefined: 0). Any other class
   * leaves them, so an urgent query finds one at once while the rest wait their turn.
   */
  readonly urgentReservedTokens?: number;
  /**
   * The share of the status rate `background` queries may take at most while other classes ask,
   * in (0, 1] (undefined: 1, no bound): their own bucket at that rate, on top of the status
   * bucket. Work-conserving: while no other class has asked for `backgroundShareIdleMs`, a
   * background query may go beyond it (see StatusBudget, rule 2).
   */
  readonly backgroundShare?: number;
  /**
   * How long after the last query of another class (urgent, routine, payer; admitted or held)
   * the background share still binds (undefined: {@link DEFAULT_BACKGROUND_SHARE_IDLE_MS}).
   */
  readonly backgroundShareIdleMs?: number;
  /**
   * How long a held payment's place in its class's line counts before later places' turns after
   * the turn it was given (undefined: {@link DEFAULT_TURN_CLAIM_MS}): the orchestrator asks again
   * at `retryAt` plus a jitter of up to 2 s, and the way there takes time on a loaded machine.
   */
  readonly turnClaimMs?: number;
  /**
   * How long a status query may wait in the adapter for a token (the waiting room; undefined: 0,
   * a query the budget cannot admit at once is answered held at once). At most the money
   * operations' bound (GATEWAY_LIMIT_MAX_WAIT_MS); needs a `wake` (the constructor's).
   */
  readonly waitMs?: number;
}

/** The default wait of a status query in the adapter's waiting room (StatusBudgetOptions.waitMs). */
export const DEFAULT_STATUS_WAIT_MS = 1_000;

/**
 * Runs `fn` once after `delayMs` (a timer); returns what cancels it. Injected: tests and the
 * simulation move time by hand.
 */
export type Wake = (fn: () => void, delayMs: number) => () => void;

/** The default claim window of a held payment's turn (see StatusBudgetOptions.turnClaimMs). */
export const DEFAULT_TURN_CLAIM_MS = 5_000;

/** The default share of the status rate for background queries (see StatusBudgetOptions). */
export const DEFAULT_BACKGROUND_SHARE = 0.25;

/**
 * How long the background share binds after another class asked (StatusBudgetOptions
 * `backgroundShareIdleMs`): a second, several token times at any status rate a gateway allows,
 * and far below the cadence of a class that is waiting (3-5 s).
 */
export const DEFAULT_BACKGROUND_SHARE_IDLE_MS = 1_000;

/** The default urgent reserve: a quarter of the status burst, at least 1 when the burst allows. */
export function defaultUrgentReserve(statusBurst: number): number {
  return statusBurst < 2 ? 0 : Math.max(1, Math.floor(statusBurst / 4));
}

/** Admitted: send now, and call `done` exactly once when the call is over. */
export interface StatusGo {
  readonly kind: 'send';
  readonly done: () => void;
}

/** Held back without waiting: answer not-sent with this reason and `retryAt` (clock ms). */
export interface StatusHeld {
  readonly kind: 'held';
  readonly reason: string;
  readonly retryAt: number;
}

/** Waiting in the room: the answer comes later, once, through the `later` given to `admit`. */
export interface StatusWaiting {
  readonly kind: 'wait';
}

export type StatusAnswer = StatusGo | StatusHeld;

/** A status query waiting in the room for a token of its class. */
interface Waiter {
  readonly paymentId: string;
  readonly priority: StatusPriority;
  /**
   * Urgent by a hint (its request names `urgentSince`: a verified callback, a browser return, a
   * refresh): within its class it goes before queries urgent only by their age (a reply lost).
   */
  readonly hinted: boolean;
  /** Its class first (urgent; routine and payer; background), then this: earlier goes first. */
  readonly since: number;
  readonly until: number;
  readonly later: (answer: StatusAnswer) => void;
  /** What held it back when last tried: its reason and `retryAt` if the wait runs out. */
  gate: { reason: string; at: number };
}

const RANK: Readonly<Record<StatusPriority, number>> = {
  urgent: 0,
  routine: 1,
  payer: 1,
  background: 2,
};

interface PaymentEntry {
  startedAt: number;
  inFlight: boolean;
}

/**
 * The scheduling rule for status queries (polls) of one endpoint: money
 * operations go first, polls share a bounded budget and wait at most `waitMs`, and among polls
 * need goes before arrival (the request's `priority`, set by the orchestrator's one scheduler,
 * apps/orchestrator/src/domain/gateway-operation/polling.ts).
 *
 * A status query is sent only when, right now,
 *  1. its payment has no status query in flight and none started in the last `minIntervalMs`;
 *  2. the status bucket (`ratePerSecond`, `burst`) has a token, by class:
 *     - `urgent`: one token (an operation whose money may have just moved is served first
 *       whenever the rate is short);
 *     - `background`: one token and a token of its own bucket (`backgroundShare` × the rate,
 *       burst 1): never more than that share while other classes ask, so no population of old
 *       unknowns takes the budget from fresher ones — and that share is theirs, so none of them
 *       is starved for good. Work-conserving (issue #38): while no query of another class has
 *       asked (admitted or held) within `backgroundShareIdleMs`, a background query needs
 *       instead a token beyond the `urgentReservedTokens`, with or without one of its own
 *       bucket (so a fresh urgent query still finds one at once): a population of old unknowns
 *       is asked at the whole rate while nothing else wants it, and the budget never idles
 *       while truth waits. The first query of another class binds the share again;
 *     - `routine` and `payer`: a token beyond the `urgentReservedTokens` (what is left once
 *       urgent and background queries had theirs);
 *  3. the endpoint's bucket holds more than `moneyReservedTokens` whole tokens (money operations'
 *     bookings make it negative, so a poll never takes a token a money operation is waiting for);
 *  4. a concurrency slot is free and another stays free for a money operation (when the limit is
 *     1 there is no other, and a poll may take the only one);
 *  5. no query waiting in the room (below) ranks before it and passes rules 1-4 now: the room
 *     is served before a newcomer.
 * Otherwise it waits in the room (issue #38, time to truth), up to `waitMs`: each token, when it
 * comes, goes to the best query present whose rules 1-4 pass — by class (urgent; routine
 * and payer; background), then by how long its payment has been held (its place in its class's
 * line, StatusLine; a payment without one by when it came). Work-conserving: a token goes to
 * whoever is there, so the budget never idles while a query waits for a token its class may
 * take; those held earlier go first whenever they are there. A query the room cannot serve
 * within `waitMs` is answered held (not sent, nothing booked) with `retryAt`: held by rule 1,
 * when that allows; otherwise half a wait before its turn in its class's line (one token of the
 * class's rate per place before it), a place it keeps, so it is in the room when its token comes
 * and goes before the newcomers there. Without a `later` to answer through (or with `waitMs` 0)
 * it is answered held at once, `retryAt` its turn. Money
 * operations keep their bounded waits (reserve a token, queue for a slot), and a freed slot goes
 * to a queued money operation first.
 * Pure apart from the shared bucket and semaphore: time from the injected clock, timers from the
 * injected `wake`.
 */
export class StatusBudget {
  private readonly bucket: TokenBucket;
  private readonly background: TokenBucket | undefined;
  private readonly urgentReserve: number;
  private readonly shareIdleMs: number;
  private readonly spacingMs: number;
  private readonly share: number;
  /** When a query of another class than background last asked (admitted or held). */
  private lastOtherAskAt = Number.NEGATIVE_INFINITY;
  private readonly lines: Readonly<Record<StatusPriority, StatusLine>>;
  /** Per payment, in start order (re-inserted on each admission), pruned as they expire. */
  private readonly payments = new Map<string, PaymentEntry>();
  /** The waiting room, in the order they came. */
  private readonly room: Waiter[] = [];
  private readonly waitMs: number;
  private wakeAt: number | undefined;
  private cancelWake: (() => void) | undefined;

  constructor(
    private readonly options: StatusBudgetOptions,
    private readonly endpointBucket: TokenBucket,
    private readonly slots: Semaphore,
    private readonly clock: Clock,
    private readonly wake?: Wake,
  ) {
    this.waitMs = options.waitMs ?? 0;
    if (!(this.waitMs >= 0)) throw new Error('a status budget needs waitMs >= 0');
    if (this.waitMs > 0 && wake === undefined)
      throw new Error('a status budget that lets queries wait needs a wake (timers)');
    if (!(options.moneyReservedTokens >= 0) || !(options.minIntervalMs >= 0)) {
      throw new Error('a status budget needs moneyReservedTokens >= 0 and minIntervalMs >= 0');
    }
    this.urgentReserve = options.urgentReservedTokens ?? 0;
    if (!(this.urgentReserve >= 0 && this.urgentReserve < options.burst)) {
      throw new Error('a status budget needs 0 <= urgentReservedTokens < burst');
    }
    const share = options.backgroundShare ?? 1;
    if (!(share > 0 && share <= 1))
      throw new Error('a status budget needs 0 < backgroundShare <= 1');
    this.share = share;
    this.shareIdleMs = options.backgroundShareIdleMs ?? DEFAULT_BACKGROUND_SHARE_IDLE_MS;
    if (!(this.shareIdleMs >= 0))
      throw new Error('a status budget needs backgroundShareIdleMs >= 0');
    this.bucket = new TokenBucket(
      { ratePerSecond: options.ratePerSecond, burst: options.burst },
      clock,
    );
    this.background =
      share < 1
        ? new TokenBucket({ ratePerSecond: options.ratePerSecond * share, burst: 1 }, clock)
        : undefined;
    const claimMs = options.turnClaimMs ?? DEFAULT_TURN_CLAIM_MS;
    const spacing = 1000 / options.ratePerSecond;
    this.spacingMs = spacing;
    // The background line's turns are spaced by the rate in effect when a place is given
    // (lineSpacing): the share's while other classes ask, the status rate's otherwise.
    this.lines = {
      urgent: new StatusLine(spacing, claimMs),
      routine: new StatusLine(spacing, claimMs),
      payer: new StatusLine(spacing, claimMs),
      background: new StatusLine(spacing, claimMs),
    };
  }

  /** Payments remembered right now (bounded by the status rate × the interval, plus in flight). */
  get tracked(): number {
    return this.payments.size;
  }

  /** Places held in the classes' lines right now (payments held within the last claim window). */
  get waiting(): number {
    return Object.values(this.lines).reduce((sum, line) => sum + line.size, 0);
  }

  /** Queries waiting in the room right now. */
  get present(): number {
    return this.room.length;
  }

  /**
   * `priority`: the query's class (undefined: `routine`). `later`: where the answer of a query
   * that waits in the room goes (exactly once, from a later `wake`); without it, never waits.
   */
  admit(paymentId: string, priority?: StatusPriority): StatusAnswer;
  admit(
    paymentId: string,
    priority: StatusPriority,
    later: (answer: StatusAnswer) => void,
    hinted?: boolean,
  ): StatusAnswer | StatusWaiting;
  admit(
    paymentId: string,
    priority: StatusPriority = 'routine',
    later?: (answer: StatusAnswer) => void,
    hinted = false,
  ): StatusAnswer | StatusWaiting {
    const now = this.clock.now();
    if (priority !== 'background') this.lastOtherAskAt = now;
    this.prune(now);
    const waiting = this.room.find((w) => w.paymentId === paymentId);
    if (waiting !== undefined) return held(ADAPTER_REASONS.statusInFlight, waiting.until);
    // Those waiting first (rule 5): a token that came meanwhile is theirs.
    this.serve(now);
    const gate = this.paymentGate(paymentId, now) ?? this.gate(priority, now);
    if (gate === undefined) return this.go(paymentId, priority, now, hinted);
    if (later !== undefined && this.waitMs > 0) {
      const since = this.lines[priority].since(paymentId, now) ?? now;
      this.room.push({
        paymentId,
        priority,
        hinted,
        since,
        until: now + this.waitMs,
        later,
        gate,
      });
      this.rearm(now);
      return { kind: 'wait' };
    }
    return this.hold(paymentId, priority, gate, now, later !== undefined, hinted);
  }

  /**
   * Gives the tokens there are now to the best queries waiting whose class may take them (rules
   * 2-4), then answers held those whose wait ran out.
   */
  private serve(now: number): void {
    for (;;) {
      const ranked = [...this.room].sort(
        (a, b) =>
          RANK[a.priority] - RANK[b.priority] ||
          Number(b.hinted) - Number(a.hinted) ||
          a.since - b.since,
      );
      const next = ranked.find((w) => {
        const gate = this.paymentGate(w.paymentId, now) ?? this.gate(w.priority, now);
        if (gate !== undefined) w.gate = gate;
        return gate === undefined;
      });
      if (next === undefined) break;
      this.room.splice(this.room.indexOf(next), 1);
      next.later(this.go(next.paymentId, next.priority, now, next.hinted));
    }
    for (const w of this.room.filter((waiter) => waiter.until <= now)) {
      this.room.splice(this.room.indexOf(w), 1);
      w.later(this.hold(w.paymentId, w.priority, w.gate, now, true, w.hinted));
    }
  }

  /** Sets the one timer: the earliest instant a waiter's class may take a token or its wait ends. */
  private rearm(now: number): void {
    let at = Infinity;
    for (const w of this.room) at = Math.min(at, w.until, Math.max(w.gate.at, now));
    if (at === this.wakeAt) return;
    this.cancelWake?.();
    this.cancelWake = undefined;
    this.wakeAt = undefined;
    if (at === Infinity || this.wake === undefined) return;
    this.wakeAt = at;
    this.cancelWake = this.wake(() => {
      this.cancelWake = undefined;
      this.wakeAt = undefined;
      const woken = this.clock.now();
      this.serve(woken);
      this.rearm(woken);
    }, at - now);
  }

  /**
   * Held: by its payment's own query (rule 1), until that allows; otherwise its place in its
   * class's line (kept or taken; a hinted one counts only the hinted places before it, as the
   * room serves them first), its turn the `retryAt`.
   */
  private hold(
    paymentId: string,
    priority: StatusPriority,
    gate: { reason: string; at: number },
    now: number,
    waits = false,
    hinted = false,
  ): StatusHeld {
    if (
      gate.reason === ADAPTER_REASONS.statusInFlight ||
      gate.reason === ADAPTER_REASONS.statusRecent
    )
      return held(gate.reason, gate.at);
    const spacing = this.lineSpacing(priority, now);
    const turn = this.lines[priority].held(paymentId, now, gate.at, spacing, hinted);
    // A query that may wait (`waits`) is told to come back half a wait before its turn: in the
    // room when its token comes, where it goes before those who took their places after it (told
    // the very instant of its token, it would find it given to one that came a moment earlier,
    // every round).
    return held(gate.reason, waits ? Math.max(now, turn - this.waitMs / 2) : turn);
  }

  /** Admitted now (rules 2-4 passed): takes its tokens and a slot. */
  private go(
    paymentId: string,
    priority: StatusPriority,
    now: number,
    hinted: boolean,
  ): StatusAnswer {
    const release = this.slots.tryAcquire();
    if (release === undefined) {
      const gate = {
        reason: ADAPTER_REASONS.concurrencyLimited,
        at: now + this.options.slotWaitMs,
      };
      return this.hold(paymentId, priority, gate, now, false, hinted);
    }
    this.lines[priority].admitted(paymentId);
    // The buckets were checked: these take a token now and never book a future one. A
    // background query beyond its share (nothing else asking) takes none of the share's.
    this.bucket.reserve(0);
    if (priority === 'background' && this.background?.availableAt(1, now) === now)
      this.background.reserve(0);
    this.endpointBucket.reserve(0);
    const entry: PaymentEntry = { startedAt: now, inFlight: true };
    this.payments.delete(paymentId);
    this.payments.set(paymentId, entry);
    let finished = false;
    return {
      kind: 'send',
      done: () => {
        if (finished) return;
        finished = true;
        entry.inFlight = false;
        release();
        // A slot freed: a query waiting for one may go now.
        if (this.room.length > 0) {
          const at = this.clock.now();
          this.serve(at);
          this.rearm(at);
        }
      },
    };
  }

  /** What holds a query about `paymentId` back now (the budget's rule 1), or undefined. */
  private paymentGate(paymentId: string, now: number): { reason: string; at: number } | undefined {
    const previous = this.payments.get(paymentId);
    if (previous === undefined) return undefined;
    const after = previous.startedAt + this.options.minIntervalMs;
    if (previous.inFlight) {
      const at = Math.max(after, now + this.options.slotWaitMs);
      return { reason: ADAPTER_REASONS.statusInFlight, at };
    }
    return after > now ? { reason: ADAPTER_REASONS.statusRecent, at: after } : undefined;
  }

  /** What holds a query of `priority` back now (the budget's rules 2-4), or undefined. */
  private gate(priority: StatusPriority, now: number): { reason: string; at: number } | undefined {
    const statusTokenAt = this.bucket.availableAt(1, now);
    if (statusTokenAt > now) return { reason: ADAPTER_REASONS.statusBudget, at: statusTokenAt };
    if ((priority === 'routine' || priority === 'payer') && this.urgentReserve > 0) {
      const beyondReserveAt = this.bucket.availableAt(this.urgentReserve + 1, now);
      if (beyondReserveAt > now)
        return { reason: ADAPTER_REASONS.statusUrgentFirst, at: beyondReserveAt };
    }
    if (priority === 'background' && this.background !== undefined) {
      if (this.othersAsking(now)) {
        // The share binds, and is theirs: any token of the status bucket with one of its own.
        const shareAt = this.background.availableAt(1, now);
        if (shareAt > now) return { reason: ADAPTER_REASONS.statusBackgroundShare, at: shareAt };
      } else if (this.urgentReserve > 0) {
        // Work-conserving: nothing else asks, so beyond the share, but never the urgent reserve.
        const beyondReserveAt = this.bucket.availableAt(this.urgentReserve + 1, now);
        if (beyondReserveAt > now)
          return { reason: ADAPTER_REASONS.statusUrgentFirst, at: beyondReserveAt };
      }
    }
    const aboveReserveAt = this.endpointBucket.availableAt(
      this.options.moneyReservedTokens + 1,
      now,
    );
    if (aboveReserveAt > now) return { reason: ADAPTER_REASONS.moneyFirst, at: aboveReserveAt };
    const keepFree = this.slots.limit > 1 ? 1 : 0;
    if (this.slots.active + keepFree >= this.slots.limit)
      return { reason: ADAPTER_REASONS.concurrencyLimited, at: now + this.options.slotWaitMs };
    return undefined;
  }

  /** Whether a query of another class than background asked within the idle window. */
  private othersAsking(now: number): boolean {
    return now - this.lastOtherAskAt < this.shareIdleMs;
  }

  /**
   * One token of the class's rate, now: for background, the share's while other classes ask
   * (the share binds), the status rate's otherwise (a held place's turn must not leave the budget
   * idle while nothing else asks).
   */
  private lineSpacing(priority: StatusPriority, now: number): number {
    return priority === 'background' && this.share < 1 && this.othersAsking(now)
      ? this.spacingMs / this.share
      : this.spacingMs;
  }

  /** Forgets payments whose interval has passed, oldest first; stops at the first still fresh. */
  private prune(now: number): void {
    for (const [paymentId, entry] of this.payments) {
      if (entry.inFlight) continue;
      if (entry.startedAt + this.options.minIntervalMs > now) break;
      this.payments.delete(paymentId);
    }
  }
}

const held = (reason: string, retryAt: number): StatusHeld => ({ kind: 'held', reason, retryAt });
