import { CallbackDelivery, CallbackSink } from '../domain/engine';
import { FaultRegistry } from '../domain/faults';

export interface CallbackSettings {
  /** Attempts per callback unless the merchant overrides it; the gateway makes 30. */
  readonly maxAttempts: number;
  /** Delay before the 2nd attempt; each later one doubles it, capped at maxDelayMs. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** How long a "reorder" fault holds callbacks before sending them newest first. */
  readonly reorderHoldMs: number;
  readonly timeoutMs: number;
}

export interface CallbackAttempt {
  readonly url: string;
  readonly clientOrderId: string;
  readonly status: string;
  readonly attempt: number;
  /** HTTP status, or 0 when the request failed (refused, timed out). */
  readonly httpStatus: number;
  readonly at: string;
}

/** The attempt log keeps the most recent entries only (the sandbox also serves load tests). */
const MAX_LOG = 10_000;

/** Sends one GET; resolves the HTTP status (0 on a network failure). */
export type CallbackSender = (url: string, timeoutMs: number) => Promise<number>;

export const fetchSender: CallbackSender = async (url, timeoutMs) => {
  try {
    const response = await fetch(url, { method: 'GET', signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer().catch(() => undefined);
    return response.status;
  } catch {
    return 0;
  }
};

/**
 * Delivers server callbacks (facts §6): GET server_callback_url with the parameters added to its
 * query (the merchant's own query kept); anything but 200 is retried with exponential backoff up
 * to the attempt limit. Callback faults from the test controls are applied here.
 */
export class CallbackDispatcher implements CallbackSink {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly held = new Map<string, CallbackDelivery[]>();
  private attempts: CallbackAttempt[] = [];
  private inFlight = 0;

  constructor(
    private readonly faults: FaultRegistry,
    private readonly settings: CallbackSettings,
    private readonly send: CallbackSender = fetchSender,
    private readonly onError: (message: string) => void = () => undefined,
  ) {}

  enqueue(delivery: CallbackDelivery): void {
    const fault = this.faults.forCallback(delivery.login, delivery.clientOrderId);
    switch (fault?.callbacks) {
      case undefined:
        this.schedule(delivery, 1, 0);
        return;
      case 'drop':
        return;
      case 'duplicate':
        this.schedule(delivery, 1, 0);
        this.schedule(delivery, 1, fault.callbackDelayMs ?? 0);
        return;
      case 'delay':
        this.schedule(delivery, 1, fault.callbackDelayMs ?? 1000);
        return;
      case 'reorder': {
        const key = `${delivery.login}|${delivery.clientOrderId}`;
        const queue = this.held.get(key);
        if (queue) {
          queue.push(delivery);
          return;
        }
        this.held.set(key, [delivery]);
        this.later(fault.callbackDelayMs ?? this.settings.reorderHoldMs, () => {
          const batch = this.held.get(key) ?? [];
          this.held.delete(key);
          batch.reverse().forEach((d, i) => this.schedule(d, 1, i * 20));
        });
        return;
      }
    }
  }

  /** Attempts made so far (for tests and the demo). */
  log(): readonly CallbackAttempt[] {
    return this.attempts;
  }

  /** Nothing scheduled, nothing held, nothing in flight. */
  idle(): boolean {
    return this.timers.size === 0 && this.held.size === 0 && this.inFlight === 0;
  }

  reset(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.held.clear();
    this.attempts = [];
  }

  stop(): void {
    this.reset();
  }

  delayBefore(attempt: number): number {
    if (attempt <= 1) return 0;
    const exp = Math.min(attempt - 2, 30);
    return Math.min(this.settings.baseDelayMs * 2 ** exp, this.settings.maxDelayMs);
  }

  private schedule(delivery: CallbackDelivery, attempt: number, delayMs: number): void {
    this.later(delayMs, () => {
      void this.attempt(delivery, attempt);
    });
  }

  private later(delayMs: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  private async attempt(delivery: CallbackDelivery, attempt: number): Promise<void> {
    const url = withQuery(delivery.url, delivery.params);
    this.inFlight += 1;
    let status = 0;
    try {
      status = await this.send(url, this.settings.timeoutMs);
    } catch (error) {
      this.onError(`callback sender failed: ${(error as Error).message}`);
    } finally {
      this.inFlight -= 1;
    }
    if (this.attempts.length >= MAX_LOG)
      this.attempts.splice(0, this.attempts.length - MAX_LOG + 1);
    this.attempts.push({
      url: delivery.url,
      clientOrderId: delivery.clientOrderId,
      status: delivery.params.status ?? '',
      attempt,
      httpStatus: status,
      at: new Date().toISOString(),
    });
    const max = delivery.maxAttempts ?? this.settings.maxAttempts;
    if (status !== 200 && attempt < max) {
      this.schedule(delivery, attempt + 1, this.delayBefore(attempt + 1));
    }
  }
}

export function withQuery(url: string, params: Readonly<Record<string, string>>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) u.searchParams.append(k, v);
  return u.toString();
}
