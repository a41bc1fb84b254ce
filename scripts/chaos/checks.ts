import { sagaIdOf as contractsSagaIdOf } from '@payments/contracts';
import type { LedgerEntry } from '../stack/sandbox-controls';
import {
  AWAITS,
  expectedMovements,
  FINAL_OF_OPERATION,
  MAY_MOVE,
  MONEY_OUT,
  ONCE_PER_OPERATION,
  REFUSED_BEFORE_SENDING,
  REJECTED,
  REQUESTED,
  RESENT,
  type SagaEvent,
  UNKNOWN,
} from './flows';

export { expectedMovements, type SagaEvent };

/**
 * The chaos run's verdict, pure: what was sent, what the event stream says and what the sandbox's
 * ledger says really moved, compared saga by saga and movement by movement (final sagas exactly;
 * sagas left unknown, alerted or not, by what they claim and what their operations in flight may
 * have moved), plus the money moved out per day against the daily limit. Every list it uses is
 * built from the flows' chaos companions (`flows/`), one per family of FLOW_FAMILIES.
 */
/** A command type of some companion's `commands` (flows/index.ts `COMMANDS`). */
export type CommandType = string;

export interface SentCommand {
  readonly commandId: string;
  /** The saga's id: the payment's, payout's, transfer's or check's (its gateway client_orderid). */
  readonly paymentId: string;
  readonly type: CommandType;
  readonly sentAt: number;
  /** A rebill's card reference, as the command named it. */
  readonly cardRefId?: string;
}

/** An event as read from payments.events.v1 (at least once: the same ce_id may repeat). */
export interface ObservedEvent {
  readonly event: SagaEvent;
  readonly ceId: string;
}

/** The saga an event belongs to (the contracts' rule: its family's saga id field). */
export function sagaIdOf(event: SagaEvent): string {
  return contractsSagaIdOf(event) ?? '';
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
  /**
   * Sagas not final (unknown, alerted or not) whose events claim money the ledger lacks, or
   * whose ledger holds a movement no event reports and no operation in flight may have made.
   */
  readonly openMismatches: Problem[];
  /** Sagas left unknown with the alert raised (the deliberate ones aside), by the alert's concern. */
  readonly alertedByConcern: Record<string, number>;
  /**
   * Final sagas that were alerted on the way (issue #33: no saga in limbo): settled by the
   * gateway's evidence (a poll, a callback, reconciliation handing its answer to the saga) or by
   * a person's decision (a case closed by two people: `settled-by-decision`).
   */
  readonly alertedThenSettled: { readonly byEvidence: number; readonly byDecision: number };
  readonly versionProblems: Problem[];
  readonly rejected: Problem[];
  /** Per endpoint, currency and UTC day (the budget's): paid-out + transferred above the daily limit. */
  readonly overLimit: Problem[];
}

