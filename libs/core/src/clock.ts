/**
 * Time as data (STYLE.md): code that reads the time takes a Clock, so tests move it by hand
 * instead of waiting. Epoch milliseconds; `new Date(clock.now())` where a Date is wanted.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. Starts at a fixed instant so runs are reproducible. */
export class ManualClock implements Clock {
  constructor(private current = 1_700_000_000_000) {}

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    this.current += ms;
  }

  set(epochMs: number): void {
    this.current = epochMs;
  }
}
