import { WakeableSleep } from './wakeable-sleep';

/**
 * What a round reports: `busy` when more work may be waiting (the next round starts at once),
 * `idle` when it found less than a full batch (the loop waits `idleMs` or until `wake()`).
 */
export type RoundOutcome = 'busy' | 'idle';

export interface BackgroundLoopOptions {
  /** One round of work. `signal` aborts when `stop()` is called: stop between items. */
  readonly runOnce: (signal: AbortSignal) => Promise<RoundOutcome>;
  /** How long to wait after an idle round when nobody calls `wake()`. */
  readonly idleMs: number;
  /** How long to wait after the `failures`-th failed round in a row (1, 2, …). */
  readonly backoffMs: (failures: number) => number;
  /** Told about each failed round before the back-off wait (log it, count it). */
  readonly onError?: (error: unknown, failures: number, delayMs: number) => void;
}

/**
 * The loop a background worker (outbox relay, timer worker, poller) otherwise writes by hand:
 * start/stop, one round at a time, back-off after failures, an idle wait that `wake()` cuts
 * short (a wake-up during a round is kept, so the next wait returns at once), and a `stop()` that
 * interrupts the wait, aborts the round's signal and resolves once the current round has ended.
 */
export class BackgroundLoop {
  private readonly sleeper = new WakeableSleep();
  private running: Promise<void> | undefined;
  private abort: AbortController | undefined;
  private failures = 0;

  constructor(private readonly options: BackgroundLoopOptions) {}

  /**
   * A loop that runs `round` once every `everyMs` (a tick between rounds whatever they found),
   * waiting twice as long after each failed round in a row, up to `maxBackoffMs`.
   */
  static ticking(options: {
    readonly everyMs: number;
    readonly maxBackoffMs: number;
    readonly round: (signal: AbortSignal) => Promise<void>;
    readonly onError?: BackgroundLoopOptions['onError'];
  }): BackgroundLoop {
    const { everyMs, maxBackoffMs, round, onError } = options;
    return new BackgroundLoop({
      runOnce: async (signal) => {
        await round(signal);
        return 'idle';
      },
      idleMs: everyMs,
      backoffMs: (failures) => Math.min(everyMs * 2 ** failures, maxBackoffMs),
      ...(onError === undefined ? {} : { onError }),
    });
  }

  get isRunning(): boolean {
    return this.running !== undefined;
  }

  /** Failed rounds in a row (0 after a round that succeeded). */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** Starts the loop; a second call while it runs does nothing. */
  start(): void {
    if (this.running) return;
    const abort = new AbortController();
    this.abort = abort;
    this.failures = 0;
    this.running = this.loop(abort.signal);
  }

  /** Runs the next round now (or as soon as the current one ends). */
  wake(): void {
    this.sleeper.wake();
  }

  /** Stops after the current round; resolves once the loop has ended. Safe to call twice. */
  async stop(): Promise<void> {
    this.abort?.abort();
    this.sleeper.wake();
    await this.running;
    this.running = undefined;
    this.abort = undefined;
  }

  private async loop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let outcome: RoundOutcome;
      try {
        this.sleeper.consume();
        outcome = await this.options.runOnce(signal);
        this.failures = 0;
      } catch (error) {
        this.failures += 1;
        const delay = this.options.backoffMs(this.failures);
        this.options.onError?.(error, this.failures, delay);
        if (!signal.aborted) await this.sleeper.sleep(delay);
        continue;
      }
      if (outcome === 'idle' && !signal.aborted) await this.sleeper.sleep(this.options.idleMs);
    }
  }
}
