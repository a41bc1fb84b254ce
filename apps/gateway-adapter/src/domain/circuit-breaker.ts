import type { Clock } from '@payments/core';

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** Consecutive transport failures (unknown / not-sent) that open the breaker. */
  readonly failureThreshold: number;
  /** How long it stays open before one trial call is let through (half-open). */
  readonly cooldownMs: number;
}

/** What `tryAcquire` hands out: report the call's result through it exactly once. */
export interface BreakerPermit {
  /** The gateway answered (accepted or rejected): closes a half-open breaker, resets the count. */
  success(): void;
  /** Transport failure (unknown or not-sent): counts towards opening; re-opens a half-open one. */
  failure(): void;
  /** No call was made after all (e.g. the ledger refused it): frees a half-open trial slot. */
  cancel(): void;
}

/**
 * Per-endpoint circuit breaker. Closed: calls pass; N consecutive transport failures open it.
 * Open: calls are refused (answered not-sent "circuit open", no ledger row, no network) until the
 * cool-down has passed. Half-open: exactly one trial call passes; its success closes the breaker,
 * its failure opens it again for another cool-down. Pure: time from the injected clock.
 *
 * Status queries are never refused (`statusPermit`, issue #38): they move no money and the
 * endpoint's status budget already bounds their rate, so an open breaker that refused them only
 * kept a payment whose callback said money moved from its truth for the cool-down (up to a
 * minute in the chaos runs, faults re-opening it). What they do to the breaker:
 *  - closed: they count as any call (a failure towards opening it, an answer resets the count);
 *  - half-open with no trial in flight: the status query is the trial (its answer closes the
 *    breaker, its failure opens it again). A safer trial than a money operation's: a failed
 *    trial sale is an outcome unknown, a failed status query is nothing;
 *  - open, or a trial in flight: they pass and change nothing. An answer does not end the
 *    cool-down early (money waits for it as before: one answer from a flapping gateway must not
 *    let the money backlog in), and a failure does not extend it (the faults of a budget's worth
 *    of status queries would otherwise keep money out for good).
 */
export class CircuitBreaker {
  private current: BreakerState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private trialInFlight = false;

  constructor(
    private readonly options: CircuitBreakerOptions,
    private readonly clock: Clock,
    private readonly onStateChange: (state: BreakerState) => void = () => undefined,
  ) {
    if (!(options.failureThreshold >= 1) || !(options.cooldownMs >= 0)) {
      throw new Error('a circuit breaker needs failureThreshold >= 1 and cooldownMs >= 0');
    }
  }

  /** The state now (an open breaker whose cool-down has passed reports half-open). */
  get state(): BreakerState {
    if (this.current === 'open' && this.clock.now() - this.openedAt >= this.options.cooldownMs) {
      this.transition('half-open');
    }
    return this.current;
  }

  /** True when a call would be refused right now; changes nothing. */
  isRefusing(): boolean {
    const state = this.state;
    return state === 'open' || (state === 'half-open' && this.trialInFlight);
  }

  /**
   * When a refused call may next be let through (clock milliseconds): while open, the end of the
   * cool-down (the breaker half-opens then). Undefined when that instant is not known: closed
   * (nothing is refused), or half-open with the trial still in flight (its outcome decides).
   */
  halfOpensAt(): number | undefined {
    return this.state === 'open' ? this.openedAt + this.options.cooldownMs : undefined;
  }

  /**
   * A permit for one status query: never refused (see the class comment). Closed: a counting
   * permit; half-open with no trial in flight: the trial; otherwise one that changes nothing.
   */
  statusPermit(): BreakerPermit {
    const state = this.state;
    if (state === 'closed') return this.permit(false);
    if (state === 'half-open' && !this.trialInFlight) {
      this.trialInFlight = true;
      return this.permit(true);
    }
    return BYSTANDER;
  }

  /** A permit for one call, or undefined when the breaker refuses it. */
  tryAcquire(): BreakerPermit | undefined {
    const state = this.state;
    if (state === 'open') return undefined;
    if (state === 'half-open') {
      if (this.trialInFlight) return undefined;
      this.trialInFlight = true;
      return this.permit(true);
    }
    return this.permit(false);
  }

  private permit(trial: boolean): BreakerPermit {
    let used = false;
    const once = (fn: () => void) => () => {
      if (used) return;
      used = true;
      if (trial) this.trialInFlight = false;
      fn();
    };
    return {
      success: once(() => {
        this.failures = 0;
        if (this.current !== 'closed') this.transition('closed');
      }),
      failure: once(() => {
        if (this.current === 'half-open') {
          this.open();
          return;
        }
        this.failures += 1;
        if (this.current === 'closed' && this.failures >= this.options.failureThreshold) {
          this.open();
        }
      }),
      cancel: once(() => undefined),
    };
  }

  private open(): void {
    this.openedAt = this.clock.now();
    this.failures = 0;
    this.transition('open');
  }

  private transition(next: BreakerState): void {
    if (this.current === next) return;
    this.current = next;
    this.onStateChange(next);
  }
}

/** The permit of a status query that passed an open breaker: its outcome changes nothing. */
const BYSTANDER: BreakerPermit = {
  success: () => undefined,
  failure: () => undefined,
  cancel: () => undefined,
};
