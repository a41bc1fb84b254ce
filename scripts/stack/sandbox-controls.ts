/**
 * A client of the gateway sandbox's test-only routes (`/_sandbox/...`, on only with
 * SANDBOX_TEST_CONTROLS=true): the ledger of money movements, fault injection, the virtual clock.
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
  operation?: string;
  latencyMs?: number;
  failBefore?: number;
  failAfter?: number | 'drop';
  outcome?: 'approved' | 'declined' | 'error' | 'filtered' | 'unknown';
  callbacks?: 'drop' | 'duplicate' | 'delay' | 'reorder';
  callbackDelayMs?: number;
  times?: number;
}

export class SandboxControls {
  constructor(private readonly baseUrl: string) {}

  async ledger(clientOrderId?: string): Promise<Ledger> {
    const query = clientOrderId ? `?clientOrderId=${encodeURIComponent(clientOrderId)}` : '';
    return this.call<Ledger>('GET', `/_sandbox/ledger${query}`);
  }

  async addFault(rule: FaultRule): Promise<{ id: string }> {
    return this.call('POST', '/_sandbox/faults', rule);
  }

  async clearFaults(): Promise<void> {
    await this.call('DELETE', '/_sandbox/faults');
  }

  async advanceClock(seconds: number): Promise<void> {
    await this.call('POST', '/_sandbox/clock/advance', { seconds });
  }

  async callbacks(): Promise<{ idle: boolean; attempts: unknown[] }> {
    return this.call('GET', '/_sandbox/callbacks');
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
