import { CallbackDispatcher, withQuery } from './callback-dispatcher';
import { FaultRegistry } from '../domain/faults';

const settings = {
  maxAttempts: 30,
  baseDelayMs: 60_000,
  maxDelayMs: 61_200_000,
  timeoutMs: 1000,
  reorderHoldMs: 10,
};

describe('CallbackDispatcher', () => {
  it('backs off exponentially from the base delay up to the cap; 30 attempts span about two weeks', () => {
    const d = new CallbackDispatcher(new FaultRegistry(), settings, () => Promise.resolve(200));
    expect([1, 2, 3, 4].map((n) => d.delayBefore(n))).toEqual([0, 60_000, 120_000, 240_000]);
    let total = 0;
    for (let n = 2; n <= 30; n += 1) total += d.delayBefore(n);
    const days = total / 86_400_000;
    expect(days).toBeGreaterThan(13);
    expect(days).toBeLessThan(16);
  });

  it('retries non-200 answers until 200, then stops', async () => {
    const answers = [500, 0, 200];
    const urls: string[] = [];
    const d = new CallbackDispatcher(
      new FaultRegistry(),
      { ...settings, baseDelayMs: 1, maxDelayMs: 2 },
      (url) => {
        urls.push(url);
        return Promise.resolve(answers.shift() ?? 200);
      },
    );
    d.enqueue({
      url: 'http://m.test/cb?x=1',
      params: { status: 'approved' },
      login: 'm',
      clientOrderId: 'o',
      endpointId: '1',
      maxAttempts: undefined,
    });
    for (let i = 0; i < 200 && !(d.idle() && urls.length === 3); i += 1)
      await new Promise((r) => setTimeout(r, 5));
    expect(d.log().map((a) => a.httpStatus)).toEqual([500, 0, 200]);
    expect(urls[0]).toBe('http://m.test/cb?x=1&status=approved');
  });

  it('a no-currency fault sends the callback without its currency, everything else as it was', async () => {
    const faults = new FaultRegistry();
    faults.add({ clientOrderId: 'o', callbacks: 'no-currency' });
    const urls: string[] = [];
    const d = new CallbackDispatcher(faults, settings, (url) => {
      urls.push(url);
      return Promise.resolve(200);
    });
    d.enqueue({
      url: 'http://m.test/cb',
      params: { status: 'approved', amount: '70.00', currency: 'EUR', control: 'c' },
      login: 'm',
      clientOrderId: 'o',
      endpointId: '1',
      maxAttempts: undefined,
    });
    for (let i = 0; i < 200 && !(d.idle() && urls.length === 1); i += 1)
      await new Promise((r) => setTimeout(r, 5));
    expect(urls).toEqual(['http://m.test/cb?status=approved&amount=70.00&control=c']);
  });

  it('a replyTransactionType rule makes the callback name that type, and spends no use of it', async () => {
    const faults = new FaultRegistry();
    faults.add({
      clientOrderId: 'o',
      operation: 'STATUS',
      replyTransactionType: 'hold',
      remaining: 1,
    });
    const urls: string[] = [];
    const d = new CallbackDispatcher(faults, settings, (url) => {
      urls.push(url);
      return Promise.resolve(200);
    });
    const delivery = (clientOrderId: string) => ({
      url: 'http://m.test/cb',
      params: { status: 'approved', type: 'preauth', control: 'c' },
      login: 'm',
      clientOrderId,
      endpointId: '1',
      maxAttempts: undefined,
    });
    d.enqueue(delivery('o'));
    d.enqueue(delivery('other'));
    for (let i = 0; i < 200 && !(d.idle() && urls.length === 2); i += 1)
      await new Promise((r) => setTimeout(r, 5));
    expect(urls.sort()).toEqual([
      'http://m.test/cb?status=approved&type=hold&control=c',
      'http://m.test/cb?status=approved&type=preauth&control=c',
    ]);
    expect(faults.list()).toEqual([expect.objectContaining({ remaining: 1 })]);
  });

  it('honours a per-merchant attempt limit', async () => {
    const d = new CallbackDispatcher(
      new FaultRegistry(),
      { ...settings, baseDelayMs: 1, maxDelayMs: 1 },
      () => Promise.resolve(503),
    );
    d.enqueue({
      url: 'http://m.test/',
      params: {},
      login: 'm',
      clientOrderId: 'o',
      endpointId: '1',
      maxAttempts: 2,
    });
    for (let i = 0; i < 200 && !(d.idle() && d.log().length > 0); i += 1)
      await new Promise((r) => setTimeout(r, 5));
    expect(d.log()).toHaveLength(2);
  });

  it('appends parameters with URL encoding, keeping the merchant query', () => {
    expect(withQuery('http://m.test/a?k=v', { error_message: 'a b&c' })).toBe(
      'http://m.test/a?k=v&error_message=a+b%26c',
    );
  });
});
