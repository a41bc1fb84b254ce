/** Time as data (epoch milliseconds), so limits and the breaker are tested without waiting. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
