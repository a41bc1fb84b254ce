import { createHash } from 'node:crypto';
import { FinalStatus } from './outcomes';

/** The operation whose faults are separate from every other operation's (README "Decisions"). */
export const STATUS_OPERATION = 'STATUS';

/**
 * Fault injection for tests (test controls only). A rule matches requests and/or callbacks by
 * merchant login, client_orderid, operation name and endpoint; unset criteria match everything,
 * except that a rule without `operation` never matches a STATUS query (status faults are named
 * explicitly, so an order's faults do not also blind the query that would resolve them).
 */
export interface FaultRule {
  readonly id: string;
  readonly login?: string;
  readonly clientOrderId?: string;
  readonly operation?: string;
  /** The endpoint or endpoint-group id as in the request path, or the resolved endpoint id. */
  readonly endpoint?: string;
  /**
   * Chance (0–1) that a matching request or callback attempt is hit; always when unset. Drawn
   * from the registry's seed (see `draw`), so the same seed gives the same faults.
   */
  readonly probability?: number;
  /** Added latency before the request is handled (the request is slow to arrive). */
  readonly latencyMs?: number;
  /**
   * Added latency after the request was handled, before the answer (the gateway is slow to
   * answer): an order it creates exists, and status queries show it, while the caller waits.
   */
  readonly latencyAfterMs?: number;
  /**
   * Answer with this status before anything is processed (a 5xx: the gateway failed; a 4xx: the
   * request is refused, e.g. 401/403 as an authentication failure), or drop the connection.
   */
  readonly failBefore?: number | 'drop';
  /** Process the request (money moves), then answer with this 5xx, or drop the connection. */
  readonly failAfter?: number | 'drop';
  /** Final result to use instead of the CVV table. */
  readonly outcome?: FinalStatus | 'unknown';
  /**
   * The amount the gateway processes and reports instead of the one asked for (a partial
   * approval): ledger, status replies and callbacks show it.
   */
  readonly processedAmountMinor?: number;
  /**
   * The reply's `amount` says this text instead of the amount (money moves as ever): an amount a
   * client cannot read (`eur`, `7,000.00`, `70.005`). With `operation: "STATUS"`, the status
   * replies about matching orders.
   */
  readonly replyAmount?: string;
  /**
   * Replies naming a transaction type (`transaction-type`: status replies, so with
   * `operation: "STATUS"`) and the callbacks of matching orders (`type`) name this text instead
   * (`authorization`, `hold`: a type a client's table does not know); money moves as ever. Only
   * requests spend the rule's uses: its callbacks follow while it is live.
   */
  readonly replyTransactionType?: string;
  /**
   * The operation stays `processing` this long (virtual clock) instead of the endpoint's delay:
   * a payment the gateway leaves processing (a slow acquirer), status queries and all.
   */
  readonly processingDelayMs?: number;
  /**
   * Callbacks of matching orders: each delivery attempt dropped (and retried on the schedule),
   * sent twice, delayed, held and sent in reverse, or sent without its `currency` field
   * (`no-currency`: the amount then has no exponent).
   */
  readonly callbacks?: CallbackFault;
  readonly callbackDelayMs?: number;
  /** How many hits the rule serves before it is spent; unlimited when unset. */
  remaining?: number;
}

export type CallbackFault = 'drop' | 'duplicate' | 'delay' | 'reorder' | 'no-currency';

/** What a request carries for rule matching. */
export interface RequestKey {
  readonly login: string;
  readonly clientOrderId: string | undefined;
  readonly operation: string;
  /** The id in the path and the endpoint it resolved to (equal unless a group was called). */
  readonly endpointRef: string;
  readonly endpointId: string;
}

/** What a callback attempt carries for rule matching. */
export interface CallbackKey {
  readonly login: string;
  readonly clientOrderId: string;
  readonly endpointId: string;
}

/**
 * A number in [0, 1) determined by the seed and the key alone (counter-based: SHA-256 of both).
 * Keys name the rule, the order, the operation and how many times that rule has been drawn for
 * it, so a chaos run with the same seed hits the same orders whatever order requests of
 * different payments arrive in.
 */
