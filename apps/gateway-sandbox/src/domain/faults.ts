import { FinalStatus } from './outcomes';

/**
 * Fault injection for tests (test controls only). A rule matches requests and/or callbacks by
 * merchant login, client_orderid and operation name; unset criteria match everything.
 */
export interface FaultRule {
  readonly id: string;
  readonly login?: string;
  readonly clientOrderId?: string;
  readonly operation?: string;
  /** Added latency before the request is handled. */
  readonly latencyMs?: number;
  /** Answer with this 5xx before anything is processed. */
  readonly failBefore?: number;
  /** Process the request (money moves), then answer with this 5xx, or drop the connection. */
  readonly failAfter?: number | 'drop';
  /** Final result to use instead of the CVV table. */
  readonly outcome?: FinalStatus | 'unknown';
  /** Callbacks of matching orders: dropped, sent twice, delayed, or held and sent in reverse. */
  readonly callbacks?: 'drop' | 'duplicate' | 'delay' | 'reorder';
  readonly callbackDelayMs?: number;
  /** How many matches the rule serves before it is spent; unlimited when unset. */
  remaining?: number;
}

export class FaultRegistry {
  private rules: FaultRule[] = [];
  private seq = 0;

  add(rule: Omit<FaultRule, 'id'>): FaultRule {
    this.seq += 1;
    const stored: FaultRule = { ...rule, id: `fault-${this.seq}` };
    this.rules.push(stored);
    return stored;
  }

  list(): readonly FaultRule[] {
    return this.rules;
  }

  remove(id: string): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.id !== id);
    return this.rules.length < before;
  }

  clear(): void {
    this.rules = [];
  }

  /** The first live rule with a request effect that matches; consumes one use. */
  forRequest(
    login: string,
    clientOrderId: string | undefined,
    operation: string,
  ): FaultRule | undefined {
    return this.take(
      (r) =>
        (r.latencyMs !== undefined ||
          r.failBefore !== undefined ||
          r.failAfter !== undefined ||
          r.outcome !== undefined) &&
        matches(r, login, clientOrderId, operation),
    );
  }

  /** The first live rule with a callback effect that matches; consumes one use. */
  forCallback(login: string, clientOrderId: string): FaultRule | undefined {
    return this.take(
      (r) => r.callbacks !== undefined && matches(r, login, clientOrderId, undefined),
    );
  }

  private take(predicate: (r: FaultRule) => boolean): FaultRule | undefined {
    const rule = this.rules.find(
      (r) => (r.remaining === undefined || r.remaining > 0) && predicate(r),
    );
    if (rule && rule.remaining !== undefined) rule.remaining -= 1;
    return rule;
  }
}

function matches(
  r: FaultRule,
  login: string,
  clientOrderId: string | undefined,
  operation: string | undefined,
): boolean {
  return (
    (r.login === undefined || r.login === login) &&
    (r.clientOrderId === undefined || r.clientOrderId === clientOrderId) &&
    (r.operation === undefined || operation === undefined || r.operation === operation)
  );
}
