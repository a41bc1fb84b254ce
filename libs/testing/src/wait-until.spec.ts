import { waitUntil } from './wait-until';

describe('waitUntil', () => {
  it('returns the first answer that is neither undefined nor false', async () => {
    let calls = 0;
    const value = await waitUntil(
      () => {
        calls += 1;
        return calls < 3 ? undefined : { calls };
      },
      'the third call',
      { everyMs: 1 },
    );
    expect(value).toEqual({ calls: 3 });
  });

  it('passes a true and a zero through (only undefined and false mean "not yet")', async () => {
    await expect(waitUntil(() => true, 'true')).resolves.toBe(true);
    await expect(waitUntil(() => 0, 'zero')).resolves.toBe(0);
  });

  it('names what it waited for when the time runs out', async () => {
    await expect(
      waitUntil(async () => false, 'the moon', { timeoutMs: 20, everyMs: 5 }),
    ).rejects.toThrow('timed out waiting for the moon');
  });
});