export function draw(seed: number, key: string): number {
  return createHash('sha256').update(`${seed}\u0000${key}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** Per-(rule, order, operation) draw counters kept at most; then they restart (README "Traps"). */
const MAX_COUNTERS = 200_000;

export class FaultRegistry {
  private rules: FaultRule[] = [];
  private seq = 0;
  private seedValue = 0;
  private readonly counters = new Map<string, number>();

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

  /** Removes every rule and restarts rule ids and draws, so a replayed setup draws the same. */
  clear(): void {
    this.rules = [];
    this.seq = 0;
    this.counters.clear();
  }

  get seed(): number {
    return this.seedValue;
  }

  /** Sets the seed of probability draws and restarts them. */
  reseed(seed: number): void {
    this.seedValue = seed;
    this.counters.clear();
  }

  /** The first live rule with a request effect that matches and hits; consumes one use. */
  forRequest(request: RequestKey): FaultRule | undefined {
    return this.take(
      (r) =>
        (r.latencyMs !== undefined ||
          r.latencyAfterMs !== undefined ||
          r.failBefore !== undefined ||
          r.failAfter !== undefined ||
          r.outcome !== undefined ||
          r.processedAmountMinor !== undefined ||
          r.replyAmount !== undefined ||
          r.replyTransactionType !== undefined ||
          r.processingDelayMs !== undefined) &&
        matchesRequest(r, request),
      `${request.login}|${request.clientOrderId ?? ''}|${request.operation}`,
    );
  }

  /**
   * The first live rule with one of these callback effects that matches and hits; consumes one
   * use. `drop` is asked per delivery attempt, the others once per callback.
   */
  forCallback(
    callback: CallbackKey,
    effects: readonly CallbackFault[],
    attempt: number,
  ): FaultRule | undefined {
    return this.take(
      (r) =>
        r.callbacks !== undefined && effects.includes(r.callbacks) && matchesCallback(r, callback),
      `callback|${callback.login}|${callback.clientOrderId}|${attempt}`,
    );
  }

  /**
   * The transaction type a live rule makes a callback of this order name (`replyTransactionType`),
   * drawn like any callback fault; spends no use.
   */
  callbackTransactionType(callback: CallbackKey): string | undefined {
    const rule = this.rules.find(
      (r) =>
        r.replyTransactionType !== undefined &&
        (r.remaining === undefined || r.remaining > 0) &&
        matchesCallback(r, callback) &&
        this.hits(r, `callback-type|${callback.login}|${callback.clientOrderId}`),
    );
    return rule?.replyTransactionType;
  }

  private take(predicate: (r: FaultRule) => boolean, key: string): FaultRule | undefined {
    const rule = this.rules.find(
      (r) => (r.remaining === undefined || r.remaining > 0) && predicate(r) && this.hits(r, key),
    );
    if (rule && rule.remaining !== undefined) rule.remaining -= 1;
    return rule;
  }

  private hits(rule: FaultRule, key: string): boolean {
    if (rule.probability === undefined) return true;
    const counterKey = `${rule.id}|${key}`;
    const n = this.counters.get(counterKey) ?? 0;
    if (this.counters.size >= MAX_COUNTERS) this.counters.clear();
    this.counters.set(counterKey, n + 1);
    return draw(this.seedValue, `${counterKey}|${n}`) < rule.probability;
  }
}

function matchesRequest(r: FaultRule, q: RequestKey): boolean {
  return (
    (r.login === undefined || r.login === q.login) &&
    (r.clientOrderId === undefined || r.clientOrderId === q.clientOrderId) &&
    (r.operation === undefined ? q.operation !== STATUS_OPERATION : r.operation === q.operation) &&
    (r.endpoint === undefined || r.endpoint === q.endpointRef || r.endpoint === q.endpointId)
  );
}

function matchesCallback(r: FaultRule, c: CallbackKey): boolean {
  return (
    (r.login === undefined || r.login === c.login) &&
    (r.clientOrderId === undefined || r.clientOrderId === c.clientOrderId) &&
    (r.endpoint === undefined || r.endpoint === c.endpointId)
  );
}
