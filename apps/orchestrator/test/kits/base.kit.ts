/**
 * What every orchestrator test kit stands on (test support only): the instant tests start at, ids
 * that repeat from run to run, and the one clock a test moves by hand. Kept free of any flow so
 * that every flow's kit, and the database fixture, can import it without a cycle.
 */
import { Clock } from '../../src/runtime/clock';

/** The instant the deciders' tests start at (a flow with another calendar names its own). */
export const T0 = '2025-03-01T10:00:00.000Z';

/** `offsetMs` after `from` (default T0), as an ISO timestamp. */
export function at(offsetMs: number, from = T0): string {
  return new Date(Date.parse(from) + offsetMs).toISOString();
}

/** Deterministic uuids: <prefix>-0000-4000-8000-<n> (n from `start`, in hex). */
export function idSequence(start = 1, prefix = '10000000'): { next(): string } {
  let n = start;
  return { next: () => `${prefix}-0000-4000-8000-${(n++).toString(16).padStart(12, '0')}` };
}

let counter = 0;
/** A fresh uuid for a test's saga or command (20000000-0000-4000-8000-<n>, n counting up). */
export const uuid = (n = ++counter) =>
  `20000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

/** The orchestrator's clock standing still until a test moves or sets it. */
export class TestClock extends Clock {
  at: Date;

  constructor(start: string | Date = T0) {
    super();
    this.at = new Date(start);
  }

  override now(): Date {
    return new Date(this.at);
  }

  /** Moves the clock forward; returns the new now. */
  advance(ms: number): Date {
    this.at = new Date(this.at.getTime() + ms);
    return this.now();
  }

  /** Sets the clock to `instant`. */
  set(instant: string | Date): void {
    this.at = new Date(instant);
  }

  /** Now, as the ISO timestamp commands and events carry. */
  iso(): string {
    return this.at.toISOString();
  }
}
