/**
 * Where the adapter's accepted requests wait and run, so that one endpoint's slow calls never hold
 * up another's: every endpoint has its own bounded count of outstanding requests (waiting for a
 * token or a slot, or in flight), and requests of one key (the saga id) run one after another in
 * the order they were accepted, as they did when the Kafka partition ran them one at a time.
 * Requests of different keys run at once; the endpoint's own limits (token bucket, semaphore,
 * status budget) decide when each reaches the gateway.
 *
 * Pure: no timers, no I/O; a task is any function returning a promise. A task that throws counts
 * as finished (the caller logs it; the adapter's hand-off row is then left for the sweeper).
 */
export class EndpointLanes {
  private readonly outstanding = new Map<string, number>();
  /** The last task of each key still running or waiting: the next one of that key waits for it. */
  private readonly tails = new Map<string, Promise<void>>();
  private running = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly boundOf: (endpointId: string) => number,
    /** Told each endpoint's new count after every change (a gauge). */
    private readonly onCount: (endpointId: string, count: number) => void = () => undefined,
  ) {}

  /** Requests of an endpoint accepted and not yet finished. */
  count(endpointId: string): number {
    return this.outstanding.get(endpointId) ?? 0;
  }

  /** Requests accepted and not yet finished, over every endpoint. */
  get total(): number {
    return this.running;
  }

  /**
   * Books a place in the endpoint's lane, or undefined when it holds its bound already (the
   * caller answers not-sent with `retryAt` and the request is not accepted). A booking must be
   * either started or cancelled exactly once.
   */
  reserve(endpointId: string): LaneTicket | undefined {
    const count = this.count(endpointId);
    if (count >= this.boundOf(endpointId)) return undefined;
    this.outstanding.set(endpointId, count + 1);
    this.running += 1;
    this.onCount(endpointId, count + 1);
    let used = false;
    const once = () => {
      if (used) throw new Error('a lane ticket is used once');
      used = true;
    };
    return {
      start: (key, task) => {
        once();
        const previous = this.tails.get(key) ?? Promise.resolve();
        const done = previous
          .then(() => task())
          .then(
            () => undefined,
            () => undefined,
          );
        this.tails.set(key, done);
        void done.then(() => {
          if (this.tails.get(key) === done) this.tails.delete(key);
          this.finish(endpointId);
        });
      },
      cancel: () => {
        once();
        this.finish(endpointId);
      },
    };
  }

  /** Resolves once every accepted request has finished (now, when none is outstanding). */
  whenIdle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private finish(endpointId: string): void {
    const left = this.count(endpointId) - 1;
    if (left > 0) this.outstanding.set(endpointId, left);
    else this.outstanding.delete(endpointId);
    this.running -= 1;
    this.onCount(endpointId, Math.max(left, 0));
    if (this.running === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }
}

export interface LaneTicket {
  /** Runs `task` after every earlier task of `key` has finished. */
  start(key: string, task: () => Promise<void>): void;
  /** Gives the place back (the request was not accepted after all). */
  cancel(): void;
}
