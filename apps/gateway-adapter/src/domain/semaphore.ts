/** Thrown by `Semaphore.acquire` when its signal aborts before a slot was free. */
export class SemaphoreTimeoutError extends Error {
  constructor() {
    super('no free slot in time');
    this.name = 'SemaphoreTimeoutError';
  }
}

/**
 * Counting semaphore (per-endpoint concurrency limit). `acquire` resolves with a release function
 * once a slot is free, first come first served; an aborted wait leaves the queue and rejects.
 */
export class Semaphore {
  private inUse = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error('a semaphore needs a limit >= 1');
  }

  get active(): number {
    return this.inUse;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  tryAcquire(): (() => void) | undefined {
    if (this.inUse >= this.limit) return undefined;
    this.inUse += 1;
    return this.releaser();
  }

  acquire(signal?: AbortSignal): Promise<() => void> {
    const now = this.tryAcquire();
    if (now) return Promise.resolve(now);
    if (signal?.aborted) return Promise.reject(new SemaphoreTimeoutError());
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        this.inUse += 1;
        resolve(this.releaser());
      };
      const onAbort = () => {
        const index = this.waiters.indexOf(grant);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(new SemaphoreTimeoutError());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(grant);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse -= 1;
      this.waiters.shift()?.();
    };
  }
}
