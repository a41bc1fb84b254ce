import { Clock } from './clock';
import { ControllableClock } from './controllable-clock';

describe('ControllableClock', () => {
  it('runs with the system clock, moved forward by what was advanced', () => {
    const clock = new ControllableClock();
    const system = new Clock();
    const before = system.now().getTime();
    const moved = clock.advance(30 * 86_400_000).getTime();
    const after = system.now().getTime();
    expect(moved - 30 * 86_400_000).toBeGreaterThanOrEqual(before);
    expect(moved - 30 * 86_400_000).toBeLessThanOrEqual(after);
    expect(clock.now().getTime()).toBeGreaterThanOrEqual(moved);
  });

  it('never goes back', () => {
    expect(() => new ControllableClock().advance(-1)).toThrow(RangeError);
  });

  it('goes back to the system time when reset', () => {
    const clock = new ControllableClock();
    clock.advance(64 * 86_400_000);
    const before = Date.now();
    const reset = clock.reset().getTime();
    expect(reset).toBeGreaterThanOrEqual(before);
    expect(reset).toBeLessThanOrEqual(Date.now());
  });
});
