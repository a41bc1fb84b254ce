import {
  merchantAccount,
  type MerchantAccountKind,
  UNATTRIBUTED_ENDPOINT,
  WORLD_ACCOUNT,
} from './accounts';

/**
 * The posting rules: each outcome event that says money moved, was reserved, released or is held
 * for an unknown outcome becomes one balanced journal entry. Pure: the lines of an event depend on
 * the event and on the saga's earlier events only (folded into `JournalFold`), so replaying a
 * saga's history rebuilds the same lines (the runtime folds the stored history, then posts the
 * decision's new events).
 *
 * Amounts are integer minor units as bigint; a line is signed, debit positive; every entry sums to
 * zero per currency (checked again by the database, migration 1769890000000).
 */

/** What the journal reads of an event (any flow's): its type and the fields rules use. */
export interface JournalEvent {
  readonly type: string;
  readonly version: number;
  readonly occurredAt: string;
  readonly requestId?: string;
  readonly operation?: string;
  readonly amount?: JournalMoney;
  readonly merchant?: { readonly endpointId: string };
  /** `captured`: the rest of the hold let go with the capture. */
  readonly released?: JournalMoney;
  /** `returned`: the return cancelled an uncaptured preauth. */
  readonly holdReleased?: boolean;
  /** `<prefix>settled-by-decision`: what two people decided (`done` at `amount`, or `not-done`). */
  readonly decision?: 'done' | 'not-done';
}

export interface JournalMoney {
  readonly minor: number;
  readonly currency: string;
}

export interface JournalLine {
  readonly account: string;
  readonly currency: string;
  /** Debit positive, credit negative; integer minor units. */
  readonly amount: bigint;
}

/** One balanced entry: the lines of one event. */
export interface JournalEntry {
  readonly eventType: string;
  readonly eventVersion: number;
  readonly occurredAt: string;
  readonly endpointId: string;
  readonly requestId?: string;
  readonly operation?: string;
  readonly lines: readonly JournalLine[];
}

/** What the rules keep of a saga's earlier events. */
export interface JournalFold {
  readonly endpointId?: string;
  /** Each request's operation and amount (from its `*-requested` event). */
  readonly requested: Readonly<Record<string, { operation?: string; amount: JournalMoney }>>;
  /** Requests held as unknown (posted to in-flight-unknown), with the amount held. */
  readonly unknown: Readonly<Record<string, JournalMoney>>;
  /** Open authorization per currency (what `customer-funds:authorized` holds for this saga). */
  readonly authorized: Readonly<Record<string, bigint>>;
}

export const EMPTY_FOLD: JournalFold = { requested: {}, unknown: {}, authorized: {} };

/** Each family's event-type prefix (`operationLifecycle`'s): card payments have none. */
const FAMILY_PREFIXES = ['', 'payout-', 'transfer-'] as const;

const REQUESTED_TYPES = new Set(['operation-requested', 'payout-requested', 'transfer-requested']);
const UNKNOWN_TYPES = new Set(FAMILY_PREFIXES.map((p) => `${p}outcome-unknown`));

/** Operations that move no money: their unknown outcome holds nothing. */
const MOVES_NO_MONEY = new Set(['account-verification', 'payout-check']);

/**
 * A person's decision settling an unknown outcome (a case closed by two people: each money
 * family's `<prefix>settled-by-decision`, naming the decided request). `done` at X: X moves to
 * settled-by-decision, never to an account that says the gateway moved it, so finance tells
 * evidence from decision; the amount held for the request leaves in-flight-unknown, and what of it
 * the decision did not take (held − X) goes back to the world, as an answer lets a hold go (X above
 * the amount held: the rest comes from the world). `not-done`: nothing moved, the amount held goes
 * back to the world ({@link decisionMoves}).
 */
const SETTLED_BY_DECISION_TYPES: ReadonlySet<string> = new Set(
  FAMILY_PREFIXES.map((p) => `${p}settled-by-decision`),
);

/** An event that ends a request's outcome (its answer): an unknown held for it is let go. */
const ANSWER_TYPES = new Set([
  'approved',
  'authorized',
  'account-verified',
  'captured',
  'voided',
  'returned',
  'declined',
  'failed',
  'payout-registered',
  'paid-out',
  'payout-declined',
  'payout-failed',
  'transferred',
  'transfer-declined',
  'transfer-failed',
]);

type Rule = (event: JournalEvent, fold: JournalFold, post: Poster) => void;

interface Poster {
  move(from: string, to: string, money: JournalMoney | undefined): void;
  account(kind: MerchantAccountKind): string;
}

