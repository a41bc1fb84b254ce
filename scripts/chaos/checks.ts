import type { PaymentEvent, PayoutEvent, TransferEvent } from '@payments/contracts';
import type { LedgerEntry, Movement } from '../stack/sandbox-controls';

/**
 * The chaos run's verdict, pure: what was sent, what the event stream says and what the sandbox's
 * ledger says really moved, compared saga by saga (card payments, payouts, transfers) and
 * movement by movement, plus the money moved out per day against the daily limit.
 */
export type CommandType =
  | 'sale'
  | 'preauth'
  | 'capture'
  | 'void'
  | 'return'
  | 'payout'
  | 'payout-v4'
  | 'payout-check'
  | 'approve-payout'
  | 'transfer'
  | 'create-card-ref'
  | 'rebill'
  | 'transfer-by-ref'
  | 'payout-form';

export interface SentCommand {
  readonly commandId: string;
  /** The saga's id: the payment's, payout's or transfer's (also its gateway client_orderid). */
  readonly paymentId: string;
  readonly type: CommandType;
  readonly sentAt: number;
  /** A rebill's card reference, as the command named it. */
  readonly cardRefId?: string;
}

/** The events of the sagas a run starts (payout budget events belong to no sent command). */
export type SagaEvent = PaymentEvent | PayoutEvent | TransferEvent;

/** An event as read from payments.events.v1 (at least once: the same ce_id may repeat). */
export interface ObservedEvent {
  readonly event: SagaEvent;
  readonly ceId: string;
}

/** The saga an event belongs to. */
export function sagaIdOf(event: SagaEvent): string {
  if ('paymentId' in event) return event.paymentId;
  if ('transferId' in event) return event.transferId;
  return event.payoutId;
}

export interface UnknownPayment {
  readonly paymentId: string;
  /** Seconds since the pending operation was requested. */
  readonly ageSeconds: number;
  readonly lastEvent: string;
  /** The sandbox's deliberately unknown test card (CVV 217): expected to stay unknown. */
  readonly deliberate: boolean;
  /**
   * The pending operation's unknown outcome was raised for a person (outcome-unknown with
   * `alert`, e.g. no trace at the gateway and no safe repeat): not silent, awaiting a decision.
   */
  readonly alerted: boolean;
  /** Why, when the alert said (`no-trace`, `amount-mismatch`). */
  readonly concern?: string;
}

export interface Problem {
  readonly paymentId: string;
  readonly detail: string;
}

export interface RunChecks {
  readonly commandsSent: number;
  readonly payments: number;
  readonly paymentsFinal: number;
  readonly unknown: UnknownPayment[];
  /** Commands with no event at all carrying their commandId. */
  readonly lost: SentCommand[];
  readonly doubleCharges: Problem[];
  readonly misreported: Problem[];
  readonly versionProblems: Problem[];
  readonly rejected: Problem[];
  /** Per endpoint, currency and UTC day (the budget's): paid-out + transferred above the daily limit. */
  readonly overLimit: Problem[];
}

/** Events that settle one gateway request (the request's final answer), every flow. */
const FINAL_OF_OPERATION = new Set<SagaEvent['type']>([
  'approved',
  'authorized',
  'declined',
  'failed',
  'captured',
  'voided',
  'returned',
  'payout-registered',
  'paid-out',
  'payout-declined',
  'payout-failed',
  'transferred',
  'transfer-declined',
  'transfer-failed',
  'card-ref-created',
  'card-reference-failed',
]);

const REQUESTED = new Set<SagaEvent['type']>([
  'operation-requested',
  'payout-requested',
  'transfer-requested',
  // A card reference moves no money, but a request for one still open leaves its saga unsettled.
  'card-ref-requested',
]);
const UNKNOWN = new Set<SagaEvent['type']>([
  'outcome-unknown',
  'payout-outcome-unknown',
  'transfer-outcome-unknown',
  'card-reference-unknown',
]);
const RESENT = new Set<SagaEvent['type']>([
  'operation-resent',
  'payout-operation-resent',
  'transfer-operation-resent',
]);

/**
 * The daily budget refused the money-out operation after it was requested: its request was never
 * sent, so it is settled (nothing moved) without an answer of its own.
 */
const REFUSED_BEFORE_SENDING = new Set<SagaEvent['type']>(['payout-refused', 'transfer-refused']);

/** A two-step payout registered and awaiting approval has ended only with one of these. */
const PAYOUT_AFTER_REGISTRATION = new Set<SagaEvent['type']>([
  'paid-out',
  'payout-declined',
  'payout-failed',
  'payout-expired',
  'payout-rejected',
]);

