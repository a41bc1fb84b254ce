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
   * How long a held payment's place in its class's line stays due after the `retryAt` it was
   * given (undefined: {@link DEFAULT_TURN_CLAIM_MS}): the orchestrator asks again at `retryAt`
   * plus a jitter of up to 2 s, and the way there takes time on a loaded machine.
   */
  readonly turnClaimMs?: number;
}

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

interface PaymentEntry {
  startedAt: number;
  inFlight: boolean;
}

/**
 * The scheduling rule for status queries (polls) of one endpoint: money
 * operations go first, polls share a bounded budget and never queue, and among polls need goes
 * before arrival (the request's `priority`, set by the orchestrator's one scheduler,
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
 *  5. its class's line lets it go (StatusLine): a payment held earlier in the class has a place
 *     and a turn (its `retryAt`, one token of the class's rate after the turn before it: for
 *     background, the share's rate while other classes ask, the status rate otherwise), and
 *     while a place is due, a payment of that class without one is held and takes a place at the
 *     end. Those held go first in the order they were held, whatever order a timer batch brings
 *     the queries in, so no payment is starved for good (issue #38); but a payment whose turn has
 *     come is not held for one held again before it while the tokens are spare (one more of its
 *     class would still go), so the line never leaves the budget idle while truth waits.
 * Otherwise it is held at once — nothing waits, nothing is booked, nothing queues — with the
 * earliest instant the blocking rule could pass. Money operations keep their bounded waits
 * (reserve a token, queue for a slot), and a freed slot goes to a queued money operation first.
 * Pure apart from the shared bucket and semaphore: time from the injected clock.
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

  constructor(
    private readonly options: StatusBudgetOptions,
    private readonly endpointBucket: TokenBucket,
    private readonly slots: Semaphore,
    private readonly clock: Clock,
  ) {
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

  /** `priority`: the query's class (undefined: `routine`). */
  admit(paymentId: string, priority: StatusPriority = 'routine'): StatusGo | StatusHeld {
    const now = this.clock.now();
    if (priority !== 'background') this.lastOtherAskAt = now;
    this.prune(now);
    const previous = this.payments.get(paymentId);
    if (previous !== undefined) {
      const after = previous.startedAt + this.options.minIntervalMs;
      if (previous.inFlight) {
        return held(ADAPTER_REASONS.statusInFlight, Math.max(after, now + this.options.slotWaitMs));
      }
      if (after > now) return held(ADAPTER_REASONS.statusRecent, after);
    }
    const line = this.lines[priority];
    const spacing = this.lineSpacing(priority, now);
    const gate = this.gate(priority, now);
    if (gate !== undefined) return held(gate.reason, line.held(paymentId, now, gate.at, spacing));
    if (!line.mayGo(paymentId, now, this.spare(priority, now)))
      return held(ADAPTER_REASONS.statusTurn, line.held(paymentId, now, now, spacing));
    const release = this.slots.tryAcquire();
    if (release === undefined) {
      const at = now + this.options.slotWaitMs;
      return held(ADAPTER_REASONS.concurrencyLimited, line.held(paymentId, now, at, spacing));
    }
    line.admitted(paymentId);
    // The buckets were checked above: these take a token now and never book a future one. A
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
      },
    };
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

  /**
   * Whether the status bucket holds a token beyond what a query of `priority` needs (rule 2): one
   * going now leaves one for a payment of its class held earlier and on its way back.
   */
  private spare(priority: StatusPriority, now: number): boolean {
    if (priority === 'background' && this.background !== undefined && this.othersAsking(now))
      return false;
    const need =
      priority === 'urgent' || (priority === 'background' && this.background === undefined)
        ? 1
        : this.urgentReserve + 1;
    return this.bucket.availableAt(need + 1, now) <= now;
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
