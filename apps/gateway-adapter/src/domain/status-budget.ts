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
   * The share of the status rate `background` queries may take at most, in (0, 1] (undefined: 1,
   * no bound): their own bucket at that rate, on top of the status bucket.
   */
  readonly backgroundShare?: number;
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
 *       burst 1): never more than that share, so no population of old unknowns takes the budget
 *       from fresher ones — and that share is theirs, so none of them is starved for good;
 *     - `routine` and `payer`: a token beyond the `urgentReservedTokens` (what is left once
 *       urgent and background queries had theirs);
 *  3. the endpoint's bucket holds more than `moneyReservedTokens` whole tokens (money operations'
 *     bookings make it negative, so a poll never takes a token a money operation is waiting for);
 *  4. a concurrency slot is free and another stays free for a money operation (when the limit is
 *     1 there is no other, and a poll may take the only one);
 *  5. its class's line lets it go (StatusLine): a payment held earlier in the class has a place
 *     and a turn (its `retryAt`, one token of the class's rate after the turn before it), and
 *     while a place is due, a payment of that class without one is held and takes a place at the
 *     end. Those held go first in the order they were held, whatever order a timer batch brings
 *     the queries in, so no payment is starved for good (issue #38).
 * Otherwise it is held at once — nothing waits, nothing is booked, nothing queues — with the
 * earliest instant the blocking rule could pass. Money operations keep their bounded waits
 * (reserve a token, queue for a slot), and a freed slot goes to a queued money operation first.
 * Pure apart from the shared bucket and semaphore: time from the injected clock.
 */
export class StatusBudget {
  private readonly bucket: TokenBucket;
  private readonly background: TokenBucket | undefined;
  private readonly urgentReserve: number;
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
    this.lines = {
      urgent: new StatusLine(spacing, claimMs),
      routine: new StatusLine(spacing, claimMs),
      payer: new StatusLine(spacing, claimMs),
      background: new StatusLine(spacing / share, claimMs),
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
    const gate = this.gate(priority, now);
    if (gate !== undefined) return held(gate.reason, line.held(paymentId, now, gate.at));
    if (!line.mayGo(paymentId, now))
      return held(ADAPTER_REASONS.statusTurn, line.held(paymentId, now, now));
    const release = this.slots.tryAcquire();
    if (release === undefined) {
      const at = now + this.options.slotWaitMs;
      return held(ADAPTER_REASONS.concurrencyLimited, line.held(paymentId, now, at));
    }
    line.admitted(paymentId);
    const backgroundBucket = priority === 'background' ? this.background : undefined;
    // Both buckets were checked above: these take a token now and never book a future one.
    this.bucket.reserve(0);
    backgroundBucket?.reserve(0);
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
      const shareAt = this.background.availableAt(1, now);
      if (shareAt > now) return { reason: ADAPTER_REASONS.statusBackgroundShare, at: shareAt };
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
