/**
 * Reconciliation's rules, pure: what a saga reported (its expectations, one per settled money
 * operation), and what a gateway status reply about the same request says of it (the verdict).
 * The service stores the expectations when the run starts, sends one status query per check and
 * applies `verdict` to the answer; a mismatch becomes a `reconciliation-mismatch` event.
 *
 * A saga's operations come from its event history ({@link operationsOf}): each request's
 * operation, the gateway's serial number of it (`accepted-by-gateway`) and its reported outcome
 * (success, decline or failure event). The state keeps only the serials of settled requests,
 * not which operation or outcome each belongs to, and forgets declined follow-ups altogether.
 * An operation whose serial is known is asked about `by-request-sn`, so the gateway answers
 * about that very request; without serials the saga falls back to the check of its latest
 * operation against the order's latest request ({@link sagaChecks}).
 *
 * One principle decides every case: money moved at the gateway when its status reply says the
 * operation we care about was approved. A declined or failed operation moves nothing, so a later
 * declined operation we did not record (a refused return, say) is no mismatch; an approved one we
 * did not record is (`operation-differs`).
 */
import type { GatewayStatusReport, MismatchKind, Money } from '@payments/contracts';
import { isFinalGatewayStatus, MONEY_MOVING_OPERATIONS } from '@payments/contracts';

/** What the saga reported about its order, as stored with the check. */
export interface Expectation {
  /** The saga's status when the run started. */
  readonly status: string;
  /**
   * The operation whose outcome the saga reports: the request named by `serial`, or (without a
   * serial) its last money operation.
   */
  readonly operation: string;
  /**
   * `request`: this very request, asked `by-request-sn` (`serial`); `latest-operation`: the
   * saga's last operation against the order's latest request (no serial known; an answer about
   * an earlier request of the same type cannot be told apart).
   */
  readonly basis?: CheckBasis;
  /** Our request id of the operation (a request check). */
  readonly requestId?: string;
  /** The gateway's serial number of the request (a request check). */
  readonly serial?: string;
  /** approved: we reported it went through; not-approved: that it did not; unknown: we do not know. */
  readonly outcome: 'approved' | 'not-approved' | 'unknown';
  /** Operations the gateway may report approved last without a mismatch (a payout's check). */
  readonly benign?: readonly string[];
  /** The amount the gateway's reply must show (order-creating operations only). */
  readonly amount?: Money;
  readonly clientOrderId: string;
  readonly gatewayOrderId?: string;
  readonly unknownSince?: string;
  /** A lookup by client order id: the subject of the check that asked for it. */
  readonly lookupFor?: string;
}

export type CheckBasis = 'request' | 'latest-operation';

/** Why a saga is left out of a run (never sent). */
export type NotCheckable = 'in-flight' | 'never-sent' | 'unknown-under-an-hour';

export type ExpectationOrSkip =
  | { readonly kind: 'check'; readonly expectation: Expectation }
  | { readonly kind: 'skip'; readonly reason: NotCheckable };

/** Left out of the run, for this reason. */
export const skip = (reason: NotCheckable): ExpectationOrSkip => ({ kind: 'skip', reason });
/** Checked against the gateway's answer. */
export const check = (expectation: Expectation): ExpectationOrSkip => ({
  kind: 'check',
  expectation,
});

/**
 * When a check runs and how long an unknown outcome may last before it is a finding (the
 * orchestrator's UNKNOWN_ALERT_SECONDS, an hour by default): younger ones are the pollers' business.
 */
export interface CheckTime {
  readonly now: Date;
  readonly unknownAlertMs: number;
}

function unknownFor(since: string | undefined, at: CheckTime): ExpectationOrSkip | undefined {
  if (since === undefined) return undefined;
  return at.now.getTime() - Date.parse(since) >= at.unknownAlertMs
    ? undefined
    : skip('unknown-under-an-hour');
}

/**
 * A saga with an operation in flight: left to its pollers, unless its outcome has been unknown
 * for longer than the alert age — then that is the finding, and the check names the request the
 * saga waits for (and its serial, when a reply named it): a final answer about it is handed to
 * the saga ({@link isEvidence}).
 */
