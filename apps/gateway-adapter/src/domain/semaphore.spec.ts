import { Semaphore, SemaphoreTimeoutError } from './semaphore';

describe('Semaphore', () => {
  it('grants up to the limit, then queues first come first served', async () => {
    const semaphore = new Semaphore(2);
    const a = await semaphore.acquire();
    const b = await semaphore.acquire();
    expect(semaphore.tryAcquire()).toBeUndefined();
    const order: string[] = [];
    const c = semaphore.acquire().then((release) => (order.push('c'), release));
    const d = semaphore.acquire().then((release) => (order.push('d'), release));
    expect(semaphore.waiting).toBe(2);
    a();
    a(); // a second release of the same slot is ignored
    const releaseC = await c;
    expect(order).toEqual(['c']);
    expect(semaphore.active).toBe(2);
    b();
    (await d)();
    releaseC();
    expect(semaphore.active).toBe(0);
  });

  it('an aborted wait leaves the queue and rejects', async () => {
    const semaphore = new Semaphore(1);
    const held = await semaphore.acquire();
    const controller = new AbortController();
    const waiting = semaphore.acquire(controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(SemaphoreTimeoutError);
    expect(semaphore.waiting).toBe(0);
    held();
    expect(semaphore.active).toBe(0);
  });
});
