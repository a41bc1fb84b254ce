import {
  backoffDelay,
  backoffSchedule,
  DEFAULT_RETRY_POLICY,
  validateRetryPolicy,
} from './backoff';

describe('backoff', () => {
  const policy = { retries: 6, initialDelayMs: 100, maxDelayMs: 1000, multiplier: 2 };

  it('doubles from the initial delay and stops growing at the maximum', () => {
    expect(backoffSchedule(policy)).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('uses the multiplier', () => {
    expect(
      backoffSchedule({ retries: 3, initialDelayMs: 10, maxDelayMs: 1e6, multiplier: 3 }),
    ).toEqual([10, 30, 90]);
  });

  it('has one delay per retry and none when retries are off', () => {
    expect(backoffSchedule({ ...policy, retries: 0 })).toEqual([]);
    expect(backoffSchedule(DEFAULT_RETRY_POLICY)).toHaveLength(DEFAULT_RETRY_POLICY.retries);
  });

  it('never exceeds the maximum, even for huge retry numbers', () => {
    expect(backoffDelay(10_000, policy)).toBe(1000);
  });

  it('rejects retry numbers below 1', () => {
    expect(() => backoffDelay(0, policy)).toThrow(RangeError);
    expect(() => backoffDelay(1.5, policy)).toThrow(RangeError);
  });

  it('validates policies with a message naming the bad field', () => {
    expect(() => validateRetryPolicy({ retries: -1, initialDelayMs: 1, maxDelayMs: 2 })).toThrow(
      /retries >= 0/,
    );
    expect(() => validateRetryPolicy({ retries: 1, initialDelayMs: 5, maxDelayMs: 2 })).toThrow(
      /maxDelayMs >= initialDelayMs/,
    );
    expect(() =>
      validateRetryPolicy({ retries: 1, initialDelayMs: 1, maxDelayMs: 2, multiplier: 0.5 }),
    ).toThrow(/multiplier >= 1/);
    expect(validateRetryPolicy(policy)).toBe(policy);
  });
});