export function inFlightCheck(
  inFlight: {
    readonly stage: string;
    readonly operation: string;
    readonly unknownSince?: string;
    readonly requestId?: string;
    readonly serial?: string;
  },
  reported: Pick<Expectation, 'status' | 'clientOrderId' | 'gatewayOrderId' | 'amount'>,
  at: CheckTime,
): ExpectationOrSkip {
  if (inFlight.stage !== 'outcome-unknown') return skip('in-flight');
  const young = unknownFor(inFlight.unknownSince, at);
  if (young !== undefined) return young;
  return check({
    ...reported,
    operation: inFlight.operation,
    outcome: 'unknown',
    ...(inFlight.requestId === undefined ? {} : { requestId: inFlight.requestId }),
    ...(inFlight.serial === undefined ? {} : { serial: inFlight.serial }),
    ...(inFlight.unknownSince === undefined ? {} : { unknownSince: inFlight.unknownSince }),
  });
}

/** A history event as reconciliation reads it: the fields it needs, whichever flow wrote it. */
export interface HistoryEvent {
  readonly type: string;
  readonly requestId?: string;
  readonly operation?: string;
  readonly amount?: Money;
  readonly serialNumber?: string;
  readonly reason?: string;
  readonly gatewayOrderId?: string;
  readonly clientOrderId?: string;
  /** A request whose transaction the gateway decides (a universal payment form: sale or preauth). */
  readonly transactionByGateway?: boolean;
  /** ISO instant the event was written. */
  readonly occurredAt?: string;
}

/** How a flow's history names what happened to each of its gateway requests. */
export interface OperationEvents {
  /** Names the operation, its request id and the amount asked for. */
  readonly requested: string;
  /** Carries the gateway's serial number of the request once a reply named it. */
  readonly accepted: string;
  /** The gateway approved the request (money moved, a hold was placed or released). */
  readonly succeeded: readonly string[];
  readonly declined: readonly string[];
  /** Ended without success; `reason` says whether the gateway ever took the request. */
  readonly failed: readonly string[];
  /**
   * Operations that open the order: a status reply's amount is the order's initial amount, so
   * only these are compared on amount.
   */
  readonly opensOrder: (operation: string) => boolean;
  /**
   * For a request whose transaction the gateway decides (`transactionByGateway`: the universal
   * payment form, a sale or a preauth as the endpoint is set up): the operation each success event
   * says the gateway made of it (`authorized` → preauth). The saga names the operation by the
   * gateway's answer (`transactionsByGateway`, domain/gateway-operation/operation-report.ts `namedBy`), and so does
   * reconciliation: a form that became a hold is checked as the preauth it is. A decline or failure
   * names its operation in the event itself. Undefined: the operation is always what was asked.
   */
  readonly succeededAs?: Readonly<Record<string, string>>;
}

/** One settled operation of a saga, as its history reports it. */
export interface SettledOperation {
  /** Names its check among the saga's (our request id, or a gateway order of its own). */
  readonly key: string;
  readonly operation: string;
  /**
   * `unknown`: the saga waits for the gateway's answer about it (a registered schedule's charge
   * expected and not seen): its check hands a final answer to the saga (`handed-to-saga`).
   */
  readonly outcome: 'approved' | 'not-approved' | 'unknown';
  readonly requestId?: string;
  readonly serial?: string;
  /** The amount the gateway's status reply must show (operations that open an order only). */
  readonly amount?: Money;
  /**
   * False when it failed before the gateway took it (not sent, or the request refused): no
   * money can have moved and the gateway holds no request to ask about.
   */
  readonly reachedGateway: boolean;
  /**
   * An order of its own (a charge a registered schedule's gateway made), not the saga's; without
   * its gateway order id (a charge expected, not seen) it is asked for by its client order id.
   */
  readonly order?: { readonly clientOrderId: string; readonly gatewayOrderId?: string };
  /** When the saga recorded its outcome (ISO): the run whose window holds it checks it. */
  readonly settledAt?: string;
}

/** Failure reasons of a request the gateway never took. */
const NEVER_TAKEN: ReadonlySet<string> = new Set(['not-sent', 'rejected']);

