/**
 * Bounded exponential backoff for retrying a failed handler in place (the partition waits; order
 * within it is kept). Deterministic on purpose: retries are sequential per partition, so there is
 * no herd to spread, and a fixed schedule is easy to reason about and to test.
 */
export interface RetryPolicy {
  /** Retries after the first attempt; 0 = a failing message goes to the DLQ at once. */
  readonly retries: number;
  /** Delay before the first retry, in ms. */
  readonly initialDelayMs: number;
  /** Upper bound of any single delay, in ms. */
  readonly maxDelayMs: number;
  /** Growth factor between consecutive delays (default 2). */
  readonly multiplier?: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retries: 5,
  initialDelayMs: 200,
  maxDelayMs: 10_000,
  multiplier: 2,
};

/** Delay in ms before retry number `retry` (1 = the first retry). */
export function backoffDelay(retry: number, policy: RetryPolicy): number {
  if (!Number.isInteger(retry) || retry < 1) {
    throw new RangeError(`retry must be a whole number >= 1, got ${retry}`);
  }
  const multiplier = policy.multiplier ?? 2;
  const raw = policy.initialDelayMs * Math.pow(multiplier, retry - 1);
  return Math.min(policy.maxDelayMs, Math.max(0, Math.round(raw)));
}

/** Every delay the policy will wait for one message, in order (length = retries). */
export function backoffSchedule(policy: RetryPolicy): number[] {
  return Array.from({ length: policy.retries }, (_, i) => backoffDelay(i + 1, policy));
}

/** Throws a RangeError naming the bad field; used when a consumer is configured. */
export function validateRetryPolicy(policy: RetryPolicy): RetryPolicy {
  const problems: string[] = [];
  if (!Number.isInteger(policy.retries) || policy.retries < 0) problems.push('retries >= 0');
  if (!(policy.initialDelayMs >= 0)) problems.push('initialDelayMs >= 0');
  if (!(policy.maxDelayMs >= policy.initialDelayMs)) problems.push('maxDelayMs >= initialDelayMs');
  if (policy.multiplier !== undefined && !(policy.multiplier >= 1))
    problems.push('multiplier >= 1');
  if (problems.length > 0)
    throw new RangeError(`invalid retry policy: expected ${problems.join(', ')}`);
  return policy;
}
