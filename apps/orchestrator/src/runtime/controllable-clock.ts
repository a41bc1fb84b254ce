import { Injectable } from '@nestjs/common';
import { Clock } from './clock';

/**
 * The orchestrator's clock moved forward by hand (test controls only, TEST_CONTROLS_ENABLED):
 * the system time plus an offset that only grows (until `reset`), so e2e tests run a monthly
 * schedule's cycles in seconds. Never configured in production: time here is what timers and events are stamped with.
 */
@Injectable()
export class ControllableClock extends Clock {
  private offsetMs = 0;

  override now(): Date {
    return new Date(super.now().getTime() + this.offsetMs);
  }

  /**
   * Back to the system time (the demo, after its schedule section, before it keeps running: what
   * people then do is stamped with the real time). Timers set while it ran ahead stay where they
   * were set; only a caller that no longer needs them (a completed schedule) should reset.
   */
  reset(): Date {
    this.offsetMs = 0;
    return this.now();
  }

  /** Moves the clock forward; returns the new now. */
  advance(ms: number): Date {
    if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError('advance by whole ms >= 0');
    this.offsetMs += ms;
    return this.now();
  }
}
