/**
 * Spacing for a rate limit: the earliest time the n-th item (0-based) may start when at most
 * `perSecond` start per second, counted from `startedAt` (no bursts, no drift: each slot is computed
 * from the start, not from the previous item's end).
 */
export function slotFor(n: number, perSecond: number, startedAt: number): number {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`item index must be >= 0, got ${n}`);
  if (!(perSecond > 0) || !Number.isFinite(perSecond)) {
    throw new RangeError(`rate must be a positive number per second, got ${perSecond}`);
  }
  return startedAt + Math.ceil((n * 1000) / perSecond);
}
