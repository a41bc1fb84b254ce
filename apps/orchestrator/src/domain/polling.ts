/**
 * Status polling backoff (facts §4): "pull the status every 3-5 seconds for the first 5 minutes,
 * then continue requests for up to an hour once in 5-10 minutes. After it is better to wait for a
 * callback" — we keep polling after the hour, slowly, because a payment must not stay unknown
 * forever just because a callback got lost.
 *
 * Pure: the spread inside each band comes from the attempt number, not from randomness, so tests
 * and replays see the same schedule while consecutive polls of many payments still spread out.
 */
export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

export const POLL_BANDS = [
  { until: 5 * MINUTE, min: 3 * SECOND, max: 5 * SECOND, step: SECOND },
  { until: HOUR, min: 5 * MINUTE, max: 10 * MINUTE, step: MINUTE },
  { until: Number.POSITIVE_INFINITY, min: HOUR, max: HOUR, step: 0 },
] as const;

/**
 * Delay before the next status query.
 * @param attempt 0-based number of the poll being scheduled
 * @param elapsedMs time since the request was sent
 */
export function nextPollDelay(attempt: number, elapsedMs: number): number {
  const band =
    POLL_BANDS.find((b) => Math.max(0, elapsedMs) < b.until) ?? POLL_BANDS[POLL_BANDS.length - 1];
  const slots = band.step === 0 ? 1 : Math.floor((band.max - band.min) / band.step) + 1;
  const spread = band.step * (Math.abs(Math.trunc(attempt)) % slots);
  const delay = band.min + spread;
  // Do not jump over the start of the next band by more than needed: the first 5-minute poll
  // should not be delayed 10 minutes past the end of the fast phase.
  return band.until === Number.POSITIVE_INFINITY
    ? delay
    : Math.min(delay, Math.max(band.min, band.until - elapsedMs));
}

/** Delay before resending a request that was provably not sent (breaker open, rate limited). */
export function notSentRetryDelay(attempt: number): number {
  return Math.min(5 * MINUTE, 2 ** Math.max(0, attempt - 1) * SECOND);
}