/**
 * Ledger movements that take or return money once per intended operation, and the commands that
 * intend one each.
 */
const ONCE_PER_OPERATION: Partial<Record<Movement, readonly CommandType[]>> = {
  charged: ['sale', 'rebill'],
  authorized: ['preauth'],
  captured: ['capture'],
  refunded: ['return'],
  'paid-out': ['payout', 'payout-v4', 'approve-payout', 'payout-form'],
  transferred: ['transfer', 'transfer-by-ref'],
};

/** Money out of the merchant's account: what the daily payout limit bounds. */
const MONEY_OUT: readonly Movement[] = ['paid-out', 'transferred'];

/** Distinct events of one saga in stream order (first occurrence of each ce_id). */
function distinct(observed: readonly ObservedEvent[]): SagaEvent[] {
  const seen = new Set<string>();
  return observed.filter((o) => !seen.has(o.ceId) && seen.add(o.ceId)).map((o) => o.event);
}

/** What the gateway's ledger must hold if every event told the truth (sandbox engine rules). */
export function expectedMovements(events: readonly SagaEvent[]): string[] {
  const out: string[] = [];
  let holdOpen = false;
  for (const e of [...events].sort((a, b) => a.version - b.version)) {
    switch (e.type) {
      case 'approved':
        out.push(`charged ${e.amount.minor}`);
        break;
      case 'authorized':
        out.push(`authorized ${e.amount.minor}`);
        holdOpen = true;
        break;
      case 'captured':
        out.push(`captured ${e.amount.minor}`);
        if (e.released.minor > 0) out.push(`released ${e.released.minor}`);
        holdOpen = false;
        break;
      case 'voided':
        out.push(`${holdOpen ? 'released' : 'voided'} ${e.amount.minor}`);
        holdOpen = false;
        break;
      case 'returned':
        out.push(`${e.holdReleased ? 'released' : 'refunded'} ${e.amount.minor}`);
        holdOpen = false;
        break;
      case 'operation-requested':
      case 'accepted-by-gateway':
      case 'action-required':
      case 'outcome-unknown':
      case 'operation-resent':
      case 'declined':
      case 'failed':
      case 'hold-expired':
      case 'command-rejected':
      case 'card-ref-requested':
      case 'card-ref-created':
      case 'card-info-requested':
      case 'card-info-reported':
      case 'card-reference-unknown':
      case 'card-reference-failed':
      case 'account-verified':
        break;
      case 'paid-out':
        out.push(`paid-out ${e.amount.minor}`);
        break;
      case 'transferred':
        out.push(`transferred ${e.amount.minor}`);
        break;
      case 'payout-requested':
      case 'payout-accepted-by-gateway':
      case 'payout-action-required':
      case 'payout-outcome-unknown':
      case 'payout-operation-resent':
      case 'payout-registered':
      case 'payout-approval-recorded':
      case 'payout-approved':
      case 'payout-approval-refused':
      case 'payout-refused':
      case 'payout-rejected':
      case 'payout-expired':
      case 'payout-declined':
      case 'payout-failed':
      case 'payout-command-rejected':
      case 'transfer-requested':
      case 'transfer-accepted-by-gateway':
      case 'transfer-outcome-unknown':
      case 'transfer-operation-resent':
      case 'transfer-declined':
      case 'transfer-failed':
      case 'transfer-refused':
      case 'transfer-command-rejected':
        break;
      default: {
        const never: never = e;
        throw new Error(`unexpected event ${JSON.stringify(never)}`);
      }
    }
  }
  return out.sort();
}

/** Version 1..n, each once, in order of first appearance; a rejection of version 0 is outside. */
export function versionProblem(observed: readonly ObservedEvent[]): string | undefined {
  const byVersion = new Map<number, Set<string>>();
  const order: number[] = [];
  const seen = new Set<string>();
  for (const o of observed) {
    if (o.event.version === 0 || seen.has(o.ceId)) continue;
    seen.add(o.ceId);
    order.push(o.event.version);
    byVersion.set(o.event.version, (byVersion.get(o.event.version) ?? new Set()).add(o.ceId));
  }
  const duplicated = [...byVersion].filter(([, ids]) => ids.size > 1).map(([v]) => v);
  if (duplicated.length > 0) return `versions under several ce_ids: ${duplicated.join(', ')}`;
  const max = Math.max(0, ...order);
  const missing = Array.from({ length: max }, (_, i) => i + 1).filter((v) => !byVersion.has(v));
  if (missing.length > 0) return `missing versions: ${missing.join(', ')}`;
  const outOfOrder = order.findIndex((v, i) => i > 0 && v < order[i - 1]);
  if (outOfOrder > 0) return `version ${order[outOfOrder]} after ${order[outOfOrder - 1]}`;
  return undefined;
}

