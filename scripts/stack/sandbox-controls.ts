/**
 * A client of the gateway sandbox's test-only routes (`/_sandbox/...`, on only with
 * SANDBOX_TEST_CONTROLS=true): the ledger of money movements, fault injection, the virtual clock,
 * the callback log and run-time settings (fault seed, reused client_orderid, callback retries).
 * apps/gateway-sandbox/README.md "Test controls" describes each field.
 */
export type Movement =
  | 'authorized'
  | 'released'
  | 'captured'
  | 'charged'
  | 'refunded'
  | 'voided'
  | 'paid-out'
  | 'transferred';

export interface LedgerEntry {
  readonly seq: number;
  /** When the gateway moved the money (epoch ms of the sandbox's clock). */
  readonly at: number;
  readonly login: string;
  readonly clientOrderId: string;
  readonly orderId: string;
  readonly movement: Movement;
  readonly amountMinor: number;
  readonly currency: string;
}

export interface Ledger {
  readonly entries: LedgerEntry[];
  readonly totals: Partial<Record<Movement, number>>;
}

export interface FaultRule {
  login?: string;
  clientOrderId?: string;
  /** An operation name (SALE, CAPTURE, STATUS, …); unset matches every operation but STATUS. */
  operation?: string;
  /** Endpoint or group id as in the request path, or the endpoint a group resolved to. */
  endpoint?: string;
  /** Chance 0–1 per matching request or callback attempt, drawn from the seed; 1 when unset. */
  probability?: number;
  /** Before processing: the request is slow to arrive. */
  latencyMs?: number;
  /** After processing, before the answer: the order exists, the gateway is slow to answer. */
  latencyAfterMs?: number;
  /**
   * Before processing: a 5xx, a 4xx (a refused request; 401/403 read as an authentication
   * failure), or `drop` (the connection closes unanswered); nothing processed.
   */
  failBefore?: number | 'drop';
  failAfter?: number | 'drop';
  outcome?: 'approved' | 'declined' | 'error' | 'filtered' | 'unknown';
  /** The gateway processes and reports this amount instead of the one asked for. */
  processedAmountMinor?: number;
  /** The operation stays processing this long (virtual clock): a payment left processing. */
  processingDelayMs?: number;
  /** The reply's `amount` as this text (`eur`, `7,000.00`): with operation STATUS, status replies. */
  replyAmount?: string;
  /**
   * Replies naming a transaction type (with operation STATUS, status replies) and the callbacks
   * of matching orders name this text (`authorization`, `hold`); only requests spend `times`.
   */
  replyTransactionType?: string;
  /**
   * `drop` loses each matching delivery attempt (the sandbox retries on its schedule);
   * `no-currency` sends the callbacks without their `currency`.
   */
  callbacks?: 'drop' | 'duplicate' | 'delay' | 'reorder' | 'no-currency';
  callbackDelayMs?: number;
  times?: number;
}

export interface StoredFaultRule extends Omit<FaultRule, 'times'> {
  readonly id: string;
  /** Hits left, when the rule was added with `times`. */
  readonly remaining?: number;
}

export interface CallbackRetry {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface SandboxSettings {
  /** Seed of the probability draws; setting it restarts them (same seed, same faults). */
  faultSeed: number;
  /** `charge-again`: a reused client_orderid creates and charges a second order. */
  reusedClientOrderId: 'refuse' | 'charge-again';
  /** A given maxAttempts overrides the merchant's own limit until reset. */
  callbackRetry: CallbackRetry;
}

export interface CallbackAttempt {
  readonly url: string;
  readonly clientOrderId: string;
  readonly status: string;
  readonly type: string;
  readonly attempt: number;
  /** 0 when the connection failed or the attempt was dropped by a fault. */
  readonly httpStatus: number;
  readonly dropped: boolean;
  readonly at: string;
}

export class SandboxControls {
  constructor(private readonly baseUrl: string) {}

