/** Time enters as data (STYLE.md): the limiter and the received-at stamps read this. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export const CLOCK = Symbol('CLOCK');
