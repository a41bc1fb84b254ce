import { startSpan } from '@payments/observability';
import { CallbackDelivery, CallbackSink } from '../domain/engine';
import { CallbackKey, FaultRegistry } from '../domain/faults';

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

/** The part of the settings the test controls can change at run time. */
export type CallbackRetrySettings = Pick<
  CallbackSettings,
  'maxAttempts' | 'baseDelayMs' | 'maxDelayMs'
>;

export interface CallbackAttempt {
  readonly url: string;
  readonly clientOrderId: string;
  readonly status: string;
  /** The operation the callback is about (`type` parameter). */
  readonly type: string;
  readonly attempt: number;
  /** HTTP status, or 0 when the request failed (refused, timed out) or was dropped. */
  readonly httpStatus: number;
  /** Lost to a `drop` fault: never sent, retried like any failed attempt. */
  readonly dropped: boolean;
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
 * query (the merchant's own query kept); anything but 200 — another status, a refused or timed
 * out connection, an attempt dropped by a fault — is retried with exponential backoff up to the
 * attempt limit. Callback faults from the test controls are applied here: `drop` to every
 * attempt, the others once per callback.
 */
export class CallbackDispatcher implements CallbackSink {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly held = new Map<string, CallbackDelivery[]>();
  /** Scheduled, held or in-flight deliveries per client_orderid (for `idle(clientOrderId)`). */
  private readonly outstanding = new Map<string, number>();
  private attempts: CallbackAttempt[] = [];
  private inFlight = 0;
  private retry: CallbackRetrySettings;
  /** Set by the test controls: wins over the merchant's own attempt limit. */
  private attemptsOverride: number | undefined;

  constructor(
    private readonly faults: FaultRegistry,
    private readonly settings: CallbackSettings,
    private readonly send: CallbackSender = fetchSender,
    private readonly onError: (message: string) => void = () => undefined,
  ) {
    this.retry = pickRetry(settings);
  }

  /** The retry schedule in force (configuration, or what the test controls set). */
  retrySettings(): CallbackRetrySettings {
    return { ...this.retry };
  }

  /** Changes the retry schedule until `reset`; a given attempt limit overrides the merchant's. */
  configureRetry(change: Partial<CallbackRetrySettings>): void {
    this.retry = { ...this.retry, ...change };
    if (change.maxAttempts !== undefined) this.attemptsOverride = change.maxAttempts;
  }

  enqueue(given: CallbackDelivery): void {
    // A `replyTransactionType` rule: the callback names that type (the control does not cover it).
    const type = this.faults.callbackTransactionType(keyOf(given));
    const delivery = type === undefined ? given : { ...given, params: { ...given.params, type } };
    const fault = this.faults.forCallback(
      keyOf(delivery),
      ['duplicate', 'delay', 'reorder', 'no-currency'],
      1,
    );
    const effect = fault?.callbacks;
    switch (effect) {
      case undefined:
      case 'drop':
        this.schedule(delivery, 1, 0);
        return;
      case 'no-currency': {
        // The control covers status, orderid and merchant_order only: still genuine without it.
        const { currency: _currency, ...params } = delivery.params;
        this.schedule({ ...delivery, params }, 1, 0);
        return;
      }
      case 'duplicate':
        this.schedule(delivery, 1, 0);
        this.schedule(delivery, 1, fault?.callbackDelayMs ?? 0);
        return;
      case 'delay':
        this.schedule(delivery, 1, fault?.callbackDelayMs ?? 1000);
        return;
      case 'reorder': {
        const key = `${delivery.login}|${delivery.clientOrderId}`;
        this.track(delivery.clientOrderId, 1);
        const queue = this.held.get(key);
        if (queue) {
          queue.push(delivery);
          return;
        }
        this.held.set(key, [delivery]);
        this.later(fault?.callbackDelayMs ?? this.settings.reorderHoldMs, () => {
          const batch = this.held.get(key) ?? [];
          this.held.delete(key);
          batch.reverse().forEach((d, i) => {
            this.schedule(d, 1, i * 20);
            this.track(d.clientOrderId, -1);
          });
        });
        return;
      }
      default: {
        const unexpected: never = effect;
        throw new Error(`unknown callback fault ${String(unexpected)}`);
      }
    }
  }

  /** Attempts made so far (for tests and the demo), optionally of one client_orderid. */
  log(clientOrderId?: string): readonly CallbackAttempt[] {
    return clientOrderId === undefined
      ? this.attempts
      : this.attempts.filter((a) => a.clientOrderId === clientOrderId);
  }

  /** Nothing scheduled, nothing held, nothing in flight (for one client_orderid, when given). */
  idle(clientOrderId?: string): boolean {
    if (clientOrderId !== undefined) return !this.outstanding.has(clientOrderId);
    return this.timers.size === 0 && this.held.size === 0 && this.inFlight === 0;
  }

  reset(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.held.clear();
    this.outstanding.clear();
    this.attempts = [];
    this.retry = pickRetry(this.settings);
    this.attemptsOverride = undefined;
  }

  stop(): void {
    this.reset();
  }

  delayBefore(attempt: number): number {
    if (attempt <= 1) return 0;
    const exp = Math.min(attempt - 2, 30);
    return Math.min(this.retry.baseDelayMs * 2 ** exp, this.retry.maxDelayMs);
  }

  private schedule(delivery: CallbackDelivery, attempt: number, delayMs: number): void {
    this.track(delivery.clientOrderId, 1);
    this.later(delayMs, () => {
      void this.attempt(delivery, attempt).finally(() => this.track(delivery.clientOrderId, -1));
    });
  }

  private track(clientOrderId: string, change: 1 | -1): void {
    const n = (this.outstanding.get(clientOrderId) ?? 0) + change;
    if (n > 0) this.outstanding.set(clientOrderId, n);
    else this.outstanding.delete(clientOrderId);
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
    const dropped = this.faults.forCallback(keyOf(delivery), ['drop'], attempt) !== undefined;
    this.inFlight += 1;
    let status = 0;
    // The attempt continues the trace of the request that started the operation (the HTTP
    // instrumentation sends it on as the callback's traceparent).
    const span = startSpan(`callback ${delivery.params.type ?? ''}`.trim(), {
      ...(delivery.traceparent === undefined ? {} : { parent: delivery.traceparent }),
      attributes: { 'payments.callback.attempt': attempt, 'payments.callback.dropped': dropped },
    });
    try {
      if (!dropped) status = await span.run(() => this.send(url, this.settings.timeoutMs));
    } catch (error) {
      this.onError(`callback sender failed: ${(error as Error).message}`);
    } finally {
      this.inFlight -= 1;
      span.setAttributes({ 'http.response.status_code': status });
      span.end();
    }
    if (this.attempts.length >= MAX_LOG)
      this.attempts.splice(0, this.attempts.length - MAX_LOG + 1);
    this.attempts.push({
      url: delivery.url,
      clientOrderId: delivery.clientOrderId,
      status: delivery.params.status ?? '',
      type: delivery.params.type ?? '',
      attempt,
      httpStatus: status,
      dropped,
      at: new Date().toISOString(),
    });
    const max = this.attemptsOverride ?? delivery.maxAttempts ?? this.retry.maxAttempts;
    if (status !== 200 && attempt < max) {
      this.schedule(delivery, attempt + 1, this.delayBefore(attempt + 1));
    }
  }
}

function pickRetry(settings: CallbackSettings): CallbackRetrySettings {
  const { maxAttempts, baseDelayMs, maxDelayMs } = settings;
  return { maxAttempts, baseDelayMs, maxDelayMs };
}

function keyOf(delivery: CallbackDelivery): CallbackKey {
  return {
    login: delivery.login,
    clientOrderId: delivery.clientOrderId,
    endpointId: delivery.endpointId,
  };
}

export function withQuery(url: string, params: Readonly<Record<string, string>>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) u.searchParams.append(k, v);
  return u.toString();
}