/** The settled operations of a saga, in the order they were requested, from its history. */
export function operationsOf(
  events: readonly HistoryEvent[],
  names: OperationEvents,
): SettledOperation[] {
  const requests = new Map<
    string,
    {
      operation: string;
      amount?: Money;
      serial?: string;
      outcome?: SettledOperation['outcome'];
      settledAt?: string;
      byGateway?: boolean;
    }
  >();
  const taken = new Set<string>();
  for (const event of events) {
    const id = event.requestId;
    if (id === undefined) continue;
    if (event.type === names.requested && event.operation !== undefined) {
      if (!requests.has(id))
        requests.set(id, {
          operation: event.operation,
          ...(event.amount === undefined ? {} : { amount: event.amount }),
          ...(event.transactionByGateway === true ? { byGateway: true } : {}),
        });
      continue;
    }
    const request = requests.get(id);
    if (request === undefined) continue;
    if (event.type === names.accepted) {
      if (event.serialNumber !== undefined) request.serial = event.serialNumber;
      continue;
    }
    if (names.succeeded.includes(event.type)) {
      request.outcome = 'approved';
      taken.add(id);
    } else if (names.declined.includes(event.type)) {
      request.outcome = 'not-approved';
      taken.add(id);
    } else if (names.failed.includes(event.type)) {
      request.outcome = 'not-approved';
      if (!NEVER_TAKEN.has(event.reason ?? '')) taken.add(id);
    } else {
      continue;
    }
    // The gateway decided the transaction: the outcome names what it made of the request.
    if (request.byGateway === true) {
      const named = names.succeededAs?.[event.type] ?? event.operation;
      if (named !== undefined) request.operation = named;
    }
    if (event.occurredAt !== undefined) request.settledAt = event.occurredAt;
  }
  return [...requests].flatMap(([requestId, r]) => {
    if (r.outcome === undefined) return [];
    const opens = names.opensOrder(r.operation) && r.amount !== undefined && r.amount.minor > 0;
    return [
      {
        key: requestId,
        requestId,
        operation: r.operation,
        outcome: r.outcome,
        ...(r.serial === undefined ? {} : { serial: r.serial }),
        ...(opens && r.amount !== undefined ? { amount: r.amount } : {}),
        reachedGateway: taken.has(requestId) || r.serial !== undefined,
        ...(r.settledAt === undefined ? {} : { settledAt: r.settledAt }),
      },
    ];
  });
}

/**
 * The charges a registered schedule's gateway made, each on an order of its own (one request:
 * the charge), as the schedule's history confirmed them by a status reply.
 */
export function gatewayChargesOf(events: readonly HistoryEvent[]): SettledOperation[] {
  return events.flatMap((event): SettledOperation[] => {
    const charged = event.type === 'gateway-cycle-charged';
    if (!charged && event.type !== 'gateway-cycle-declined') return [];
    if (event.gatewayOrderId === undefined || event.clientOrderId === undefined) return [];
    return [
      {
        key: event.gatewayOrderId,
        operation: 'sale',
        outcome: charged ? 'approved' : 'not-approved',
        ...(charged && event.amount !== undefined ? { amount: event.amount } : {}),
        reachedGateway: true,
        order: { clientOrderId: event.clientOrderId, gatewayOrderId: event.gatewayOrderId },
        ...(event.occurredAt === undefined ? {} : { settledAt: event.occurredAt }),
      },
    ];
  });
}

/** What a saga's state says of its order, for the checks of its operations. */
export interface SagaOrder {
  readonly status: string;
  readonly clientOrderId: string;
  readonly gatewayOrderId?: string;
}

/** One check of a run: its subject among the saga's checks and what the saga reported. */
export interface PlannedCheck {
  readonly subject: CheckSubject;
  readonly expectation: Expectation;
}

/**
 * Which of a saga's checks a run makes: an operation belongs to the run whose window holds the
 * time its outcome was recorded (a return days after its sale, a schedule's charge months after
 * the schedule); the latest operation of a saga whose history names none to the run whose
 * window holds the saga's creation; an outcome unknown for over the alert age to every run that
 * reads the saga (created in its window, or changed since it began: its alert, raised when the
 * alert age is reached, is such a change) — its check may find the evidence the saga waits for.
 */
