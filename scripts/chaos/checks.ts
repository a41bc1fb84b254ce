import type { PaymentEvent } from '@payments/contracts';
import type { LedgerEntry, Movement } from '../stack/sandbox-controls';

/**
 * The chaos run's verdict, pure: what was sent, what the event stream says and what the sandbox's
 * ledger says really moved, compared payment by payment and movement by movement.
 */
export type CommandType = 'sale' | 'preauth' | 'capture' | 'void' | 'return';

export interface SentCommand {
  readonly commandId: string;
  readonly paymentId: string;
  readonly type: CommandType;
  readonly sentAt: number;
}

/** An event as read from payments.events.v1 (at least once: the same ce_id may repeat). */
export interface ObservedEvent {
  readonly event: PaymentEvent;
  readonly ceId: string;
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
}

const FINAL_OF_OPERATION = new Set([
  'approved',
  'authorized',
  'declined',
  'failed',
  'captured',
  'voided',
  'returned',
]);

/** Ledger movements that take or return money once per intended operation. */
const ONCE_PER_OPERATION: Partial<Record<Movement, CommandType>> = {
  charged: 'sale',
  authorized: 'preauth',
  captured: 'capture',
  refunded: 'return',
};

/** Distinct events of one payment in stream order (first occurrence of each ce_id). */
function distinct(observed: readonly ObservedEvent[]): PaymentEvent[] {
  const seen = new Set<string>();
  return observed.filter((o) => !seen.has(o.ceId) && seen.add(o.ceId)).map((o) => o.event);
}

/** What the gateway's ledger must hold if every event told the truth (sandbox engine rules). */
export function expectedMovements(events: readonly PaymentEvent[]): string[] {
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

export function checkRun(input: {
  readonly commands: readonly SentCommand[];
  readonly events: readonly ObservedEvent[];
  readonly ledger: readonly LedgerEntry[];
  readonly deliberatelyUnknown: ReadonlySet<string>;
  readonly now: number;
}): RunChecks {
  const eventsByPayment = new Map<string, ObservedEvent[]>();
  const commandIdsSeen = new Set<string>();
  for (const o of input.events) {
    commandIdsSeen.add(o.event.commandId);
    const list = eventsByPayment.get(o.event.paymentId) ?? [];
    list.push(o);
    eventsByPayment.set(o.event.paymentId, list);
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

    const requested = new Map<string, PaymentEvent>();
    const finished = new Set<string>();
    /** Request id → the alert raised for it (cleared when it is sent again). */
    const alerts = new Map<string, string>();
    for (const e of events) {
      if (e.type === 'operation-requested') requested.set(e.requestId, e);
      else if (FINAL_OF_OPERATION.has(e.type) && 'requestId' in e) finished.add(e.requestId);
      else if (e.type === 'outcome-unknown' && e.alert)
        alerts.set(e.requestId, e.concern ?? 'unknown for the alert window');
      else if (e.type === 'operation-resent') alerts.delete(e.requestId);
      if (e.type === 'command-rejected') rejected.push({ paymentId, detail: e.reason });
    }
    const pending = [...requested].filter(([id]) => !finished.has(id));
    if (pending.length === 0 && events.length > 0) {
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

    const intended = (type: CommandType) => commands.filter((c) => c.type === type).length;
    for (const [movement, type] of Object.entries(ONCE_PER_OPERATION)) {
      const count = ledger.filter((l) => l.movement === movement).length;
      if (count > intended(type)) {
        doubleCharges.push({
          paymentId,
          detail: `${count} × ${movement} for ${intended(type)} ${type} command(s)`,
        });
      }
    }
    const orders = new Set(ledger.map((l) => l.orderId));
    if (orders.size > 1) {
      doubleCharges.push({ paymentId, detail: `money moved on ${orders.size} gateway orders` });
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
  };
}