const money = (e: JournalEvent): JournalMoney | undefined => e.amount;

/**
 * The rule of every event type that moves, reserves or releases money. Every type in a flow
 * module's `moneyEvents` must have one (journal-coverage.spec.ts).
 */
export const POSTING_RULES: Readonly<Record<string, Rule>> = {
  /** A sale or rebill charged. */
  approved: (e, _f, p) => p.move(WORLD_ACCOUNT, p.account('captured-receivable'), money(e)),
  /** A preauth: the amount held on the card. */
  authorized: (e, _f, p) => p.move(WORLD_ACCOUNT, p.account('customer-funds:authorized'), money(e)),
  /** A capture settles `amount` of the hold and lets the rest (`released`) go. */
  captured: (e, _f, p) => {
    p.move(p.account('customer-funds:authorized'), p.account('captured-receivable'), money(e));
    p.move(p.account('customer-funds:authorized'), WORLD_ACCOUNT, e.released);
  },
  /** A void releases an open hold, else cancels a charge before settlement. */
  voided: (e, f, p) => {
    const amount = money(e);
    if (amount === undefined) return;
    const held = f.authorized[amount.currency] ?? 0n;
    p.move(
      held >= BigInt(amount.minor)
        ? p.account('customer-funds:authorized')
        : p.account('captured-receivable'),
      WORLD_ACCOUNT,
      amount,
    );
  },
  /** A return refunds captured money, or (holdReleased) cancels an uncaptured preauth. */
  returned: (e, _f, p) =>
    e.holdReleased === true
      ? p.move(p.account('customer-funds:authorized'), WORLD_ACCOUNT, money(e))
      : p.move(WORLD_ACCOUNT, p.account('refunds-payable'), money(e)),
  'paid-out': (e, _f, p) => p.move(WORLD_ACCOUNT, p.account('payouts-sent'), money(e)),
  transferred: (e, _f, p) => p.move(WORLD_ACCOUNT, p.account('transfers-sent'), money(e)),
  /** Held for an unknown outcome: the requested amount, once per request. */
  ...Object.fromEntries(
    [...UNKNOWN_TYPES].map((type): [string, Rule] => [
      type,
      (e, f, p) => {
        const id = e.requestId;
        if (id === undefined || f.unknown[id] !== undefined) return;
        const req = f.requested[id];
        if (req === undefined || MOVES_NO_MONEY.has(req.operation ?? '')) return;
        p.move(WORLD_ACCOUNT, p.account('in-flight-unknown'), req.amount);
      },
    ]),
  ),
  // The move itself is made where an answer lets its unknown go (to settled-by-decision).
  ...Object.fromEntries(
    [...SETTLED_BY_DECISION_TYPES].map((type): [string, Rule] => [type, () => {}]),
  ),
};

/** Every event type the journal posts or that changes what later rules see. */
export const JOURNAL_EVENT_TYPES: ReadonlySet<string> = new Set([
  ...Object.keys(POSTING_RULES),
  ...REQUESTED_TYPES,
  ...ANSWER_TYPES,
]);

/** The entry of one event (undefined when it moves nothing) and the fold after it. */
export function post(
  fold: JournalFold,
  event: JournalEvent,
): { entry?: JournalEntry; fold: JournalFold } {
  const endpointId = fold.endpointId ?? event.merchant?.endpointId;
  const lines: JournalLine[] = [];
  const poster: Poster = {
    account: (kind) => merchantAccount(endpointId ?? UNATTRIBUTED_ENDPOINT, kind),
    move(from, to, m) {
      if (m === undefined || m.minor === 0) return;
      const minor = BigInt(m.minor);
      lines.push({ account: to, currency: m.currency, amount: minor });
      lines.push({ account: from, currency: m.currency, amount: -minor });
    },
  };
  // An answer (or a person's decision) ends the unknown held for its request first.
  const held = event.requestId === undefined ? undefined : fold.unknown[event.requestId];
  const decided = SETTLED_BY_DECISION_TYPES.has(event.type);
  const answers = ANSWER_TYPES.has(event.type) || decided;
  if (held !== undefined && answers) {
    if (decided) decisionMoves(held, event, poster);
    else poster.move(poster.account('in-flight-unknown'), WORLD_ACCOUNT, held);
  }
  POSTING_RULES[event.type]?.(event, fold, poster);
  const next = evolve(fold, event, endpointId, lines);
  if (lines.length === 0) return { fold: next };
  return {
    fold: next,
    entry: {
      eventType: event.type,
      eventVersion: event.version,
      occurredAt: event.occurredAt,
      endpointId: endpointId ?? UNATTRIBUTED_ENDPOINT,
      ...(event.requestId === undefined ? {} : { requestId: event.requestId }),
      ...(operationOf(fold, event) === undefined ? {} : { operation: operationOf(fold, event) }),
      lines,
    },
  };
}

