/**
 * A sleep that a signal cuts short, without losing a signal that arrives while nobody sleeps
 * (the NOTIFY of a commit between two rounds of the relay wakes the next sleep at once).
 */
export class WakeableSleep {
  private pending = false;
  private wakeUp: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  wake(): void {
    this.pending = true;
    this.finish();
  }

  /** Takes the pending signal (call before a round of work that covers it). */
  consume(): void {
    this.pending = false;
  }

  sleep(ms: number): Promise<void> {
    if (this.pending) return Promise.resolve();
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