export interface RunScope {
  readonly from: Date;
  readonly to: Date;
  readonly createdInWindow: boolean;
}

function inWindow(op: SettledOperation, scope: RunScope): boolean {
  if (op.settledAt === undefined) return scope.createdInWindow;
  const at = Date.parse(op.settledAt);
  return at >= scope.from.getTime() && at < scope.to.getTime();
}

/**
 * Whether the order check would ask about a request a request check already names by serial:
 * the saga's last request the gateway took (its latest at the gateway: nothing is in flight when
 * the state reports a settled operation) has a known serial and is the operation, with the
 * outcome, the state reports. The order's latest request is then that very request, asked
 * `by-request-sn` by the run whose window holds its outcome; the order check would ask the same
 * question again (and the close's tie-out never takes it: a line takes its own request's check
 * first, day-tie-out.service.ts `checkOf`).
 */
export function latestAskedBySerial(
  all: readonly SettledOperation[],
  latest: Expectation,
): boolean {
  if (latest.outcome === 'unknown') return false;
  const last = all.filter((op) => op.reachedGateway && op.order === undefined).at(-1);
  return (
    last?.serial !== undefined &&
    last.operation === latest.operation &&
    last.outcome === latest.outcome
  );
}

/**
 * A saga's checks in a run: one per settled operation of the window the gateway took and whose
 * serial is known (asked `by-request-sn`: the answer is about that very request), and one per
 * charge on an order of its own. The check of the latest operation (`latest`, from the state)
 * is added when an operation of the window the gateway took has no known serial — unless the
 * latest is itself asked by serial ({@link latestAskedBySerial}: an opening sale settled by its
 * callback, then a return; the order's latest request is the return, whose own check names it) —
 * for an outcome unknown for over an hour (in every run that reads the saga), and, in the run of
 * the saga's creation window, for a saga whose history names no operation (written before
 * serials were kept): the order's latest request is then all the gateway can be asked about.
 */
export function sagaChecks(
  order: SagaOrder | undefined,
  all: readonly SettledOperation[],
  latest: ExpectationOrSkip | undefined,
  scope: RunScope,
): PlannedCheck[] {
  const operations = all.filter((op) => inWindow(op, scope));
  const checks: PlannedCheck[] = [];
  let unserialed = false;
  for (const op of operations) {
    if (!op.reachedGateway) continue;
    const facts = {
      operation: op.operation,
      outcome: op.outcome,
      ...(op.amount === undefined ? {} : { amount: op.amount }),
    };
    if (op.order !== undefined) {
      checks.push({
        subject: `charge:${op.key}`,
        expectation: {
          status: order?.status ?? 'unknown',
          ...facts,
          basis: 'latest-operation',
          // The request the saga waits for (a charge expected): its answer is handed to it.
          ...(op.requestId === undefined ? {} : { requestId: op.requestId }),
          clientOrderId: op.order.clientOrderId,
          ...(op.order.gatewayOrderId === undefined
            ? {}
            : { gatewayOrderId: op.order.gatewayOrderId }),
        },
      });
    } else if (op.serial !== undefined && order !== undefined) {
      checks.push({
        subject: `request:${op.key}`,
        expectation: {
          status: order.status,
          ...facts,
          basis: 'request',
          ...(op.requestId === undefined ? {} : { requestId: op.requestId }),
          serial: op.serial,
          clientOrderId: order.clientOrderId,
          ...(order.gatewayOrderId === undefined ? {} : { gatewayOrderId: order.gatewayOrderId }),
        },
      });
    } else {
      unserialed = true;
    }
  }
  if (latest?.kind !== 'check') return checks;
  const fromState =
    latest.expectation.outcome === 'unknown' || (scope.createdInWindow && all.length === 0);
  if (fromState || (unserialed && !latestAskedBySerial(all, latest.expectation))) {
    checks.push({
      subject: 'order',
      expectation: { ...latest.expectation, basis: 'latest-operation' },
    });
  }
  return checks;
}

