import type { Clock } from '@payments/core';

export interface TokenBucketOptions {
  /** Tokens added per second (the sustained request rate). */
  readonly ratePerSecond: number;
  /** Bucket size (the burst allowed after a quiet period). */
  readonly burst: number;
}

/**
 * Token bucket with reservations: `reserve(maxWaitMs)` takes a token now or books the next free
 * one in the future and says how long to wait for it. A caller whose wait would exceed the bound
 * gets `undefined` and no token is consumed (the request is answered not-sent "rate-limited").
 * Pure: time comes from the injected clock; the caller does the sleeping.
 */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly options: TokenBucketOptions,
    private readonly clock: Clock,
  ) {
    if (!(options.ratePerSecond > 0) || !(options.burst >= 1)) {
      throw new Error('a token bucket needs ratePerSecond > 0 and burst >= 1');
    }
    this.tokens = options.burst;
    this.updatedAt = clock.now();
  }

  /** Milliseconds to wait before the reserved token may be used, or undefined when over the bound. */
  reserve(maxWaitMs: number): number | undefined {
    this.refill();
    const after = this.tokens - 1;
    const waitMs = after >= 0 ? 0 : Math.ceil((-after * 1000) / this.options.ratePerSecond);
    if (waitMs > maxWaitMs) return undefined;
    this.tokens = after;
    return waitMs;
  }

  /**
   * The instant (clock milliseconds) at which `level` whole tokens will be available if nobody
   * else takes or books one: `now` when they already are; otherwise after the outstanding
   * reservations have been served and enough has refilled. `availableAt(1)` is when the next
   * token is due: the `retryAt` of a request refused as rate-limited. A caller that compares the
   * answer with its own reading of the clock passes that reading as `now`: the clock moves
   * between two readings, and "available now" must not read as "a millisecond from now".
   */
  availableAt(level = 1, now = this.clock.now()): number {
    this.refill(now);
    if (this.tokens >= level) return now;
    return now + Math.ceil(((level - this.tokens) * 1000) / this.options.ratePerSecond);
  }

  /** Tokens available now (negative while reservations are outstanding). */
  available(): number {
    this.refill();
    return this.tokens;
  }

  private refill(now = this.clock.now()): void {
    // A reading older than the last one (a caller's own `now`) adds nothing and moves nothing back.
    if (now <= this.updatedAt) return;
    const elapsed = now - this.updatedAt;
    this.updatedAt = now;
    this.tokens = Math.min(
      this.options.burst,
      this.tokens + (elapsed * this.options.ratePerSecond) / 1000,
    );
  }
}
