/**
 * The sandbox's virtual clock: real time plus an offset that tests advance. Processing delays,
 * settlement, payout-check expiry, the 3DS method timeout and recurring schedules all read it.
 * OAuth timestamps and callback retries use wall time (they are about the real network).
 */
export interface Clock {
  now(): number;
}

export class VirtualClock implements Clock {
  private offsetMs = 0;

  constructor(private readonly wall: () => number = Date.now) {}

  now(): number {
    return this.wall() + this.offsetMs;
  }

  advance(ms: number): void {
    if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError('advance by a whole ms >= 0');
    this.offsetMs += ms;
  }

  reset(): void {
    this.offsetMs = 0;
  }

  get offset(): number {
    return this.offsetMs;
  }
}
