import { WakeableSleep } from './wakeable-sleep';

describe('WakeableSleep', () => {
  it('ends a sleep when woken', async () => {
    const s = new WakeableSleep();
    const sleeping = s.sleep(60_000);
    s.wake();
    await expect(sleeping).resolves.toBeUndefined();
  });

  it('keeps a wake-up that came while nobody slept, until consumed', async () => {
    const s = new WakeableSleep();
    s.wake();
    await expect(s.sleep(60_000)).resolves.toBeUndefined();
    s.consume();
    let done = false;
    const sleeping = s.sleep(60_000).then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    s.wake();
    await sleeping;
    expect(done).toBe(true);
  });
});
