import type { Clock } from './clock';

export type HintAdmission = 'admitted' | 'rate-limited' | 'full';

/**
 * At most one status-check hint per payment per window, in bounded memory. Entries are kept in
 * insertion order, which is also time order (a re-admitted payment moves to the end), so expired
 * entries are purged from the front. When `capacity` payments are remembered within one window,
 * further hints are refused ('full'): hints are optional (the orchestrator polls anyway) and a
 * flood of forged callbacks must not grow memory or the hint stream without bound.
 */
export class HintLimiter {
  private readonly admittedAt = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly windowMs: number,
    private readonly capacity: number,
  ) {
    if (!(windowMs > 0) || !Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError('hint limiter: windowMs > 0 and a whole capacity >= 1 are required');
    }
  }

  tryAdmit(paymentId: string): HintAdmission {
    const now = this.clock.now();
    this.purge(now);
    const last = this.admittedAt.get(paymentId);
    if (last !== undefined && now - last < this.windowMs) return 'rate-limited';
    if (this.admittedAt.size >= this.capacity) return 'full';
    this.admittedAt.delete(paymentId);
    this.admittedAt.set(paymentId, now);
    return 'admitted';
  }

  /** Gives the slot back (the hint could not be published), so the next attempt may try. */
  release(paymentId: string): void {
    this.admittedAt.delete(paymentId);
  }

  get size(): number {
    return this.admittedAt.size;
  }

  private purge(now: number): void {
    for (const [paymentId, at] of this.admittedAt) {
      // A clock that went backwards counts as expired too, rather than pinning entries forever.
      if (now - at < this.windowMs && now >= at) break;
      this.admittedAt.delete(paymentId);
    }
  }
}