/**
 * The daily budget a money-out saga drew on, as the orchestrator defines it (PAYOUT_LIMITS
 * dailyLimitMinor, flows/payout-budget): its endpoint, and the UTC day of the orchestrator's clock
 * when the amount was reserved — a two-step payout's (last) approval, else the operation's first
 * request (a one-step payout, a payout form, a transfer); a resend keeps the first day's
 * reservation. The ledger's own timestamps are the gateway's clock, which is not the one that
 * decides the day, so they are used only for a saga whose events say nothing.
 */
export function budgetOf(events: readonly SagaEvent[]): {
  readonly endpointId?: string;
  readonly day?: string;
} {
  const sorted = [...events].sort((a, b) => a.version - b.version);
  let endpointId: string | undefined;
  for (const e of sorted) {
    if ('merchant' in e && e.merchant !== undefined) {
      endpointId = e.merchant.endpointId;
      break;
    }
  }
  const approvals = sorted.filter((e) => e.type === 'payout-approved');
  const reservedBy =
    approvals.at(-1) ??
    sorted.find((e) => e.type === 'transfer-requested') ??
    sorted.find((e) => e.type === 'payout-requested' && e.operation !== 'payout-check');
  return {
    ...(endpointId === undefined ? {} : { endpointId }),
    ...(reservedBy === undefined ? {} : { day: reservedBy.occurredAt.slice(0, 10) }),
  };
}

/**
 * Money moved out (paid-out + transferred, the ledger's amounts) per endpoint, currency and UTC
 * day as the orchestrator's budget counts them (`budgetOf` the saga each movement belongs to),
 * above `dailyLimitMinor`: two endpoints of one login have a budget each, and an amount belongs
 * to the day it was reserved on, not the day the gateway moved it.
 */
export function overDailyLimit(
  ledger: readonly LedgerEntry[],
  events: readonly ObservedEvent[],
  dailyLimitMinor: number | undefined,
): Problem[] {
  if (dailyLimitMinor === undefined) return [];
  const bySaga = new Map<string, ObservedEvent[]>();
  for (const o of events) {
    const id = sagaIdOf(o.event);
    bySaga.set(id, [...(bySaga.get(id) ?? []), o]);
  }
  const out = new Map<string, number>();
  for (const l of ledger) {
    if (!MONEY_OUT.includes(l.movement)) continue;
    const budget = budgetOf(distinct(bySaga.get(l.clientOrderId) ?? []));
    const endpoint = budget.endpointId ?? `login ${l.login} (endpoint unknown)`;
    const day = budget.day ?? new Date(l.at).toISOString().slice(0, 10);
    const key = `${endpoint} ${l.currency} ${day}`;
    out.set(key, (out.get(key) ?? 0) + l.amountMinor);
  }
  return [...out]
    .filter(([, total]) => total > dailyLimitMinor)
    .map(([key, total]) => ({
      paymentId: key,
      detail: `${total} out (paid-out + transferred) over the daily limit ${dailyLimitMinor}`,
    }));
}

