import { ManualClock } from '../../../../test/support/callback';
import { HintLimiter } from './hint-limiter';

describe('HintLimiter', () => {
  const a = '00000000-0000-4000-8000-00000000000a';
  const b = '00000000-0000-4000-8000-00000000000b';

  it('admits one hint per payment per window', () => {
    const clock = new ManualClock();
    const limiter = new HintLimiter(clock, 60_000, 100);
    expect(limiter.tryAdmit(a)).toBe('admitted');
    expect(limiter.tryAdmit(a)).toBe('rate-limited');
    expect(limiter.tryAdmit(b)).toBe('admitted');
    clock.advance(59_999);
    expect(limiter.tryAdmit(a)).toBe('rate-limited');
    clock.advance(1);
    expect(limiter.tryAdmit(a)).toBe('admitted');
    expect(limiter.tryAdmit(a)).toBe('rate-limited');
  });

  it('stays within its capacity and frees expired entries', () => {
    const clock = new ManualClock();
    const limiter = new HintLimiter(clock, 1_000, 2);
    expect(limiter.tryAdmit(a)).toBe('admitted');
    clock.advance(500);
    expect(limiter.tryAdmit(b)).toBe('admitted');
    expect(limiter.tryAdmit('c')).toBe('full');
    expect(limiter.size).toBe(2);
    clock.advance(500); // a expired, b not yet
    expect(limiter.tryAdmit('c')).toBe('admitted');
    expect(limiter.size).toBe(2);
    expect(limiter.tryAdmit(b)).toBe('rate-limited');
  });

  it('gives a slot back on release (the hint could not be sent)', () => {
    const limiter = new HintLimiter(new ManualClock(), 60_000, 10);
    expect(limiter.tryAdmit(a)).toBe('admitted');
    limiter.release(a);
    expect(limiter.tryAdmit(a)).toBe('admitted');
  });

  it('does not pin entries when the clock goes backwards', () => {
    const clock = new ManualClock();
    const limiter = new HintLimiter(clock, 60_000, 1);
    expect(limiter.tryAdmit(a)).toBe('admitted');
    clock.advance(-10_000);
    expect(limiter.tryAdmit(b)).toBe('admitted');
  });

  it('rejects nonsense settings', () => {
    expect(() => new HintLimiter(new ManualClock(), 0, 1)).toThrow(RangeError);
    expect(() => new HintLimiter(new ManualClock(), 1, 0)).toThrow(RangeError);
  });
});