/** The gateway's answer to the status query of a check. */
export type GatewayAnswer =
  | { readonly kind: 'report'; readonly report: GatewayStatusReport }
  /**
   * The gateway refused the query. `orderUnknown`: because it has no such order — the one refusal
   * that says anything about the order (the adapter's reading, as the saga path uses it); any
   * other (credentials, the endpoint, the query's form) says nothing.
   */
  | { readonly kind: 'rejected'; readonly code: string; readonly orderUnknown?: boolean }
  /** No usable answer within the run's attempts. */
  | { readonly kind: 'none' };

/**
 * What a check found that is neither a match nor a mismatch (no `reconciliation-mismatch` event;
 * counted on the run's completion):
 *  - `unanswered`: the gateway refused the query for another reason than "no such order" (403,
 *    an endpoint the adapter does not know, a refusal injected): inconclusive, asked again while
 *    the run's attempts last;
 *  - `handed-to-saga`: the gateway's final answer about the very request the saga waits for (its
 *    outcome unknown): handed to the saga as an ordinary status reply about that request, whose
 *    own rules settle it (its events say how; never a rule of reconciliation's).
 */
export type Finding = 'unanswered' | 'handed-to-saga';

export type Verdict = 'match' | MismatchKind | Finding | 'not-final';

const FINDINGS: ReadonlySet<string> = new Set<Finding>(['unanswered', 'handed-to-saga']);

/** Whether a stored verdict is a finding (neither a match nor a mismatch). */
export const isFinding = (found: string): found is Finding => FINDINGS.has(found);

/**
 * Whether the answer is evidence for the saga: the gateway's final reply about the exact request
 * the saga waits for (its outcome unknown; asked by serial when it has one, so a reply about
 * another request is not it). The service hands it to the saga as a status reply about that
 * request; the saga's shared rules (domain/gateway-operation/gateway-operation.ts) decide what it means — the
 * amount compared, the reply's subject judged — exactly as for its own poll.
 */
export function isEvidence(expectation: Expectation, answer: GatewayAnswer): boolean {
  if (expectation.outcome !== 'unknown' || expectation.requestId === undefined) return false;
  if (answer.kind !== 'report') return false;
  const { report } = answer;
  if (
    expectation.serial !== undefined &&
    report.requestSerial !== undefined &&
    report.requestSerial !== expectation.serial
  )
    return false;
  return isFinalGatewayStatus(report.status);
}

/**
 * The verdict on one check. `named` maps the gateway's transaction type to the flow's operations
 * it can mean (the flow's gateway vocabulary; undefined when the reply names no type). `not-final`: the gateway's order is still
 * processing; the service asks again later (bounded), then calls it `unresolved`.
 */
export function verdict(
  expectation: Expectation,
  answer: GatewayAnswer,
  named: (transactionType: string | undefined) => readonly string[] | undefined,
): Verdict {
  if (expectation.outcome === 'unknown')
    return isEvidence(expectation, answer) ? 'handed-to-saga' : 'unknown-over-an-hour';
  if (answer.kind === 'none') return 'unresolved';
  if (answer.kind === 'rejected') {
    // Only "no such order" is no trace (as for the saga's own polls): any other refusal says
    // nothing about the order.
    if (answer.orderUnknown !== true) return 'unanswered';
    return expectation.outcome === 'approved' ? 'no-trace-at-gateway' : 'match';
  }
  const { report } = answer;
  // Asked about one request, answered about another: says nothing about ours.
  if (
    expectation.serial !== undefined &&
    report.requestSerial !== undefined &&
    report.requestSerial !== expectation.serial
  )
    return 'unresolved';
  if (!isFinalGatewayStatus(report.status)) return 'not-final';
  const approved = report.status === 'approved';
  // A reply without a transaction type is about the order's operation the query named: ours.
  const operations = named(report.transactionType) ?? [expectation.operation];
  const ours = operations.includes(expectation.operation);
  const benign = operations.some((o) => expectation.benign?.includes(o) === true);
  if (expectation.outcome === 'approved') {
    if (approved && ours) return amountVerdict(expectation.amount, report.amount);
    if (approved) return 'operation-differs';
    // Declined: ours → it never went through; another operation → it moved nothing.
    return ours ? 'reported-charged-but-not' : 'match';
  }
  if (!approved || benign) return 'match';
  return ours ? 'charged-but-reported-declined' : 'operation-differs';
}