export function checkRun(input: {
  readonly commands: readonly SentCommand[];
  readonly events: readonly ObservedEvent[];
  readonly ledger: readonly LedgerEntry[];
  readonly deliberatelyUnknown: ReadonlySet<string>;
  readonly now: number;
  /** The orchestrator's PAYOUT_LIMITS dailyLimitMinor of the run's endpoint; unset: no limit. */
  readonly dailyLimitMinor?: number;
}): RunChecks {
  const eventsByPayment = new Map<string, ObservedEvent[]>();
  const commandIdsSeen = new Set<string>();
  for (const o of input.events) {
    commandIdsSeen.add(o.event.commandId);
    const id = sagaIdOf(o.event);
    const list = eventsByPayment.get(id) ?? [];
    list.push(o);
    eventsByPayment.set(id, list);
  }
  const ledgerByPayment = new Map<string, LedgerEntry[]>();
  for (const entry of input.ledger) {
    const list = ledgerByPayment.get(entry.clientOrderId) ?? [];
    list.push(entry);
    ledgerByPayment.set(entry.clientOrderId, list);
  }
  const commandsByPayment = new Map<string, SentCommand[]>();
  for (const c of input.commands) {
    const list = commandsByPayment.get(c.paymentId) ?? [];
    list.push(c);
    commandsByPayment.set(c.paymentId, list);
  }

  const unknown: UnknownPayment[] = [];
  const doubleCharges: Problem[] = [];
  const misreported: Problem[] = [];
  const versionProblems: Problem[] = [];
  const rejected: Problem[] = [];
  let paymentsFinal = 0;
  for (const [paymentId, commands] of commandsByPayment) {
    const observed = eventsByPayment.get(paymentId) ?? [];
    const events = distinct(observed);
    const ledger = ledgerByPayment.get(paymentId) ?? [];

    const requested = new Map<string, SagaEvent>();
    const finished = new Set<string>();
    /** Request id → the alert raised for it (cleared when it is sent again). */
    const alerts = new Map<string, string>();
    for (const e of events) {
      if (REQUESTED.has(e.type) && 'requestId' in e) requested.set(e.requestId, e);
      else if (FINAL_OF_OPERATION.has(e.type) && 'requestId' in e) finished.add(e.requestId);
      else if (UNKNOWN.has(e.type) && 'alert' in e && e.alert)
        alerts.set(
          e.requestId,
          ('concern' in e ? e.concern : undefined) ?? 'unknown for the alert window',
        );
      else if (RESENT.has(e.type) && 'requestId' in e) alerts.delete(e.requestId);
      else if (REFUSED_BEFORE_SENDING.has(e.type))
        for (const id of requested.keys()) finished.add(id);
      if (
        e.type === 'command-rejected' ||
        e.type === 'payout-command-rejected' ||
        e.type === 'transfer-command-rejected'
      )
        rejected.push({ paymentId, detail: e.reason });
    }
    const pending = [...requested].filter(([id]) => !finished.has(id));
    // A registered two-step payout still awaiting its approval (or its expiry) is not final.
    const registered = events.findIndex((e) => e.type === 'payout-registered');
    const awaitingApproval =
      registered >= 0 &&
      !events.slice(registered).some((e) => PAYOUT_AFTER_REGISTRATION.has(e.type));
    if (pending.length === 0 && !awaitingApproval && events.length > 0) {
      paymentsFinal += 1;
      const expected = expectedMovements(events);
      const actual = ledger.map((l) => `${l.movement} ${l.amountMinor}`).sort();
      if (expected.join('|') !== actual.join('|')) {
        misreported.push({
          paymentId,
          detail: `events say [${expected.join(', ')}], ledger has [${actual.join(', ')}]; events ${events.map((e) => e.type).join(' → ')}`,
        });
      }
    } else {
      const since = pending[0]?.[1].occurredAt ?? new Date(commands[0].sentAt).toISOString();
      const concern = pending[0] === undefined ? undefined : alerts.get(pending[0][0]);
      unknown.push({
        paymentId,
        ageSeconds: Math.round((input.now - Date.parse(since)) / 1000),
        lastEvent: events.at(-1)?.type ?? 'none',
        deliberate: input.deliberatelyUnknown.has(paymentId),
        alerted: concern !== undefined,
        ...(concern === undefined ? {} : { concern }),
      });
    }

    for (const [movement, types] of Object.entries(ONCE_PER_OPERATION)) {
      const intended = commands.filter((c) => types.includes(c.type)).length;
      const count = ledger.filter((l) => l.movement === movement).length;
      if (count > intended) {
        doubleCharges.push({
          paymentId,
          detail: `${count} × ${movement} for ${intended} ${types.join('/')} command(s)`,
        });
      }
    }
    const orders = new Set(ledger.map((l) => l.orderId));
    if (orders.size > 1) {
      doubleCharges.push({ paymentId, detail: `money moved on ${orders.size} gateway orders` });
    }

    // A rebill charges the card behind the reference its command named, and no other.
    for (const c of commands) {
      if (c.type !== 'rebill' || c.cardRefId === undefined) continue;
      const asked = events.find(
        (e) => e.type === 'operation-requested' && e.commandId === c.commandId,
      );
      const charged = asked?.type === 'operation-requested' ? asked.cardRef?.refId : undefined;
      if (asked !== undefined && charged !== c.cardRefId) {
        misreported.push({
          paymentId,
          detail: `rebill ${c.commandId} named card reference ${c.cardRefId}, the request charges ${charged ?? 'none'}`,
        });
      }
    }

    const problem = versionProblem(observed);
    if (problem) versionProblems.push({ paymentId, detail: problem });
  }
  return {
    commandsSent: input.commands.length,
    payments: commandsByPayment.size,
    paymentsFinal,
    unknown,
    lost: input.commands.filter((c) => !commandIdsSeen.has(c.commandId)),
    doubleCharges,
    misreported,
    versionProblems,
    rejected,
    overLimit: overDailyLimit(input.ledger, input.events, input.dailyLimitMinor),
  };
}