  /** The order's movements as `"<movement> <minor units>"`, in ledger order. */
  async movements(clientOrderId: string): Promise<string[]> {
    const ledger = await this.ledger(clientOrderId);
    return ledger.entries.map((e) => `${e.movement} ${e.amountMinor}`);
  }

  /** The amounts (minor units) of the order's movements of one kind, in ledger order. */
  async amounts(clientOrderId: string, movement: string): Promise<number[]> {
    const ledger = await this.ledger(clientOrderId);
    return ledger.entries.filter((e) => e.movement === movement).map((e) => e.amountMinor);
  }

  async ledger(clientOrderId?: string): Promise<Ledger> {
    const query = clientOrderId ? `?clientOrderId=${encodeURIComponent(clientOrderId)}` : '';
    return this.call<Ledger>('GET', `/_sandbox/ledger${query}`);
  }

  /** Requests the sandbox is working on per endpoint, and the most at once since the reset. */
  async concurrency(): Promise<Record<string, { inFlight: number; peak: number }>> {
    return this.call('GET', '/_sandbox/concurrency');
  }

  async resetConcurrency(): Promise<void> {
    await this.call('DELETE', '/_sandbox/concurrency');
  }

  async addFault(rule: FaultRule): Promise<StoredFaultRule> {
    return this.call('POST', '/_sandbox/faults', rule);
  }

  async faults(): Promise<StoredFaultRule[]> {
    return this.call('GET', '/_sandbox/faults');
  }

  async removeFault(id: string): Promise<void> {
    await this.call('DELETE', `/_sandbox/faults/${encodeURIComponent(id)}`);
  }

  async clearFaults(): Promise<void> {
    await this.call('DELETE', '/_sandbox/faults');
  }

  /** The gateway order ids of a client order id (a payment id, for the stack's payments). */
  async orderIds(clientOrderId: string): Promise<string[]> {
    const orders = await this.call<Array<{ orderId: string }>>(
      'GET',
      `/_sandbox/orders?clientOrderId=${encodeURIComponent(clientOrderId)}`,
    );
    return orders.map((o) => o.orderId);
  }

  /**
   * Plants a reconciliation mismatch: every later status reply about the order's last operation
   * says `status`, with no ledger movement and no callback.
   */
  async overrideStatus(
    orderId: string,
    status: 'approved' | 'declined' | 'error' | 'filtered',
  ): Promise<void> {
    await this.call('POST', `/_sandbox/orders/${encodeURIComponent(orderId)}/override`, { status });
  }

  /**
   * Plants a second charge for a payment: a new order under the same client order id, approved
   * and charged, with no callback. Returns the new order's id.
   */
  async chargeAgain(orderId: string): Promise<string> {
    const created = await this.call<{ orderId: string }>(
      'POST',
      `/_sandbox/orders/${encodeURIComponent(orderId)}/charge-again`,
    );
    return created.orderId;
  }

  async advanceClock(seconds: number): Promise<void> {
    await this.call('POST', '/_sandbox/clock/advance', { seconds });
  }

  /** Callback attempts, and whether none is scheduled, held or in flight (of one order if given). */
  async callbacks(clientOrderId?: string): Promise<{ idle: boolean; attempts: CallbackAttempt[] }> {
    const query = clientOrderId ? `?clientOrderId=${encodeURIComponent(clientOrderId)}` : '';
    return this.call('GET', `/_sandbox/callbacks${query}`);
  }

  async settings(): Promise<SandboxSettings> {
    return this.call('GET', '/_sandbox/settings');
  }

  async changeSettings(
    change: Partial<Omit<SandboxSettings, 'callbackRetry'>> & {
      callbackRetry?: Partial<CallbackRetry>;
    },
  ): Promise<SandboxSettings> {
    return this.call('POST', '/_sandbox/settings', change);
  }

  async reset(): Promise<void> {
    await this.call('POST', '/_sandbox/reset');
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`sandbox ${method} ${path}: HTTP ${response.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }
}
