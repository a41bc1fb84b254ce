/**
 * A sleep that `wake()` cuts short, without losing a wake-up that arrives while nobody sleeps
 * (a NOTIFY between two rounds of a relay makes the next sleep return at once).
 */
export class WakeableSleep {
  private pending = false;
  private wakeUp: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  wake(): void {
    this.pending = true;
    this.finish();
  }

  /** Takes the pending wake-up (call before a round of work that covers it). */
  consume(): void {
    this.pending = false;
  }

  /** Resolves after `ms`, or at once if woken meanwhile (or before, since the last `consume`). */
  sleep(ms: number): Promise<void> {
    if (this.pending) return Promise.resolve();
    this.finish();
    return new Promise((resolve) => {
      this.wakeUp = resolve;
      this.timer = setTimeout(() => this.finish(), ms);
    });
  }

  private finish(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const resolve = this.wakeUp;
    this.wakeUp = undefined;
    resolve?.();
  }
}
