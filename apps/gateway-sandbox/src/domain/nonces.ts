/**
 * OAuth replay protection: a nonce may be used once per consumer key while its timestamp is
 * inside the accepted window; entries older than the window are forgotten.
 */
export class NonceStore {
  private readonly seen = new Map<string, number>();
  private lastPrune = 0;

  constructor(private readonly windowMs: number) {}

  /** True when the nonce is fresh (and records it); false when it was used already. */
  use(consumerKey: string, nonce: string, nowMs: number): boolean {
    this.prune(nowMs);
    const key = `${consumerKey}\u0000${nonce}`;
    if (this.seen.has(key)) return false;
    this.seen.set(key, nowMs + 2 * this.windowMs);
    return true;
  }

  clear(): void {
    this.seen.clear();
  }

  private prune(nowMs: number): void {
    // Insertion order is expiry order, so the sweep stops at the first live entry.
    if (nowMs - this.lastPrune < 1000) return;
    this.lastPrune = nowMs;
    for (const [key, expires] of this.seen) {
      if (expires > nowMs) break;
      this.seen.delete(key);
    }
  }
}