/** Distinct events of one saga in stream order (first occurrence of each ce_id). */
function distinct(observed: readonly ObservedEvent[]): SagaEvent[] {
  const seen = new Set<string>();
  return observed.filter((o) => !seen.has(o.ceId) && seen.add(o.ceId)).map((o) => o.event);
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

/** `a` minus `b`, as multisets of movement strings. */
function minus(a: readonly string[], b: readonly string[]): string[] {
  const left = [...b];
  return a.filter((x) => {
    const i = left.indexOf(x);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
}

/**
 * A saga not final (unknown, alerted or not) against its ledger: it must not claim money the
 * ledger lacks, and every movement the ledger holds beyond what its events report must be one an
 * operation still in flight (requested, unknown or alerted, not settled) may have made — at most
 * one of each kind per such operation. Undefined when they agree.
 */
export function openSagaProblem(
  events: readonly SagaEvent[],
  pending: readonly SagaEvent[],
  ledger: readonly LedgerEntry[],
): string | undefined {
  const expected = expectedMovements(events);
  const actual = ledger.map((l) => `${l.movement} ${l.amountMinor}`).sort();
  const claimed = minus(expected, actual);
  if (claimed.length > 0)
    return `events claim [${claimed.join(', ')}] the ledger lacks (ledger [${actual.join(', ')}])`;
  const may: string[] = pending.flatMap((e) => {
    const operation = 'operation' in e && typeof e.operation === 'string' ? e.operation : e.type;
    return [...(MAY_MOVE[operation] ?? [])];
  });
  const unexplained: string[] = [];
  for (const extra of minus(actual, expected)) {
    const movement = extra.split(' ')[0];
    const i = may.indexOf(movement);
    if (i < 0) unexplained.push(extra);
    else may.splice(i, 1);
  }
  if (unexplained.length > 0)
    return `ledger holds [${unexplained.join(', ')}] that no event reports and no operation in flight may have made`;
  return undefined;
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
    if ('commandId' in o.event && typeof o.event.commandId === 'string')
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
  const openMismatches: Problem[] = [];
  const versionProblems: Problem[] = [];
  const rejected: Problem[] = [];
  let paymentsFinal = 0;
  const alertedThenSettled = { byEvidence: 0, byDecision: 0 };
  for (const [paymentId, commands] of commandsByPayment) {
    const observed = eventsByPayment.get(paymentId) ?? [];
    const events = distinct(observed);
    const ledger = ledgerByPayment.get(paymentId) ?? [];

    const requested = new Map<string, SagaEvent>();
    const finished = new Set<string>();
    /** Request id → the alert raised for it (cleared when it is sent again). */
    const alerts = new Map<string, string>();
    for (const e of events) {
      const requestId =
        'requestId' in e && typeof e.requestId === 'string' ? e.requestId : undefined;
      if (REQUESTED.has(e.type) && requestId) requested.set(requestId, e);
      else if (FINAL_OF_OPERATION.has(e.type) && requestId) finished.add(requestId);
      else if (UNKNOWN.has(e.type) && requestId && 'alert' in e && e.alert)
        alerts.set(
          requestId,
          ('concern' in e && typeof e.concern === 'string' ? e.concern : undefined) ??
            'unknown for the alert window',
        );
      else if (RESENT.has(e.type) && requestId) alerts.delete(requestId);
      else if (REFUSED_BEFORE_SENDING.has(e.type))
        for (const id of requested.keys()) finished.add(id);
      if (REJECTED.has(e.type))
        rejected.push({ paymentId, detail: 'reason' in e ? String(e.reason) : e.type });
    }
    const pending = [...requested].filter(([id]) => !finished.has(id));
    // A saga past a step that awaits a person (a registered two-step payout) is not final yet.
    const awaiting = AWAITS.some((w) => {
      const at = events.findIndex((e) => e.type === w.after);
      return at >= 0 && !events.slice(at).some((e) => w.endedBy.includes(e.type));
    });
    if (pending.length === 0 && !awaiting && events.length > 0) {
      paymentsFinal += 1;
      const wasAlerted = events.some(
        (e) => e.type.endsWith('outcome-unknown') && (e as { alert?: boolean }).alert === true,
      );
      if (wasAlerted) {
        if (events.some((e) => e.type.endsWith('settled-by-decision')))
          alertedThenSettled.byDecision += 1;
        else alertedThenSettled.byEvidence += 1;
      }
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
      const concern = pending
        .map(([id]) => alerts.get(id))
        .find((c): c is string => c !== undefined);
      unknown.push({
        paymentId,
        ageSeconds: Math.round((input.now - Date.parse(since)) / 1000),
        lastEvent: events.at(-1)?.type ?? 'none',
        deliberate: input.deliberatelyUnknown.has(paymentId),
        alerted: concern !== undefined,
        ...(concern === undefined ? {} : { concern }),
      });
      const problem = openSagaProblem(
        events,
        pending.map(([, e]) => e),
        ledger,
      );
      if (problem !== undefined)
        openMismatches.push({
          paymentId,
          detail: `${concern === undefined ? 'unknown' : `alerted (${concern})`}: ${problem}; events ${events.map((e) => e.type).join(' → ')}`,
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

    // A command naming a card reference (a rebill) charges the card behind it, and no other.
    for (const c of commands) {
      if (c.cardRefId === undefined) continue;
      const asked = events.find(
        (e) => REQUESTED.has(e.type) && 'commandId' in e && e.commandId === c.commandId,
      );
      const charged =
        asked !== undefined && 'cardRef' in asked
          ? (asked.cardRef as { refId?: string } | undefined)?.refId
          : undefined;
      if (asked !== undefined && charged !== c.cardRefId) {
        misreported.push({
          paymentId,
          detail: `${c.type} ${c.commandId} named card reference ${c.cardRefId}, the request charges ${charged ?? 'none'}`,
        });
      }
    }

    const problem = versionProblem(observed);
    if (problem) versionProblems.push({ paymentId, detail: problem });
  }
  const alertedByConcern: Record<string, number> = {};
  for (const u of unknown)
    if (u.alerted && !u.deliberate)
      alertedByConcern[u.concern ?? ''] = (alertedByConcern[u.concern ?? ''] ?? 0) + 1;
  return {
    commandsSent: input.commands.length,
    payments: commandsByPayment.size,
    paymentsFinal,
    unknown,
    alertedByConcern,
    alertedThenSettled,
    lost: input.commands.filter((c) => !commandIdsSeen.has(c.commandId)),
    doubleCharges,
    misreported,
    openMismatches,
    versionProblems,
    rejected,
    overLimit: overDailyLimit(input.ledger, input.events, input.dailyLimitMinor),
  };
}
