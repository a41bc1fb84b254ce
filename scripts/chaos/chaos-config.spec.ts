import { dayCloseRequested, DEFAULT_FAULTS, faultRules } from './chaos-config';

/**
 * The sandbox applies the first fault rule that hits, so a share meant of all requests must be
 * drawn among what the rules before it left; the slow faults must outlast the adapter's timeout.
 */
describe('faultRules', () => {
  const mix = {
    ...DEFAULT_FAULTS,
    failBefore: 0.1,
    replyLost: 0.1,
    slowArrival: 0.2,
    slowAnswer: 0.2,
    statusFail: 0.5,
    statusRefused: 0.25,
    statusSlow: 0.25,
    gatewayTimeoutMs: 3_000,
  };
  const rules = faultRules(mix);

  it('draws each money-operation share among what the rules before it left', () => {
    const money = rules.filter((r) => r.operation === undefined && r.callbacks === undefined);
    [0.1, 0.1 / 0.9, 0.2 / 0.8, 0.2 / 0.6].forEach((p, i) =>
      expect(money[i].probability).toBeCloseTo(p, 10),
    );
    expect(money).toHaveLength(4);
    // What each rule takes of all requests: its chance of being reached times its own.
    let left = 1;
    const taken = money.map((r) => {
      const share = left * (r.probability ?? 1);
      left -= share;
      return share;
    });
    taken.forEach((share, i) => expect(share).toBeCloseTo([0.1, 0.1, 0.2, 0.2][i], 10));
  });

  it('draws the status shares apart from the money ones, a 403 among them', () => {
    const status = rules.filter((r) => r.operation === 'STATUS');
    expect(status).toEqual([
      { operation: 'STATUS', failBefore: 503, probability: 0.5 },
      { operation: 'STATUS', failBefore: 403, probability: 0.5 },
      { operation: 'STATUS', latencyMs: mix.statusLatencyMs, probability: 1 },
    ]);
  });

  it('makes the slow faults longer than the adapter waits', () => {
    const slow = rules.filter((r) => r.latencyAfterMs !== undefined || r.operation === undefined);
    const arrival = slow.find((r) => r.latencyMs !== undefined);
    const answer = slow.find((r) => r.latencyAfterMs !== undefined);
    expect(arrival?.latencyMs).toBeGreaterThan(mix.gatewayTimeoutMs);
    expect(answer?.latencyAfterMs).toBeGreaterThan(mix.gatewayTimeoutMs);
  });
});

describe('dayCloseRequested: on by default in npm run chaos, off in the e2e unless asked for', () => {
  it('without the flag or CHAOS_DAY_CLOSE, the caller’s default: off for the e2e, on for npm run chaos', () => {
    expect(dayCloseRequested([], {})).toBe(false);
    expect(dayCloseRequested(['--commands=300', '--cluster=false'], { CHAOS_SEED: '3' })).toBe(
      false,
    );
    expect(dayCloseRequested([], {}, true)).toBe(true);
    expect(dayCloseRequested(['--commands=300'], { CHAOS_DAY_CLOSE: '' }, true)).toBe(true);
    expect(dayCloseRequested([], { CHAOS_DAY_CLOSE: '' })).toBe(false);
  });

  it('is on with --day-close (bare, =true or =1) or CHAOS_DAY_CLOSE=1 (or true)', () => {
    expect(dayCloseRequested(['--day-close'], {})).toBe(true);
    expect(dayCloseRequested(['--seed=3', '--day-close=true'], {})).toBe(true);
    expect(dayCloseRequested(['--day-close=1'], {})).toBe(true);
    expect(dayCloseRequested([], { CHAOS_DAY_CLOSE: '1' })).toBe(true);
    expect(dayCloseRequested([], { CHAOS_DAY_CLOSE: 'true' })).toBe(true);
  });

  it('is off with --no-day-close, --day-close=false (or =0) or CHAOS_DAY_CLOSE=0 (or false), whatever the default', () => {
    expect(dayCloseRequested(['--no-day-close'], {}, true)).toBe(false);
    expect(dayCloseRequested(['--day-close=false'], {}, true)).toBe(false);
    expect(dayCloseRequested(['--day-close=0'], {}, true)).toBe(false);
    expect(dayCloseRequested([], { CHAOS_DAY_CLOSE: '0' }, true)).toBe(false);
    expect(dayCloseRequested([], { CHAOS_DAY_CLOSE: 'false' }, true)).toBe(false);
  });

  it('the flag wins over the environment, the last flag over an earlier one; a look-alike flag is not it', () => {
    expect(dayCloseRequested(['--day-close=false'], { CHAOS_DAY_CLOSE: '1' })).toBe(false);
    expect(dayCloseRequested(['--no-day-close'], { CHAOS_DAY_CLOSE: '1' }, true)).toBe(false);
    expect(dayCloseRequested(['--day-close'], { CHAOS_DAY_CLOSE: '0' })).toBe(true);
    expect(dayCloseRequested(['--no-day-close', '--day-close'], {}, true)).toBe(true);
    expect(dayCloseRequested(['--day-close', '--no-day-close'], {}, true)).toBe(false);
    expect(dayCloseRequested(['--day-closes'], {})).toBe(false);
    expect(dayCloseRequested(['--no-day-closes'], {}, true)).toBe(true);
  });
});