/**
 * The lines of a decision about a request held as unknown (`held`): `done` at X posts X to
 * settled-by-decision and lets the rest of the hold go to the world; `not-done` lets it all go.
 * A `done` naming no amount (written before decisions carried one) settles the amount held.
 */
function decisionMoves(held: JournalMoney, event: JournalEvent, p: Poster): void {
  const inFlight = p.account('in-flight-unknown');
  const decided = p.account('settled-by-decision');
  if (event.decision === 'not-done') {
    p.move(inFlight, WORLD_ACCOUNT, held);
    return;
  }
  const x = event.amount ?? held;
  if (x.currency !== held.currency) {
    p.move(inFlight, WORLD_ACCOUNT, held);
    p.move(WORLD_ACCOUNT, decided, x);
    return;
  }
  const taken = Math.min(held.minor, x.minor);
  p.move(inFlight, decided, { minor: taken, currency: x.currency });
  if (held.minor > taken)
    p.move(inFlight, WORLD_ACCOUNT, { minor: held.minor - taken, currency: x.currency });
  if (x.minor > taken)
    p.move(WORLD_ACCOUNT, decided, { minor: x.minor - taken, currency: x.currency });
}

function operationOf(fold: JournalFold, event: JournalEvent): string | undefined {
  return (
    event.operation ??
    (event.requestId === undefined ? undefined : fold.requested[event.requestId]?.operation)
  );
}

function evolve(
  fold: JournalFold,
  event: JournalEvent,
  endpointId: string | undefined,
  lines: readonly JournalLine[],
): JournalFold {
  const id = event.requestId;
  let { requested, unknown } = fold;
  if (id !== undefined && REQUESTED_TYPES.has(event.type) && event.amount !== undefined) {
    requested = {
      ...requested,
      [id]: {
        amount: event.amount,
        ...(event.operation === undefined ? {} : { operation: event.operation }),
      },
    };
  }
  if (id !== undefined) {
    const inFlight = merchantAccount(endpointId ?? UNATTRIBUTED_ENDPOINT, 'in-flight-unknown');
    const heldNow = lines.find((l) => l.account === inFlight && l.amount > 0n);
    if (UNKNOWN_TYPES.has(event.type) && heldNow !== undefined) {
      unknown = { ...unknown, [id]: { minor: Number(heldNow.amount), currency: heldNow.currency } };
    } else if (
      unknown[id] !== undefined &&
      lines.some((l) => l.account === inFlight && l.amount < 0n)
    ) {
      const { [id]: _gone, ...rest } = unknown;
      unknown = rest;
    }
  }
  const authorizedAccount = merchantAccount(
    endpointId ?? UNATTRIBUTED_ENDPOINT,
    'customer-funds:authorized',
  );
  let authorized = fold.authorized;
  for (const line of lines) {
    if (line.account !== authorizedAccount) continue;
    authorized = {
      ...authorized,
      [line.currency]: (authorized[line.currency] ?? 0n) + line.amount,
    };
  }
  return {
    ...(endpointId === undefined ? {} : { endpointId }),
    requested,
    unknown,
    authorized,
  };
}

/** The fold of a saga's events (its stored history). */
export function foldJournal(
  events: readonly JournalEvent[],
  from: JournalFold = EMPTY_FOLD,
): JournalFold {
  return events.reduce((f, e) => post(f, e).fold, from);
}

/** The entries of `events`, after the saga's earlier events folded into `from`. */
export function postAll(
  events: readonly JournalEvent[],
  from: JournalFold = EMPTY_FOLD,
): { entries: JournalEntry[]; fold: JournalFold } {
  const entries: JournalEntry[] = [];
  let fold = from;
  for (const event of events) {
    const step = post(fold, event);
    if (step.entry !== undefined) entries.push(step.entry);
    fold = step.fold;
  }
  return { entries, fold };
}

/** Sum per currency of an entry's lines: every value is zero for a balanced entry. */
export function entryTotals(entry: JournalEntry): Map<string, bigint> {
  const totals = new Map<string, bigint>();
  for (const line of entry.lines)
    totals.set(line.currency, (totals.get(line.currency) ?? 0n) + line.amount);
  return totals;
}

/** Whether an event type needs the journal (to post it or to fold it). */
export function journalRelevant(type: string): boolean {
  return JOURNAL_EVENT_TYPES.has(type);
}