function amountVerdict(expected: Money | undefined, reported: Money | undefined): Verdict {
  if (expected === undefined || reported === undefined) return 'match';
  return expected.minor === reported.minor && expected.currency === reported.currency
    ? 'match'
    : 'amount-differs';
}

/**
 * Which of reconciliation's looks at a saga a check is:
 *  - `request:<request id>`: the status of one request of ours, `by-request-sn` — the verdict above;
 *  - `charge:<gateway order id>`: a charge the gateway made on an order of its own (a registered
 *    schedule's), its status by that order id;
 *  - `order`: the status of our own order's latest request (by its order id when we know it), for
 *    a saga whose operations have no known serial or an outcome unknown for over an hour;
 *  - `client-order-id`: the status query by our client order id alone, sent once the gateway has
 *    confirmed our order charged. The spec identifies a status query "by orderid, or by
 *    client_orderid if orderid is unavailable"; the gateway offers no list or search of orders, so
 *    this lookup is the one way its API shows an order under our client order id that we do not
 *    know of (a resend charged again, a second order made by hand). Its reply is about one order:
 *    when that is ours, another order (if any) stays invisible.
 */
export type CheckSubject = 'order' | 'client-order-id' | `request:${string}` | `charge:${string}`;

/** Operations that take money from the customer or pay it out when approved (contracts' traits). */
const MONEY_OPERATIONS: ReadonlySet<string> = new Set(MONEY_MOVING_OPERATIONS);

/**
 * Whether a saga is looked up by its client order id too: only once the gateway confirmed our own
 * order charged or paid out as we reported it (the order check matched), and only when we know our
 * order's id — without it the order check itself asked by client order id, and the two replies
 * could not tell two orders from one.
 */
export function looksForAnotherOrder(expectation: Expectation, found: Verdict): boolean {
  return (
    found === 'match' &&
    expectation.outcome === 'approved' &&
    expectation.gatewayOrderId !== undefined &&
    MONEY_OPERATIONS.has(expectation.operation)
  );
}

/**
 * The verdict of the lookup by client order id (our order already confirmed approved): `paid-twice`
 * when the gateway's reply is about another order than ours — it names the order — and says that
 * order's money operation was approved. A reply about our own order, one naming no order, a refusal
 * or a reply about another order that moved no money (declined, voided, a payout check) is a
 * `match`: nothing confirms a second charge (a refusal other than "no such order" is `unanswered`).
 * A reply without a transaction type names no operation and confirms nothing either.
 */
export function anotherOrderVerdict(
  ours: Expectation,
  answer: GatewayAnswer,
  named: (transactionType: string | undefined) => readonly string[] | undefined,
): 'match' | 'paid-twice' | 'unresolved' | 'unanswered' | 'not-final' {
  if (answer.kind === 'none') return 'unresolved';
  if (answer.kind === 'rejected') return answer.orderUnknown === true ? 'match' : 'unanswered';
  const { report } = answer;
  const other = report.gatewayOrderId;
  if (other === undefined || other === ours.gatewayOrderId) return 'match';
  if (!isFinalGatewayStatus(report.status)) return 'not-final';
  if (report.status !== 'approved') return 'match';
  const operations = named(report.transactionType) ?? [];
  return operations.some((o) => MONEY_OPERATIONS.has(o)) ? 'paid-twice' : 'match';
}

/**
 * The window a scheduled run covers at `now`: the last whole `intervalMs` that ended at least
 * `settleMs` ago (sagas need time to settle), aligned to the epoch so every replica computes the
 * same window and the unique index lets only one run start it.
 */
export function scheduledWindow(
  now: Date,
  intervalMs: number,
  settleMs: number,
): { from: Date; to: Date } {
  const to = Math.floor((now.getTime() - settleMs) / intervalMs) * intervalMs;
  return { from: new Date(to - intervalMs), to: new Date(to) };
}
