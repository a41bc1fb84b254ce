/**
 * Reconciliation's rules (issue #15), pure: what a saga reported (its expectation), and what a
 * gateway status reply about the same order says of it (the verdict). The service stores the
 * expectation when the run starts, sends one status query per check and applies `verdict` to the
 * answer; a mismatch becomes a `reconciliation-mismatch` event.
 *
 * One principle decides every case: money moved at the gateway when its status reply says the
 * operation we care about was approved. A declined or failed operation moves nothing, so a later
 * declined operation we did not record (a refused return, say) is no mismatch; an approved one we
 * did not record is (`operation-differs`).
 */
import type { GatewayStatusReport, MismatchKind, Money } from '@payments/contracts';
import { isFinalGatewayStatus } from '@payments/contracts';
import type { PaymentState } from '../flows/card-payment/domain/state';
import type { PayoutState } from '../flows/payout/domain/model';

/** What the saga reported about its order, as stored with the check. */
export interface Expectation {
  /** The saga's status when the run started. */
  readonly status: string;
  /** The operation whose outcome the saga reports (its last money operation). */
  readonly operation: string;
  /** approved: we reported it went through; not-approved: that it did not; unknown: we do not know. */
  readonly outcome: 'approved' | 'not-approved' | 'unknown';
  /** Operations the gateway may report approved last without a mismatch (a payout's check). */
  readonly benign?: readonly string[];
  /** The amount the gateway's reply must show (order-creating operations only). */
  readonly amount?: Money;
  readonly clientOrderId: string;
  readonly gatewayOrderId?: string;
  readonly unknownSince?: string;
}

/** Why a saga is left out of a run (never sent). */
export type NotCheckable = 'in-flight' | 'never-sent' | 'unknown-under-an-hour';

export type ExpectationOrSkip =
  | { readonly kind: 'check'; readonly expectation: Expectation }
  | { readonly kind: 'skip'; readonly reason: NotCheckable };

const skip = (reason: NotCheckable): ExpectationOrSkip => ({ kind: 'skip', reason });
const check = (expectation: Expectation): ExpectationOrSkip => ({ kind: 'check', expectation });

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
 * for longer than the alert age — then that is the finding.
 */
function inFlightCheck(
  inFlight: { readonly stage: string; readonly operation: string; readonly unknownSince?: string },
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
    ...(inFlight.unknownSince === undefined ? {} : { unknownSince: inFlight.unknownSince }),
  });
}

/** A card payment (sale, preauth, rebill, account verification, and their follow-ups). */
export function cardPaymentExpectation(state: PaymentState, at: CheckTime): ExpectationOrSkip {
  if (state.status === 'initial') return skip('never-sent');
  const base = { clientOrderId: state.clientOrderId, gatewayOrderId: state.gatewayOrderId };
  const inFlight = state.inFlight;
  if (inFlight !== undefined) {
    return inFlightCheck(inFlight, { ...base, status: state.status, amount: inFlight.amount }, at);
  }
  const created = { minor: state.authorized, currency: state.currency };
  switch (state.status) {
    case 'approved':
      return check({
        ...base,
        status: state.status,
        operation: state.kind,
        outcome: 'approved',
        amount: created,
      });
    case 'authorized':
      return check({
        ...base,
        status: state.status,
        operation: 'preauth',
        outcome: 'approved',
        amount: created,
      });
    case 'verified':
      return check({
        ...base,
        status: state.status,
        operation: 'account-verification',
        outcome: 'approved',
      });
    case 'captured':
      return check({ ...base, status: state.status, operation: 'capture', outcome: 'approved' });
    case 'voided':
      return check({ ...base, status: state.status, operation: 'void', outcome: 'approved' });
    case 'returned':
    case 'partially-returned':
      return check({ ...base, status: state.status, operation: 'return', outcome: 'approved' });
    case 'declined':
    case 'failed':
      return check({
        ...base,
        status: state.status,
        operation: state.kind,
        outcome: 'not-approved',
      });
    default:
      return skip('in-flight');
  }
}

/** A payout (one-step, two-step, form, v4). */
export function payoutExpectation(state: PayoutState, at: CheckTime): ExpectationOrSkip {
  if (state.status === 'initial') return skip('never-sent');
  const base = {
    status: state.status,
    clientOrderId: state.clientOrderId,
    gatewayOrderId: state.gatewayOrderId,
  };
  const paying = state.mode === 'two-step' ? 'payout-pay' : 'payout';
  const inFlight = state.inFlight;
  if (inFlight !== undefined) {
    return inFlightCheck(inFlight, { ...base, amount: state.amount }, at);
  }
  switch (state.status) {
    case 'paid':
      return check({ ...base, operation: paying, outcome: 'approved', amount: state.amount });
    case 'declined':
    case 'failed':
    case 'rejected':
    case 'expired':
      // Nothing paid; a two-step payout's check may well stand approved at the gateway.
      return check({
        ...base,
        operation: paying,
        outcome: 'not-approved',
        ...(state.mode === 'two-step' ? { benign: ['payout-check'] } : {}),
      });
    case 'checking':
    case 'registered':
    case 'reserving':
    case 'paying':
      // Not settled yet (a registered payout awaits its approval).
      return skip('in-flight');
    case 'refused':
      // The daily limit refused it before its request was sent.
      return skip('never-sent');
  }
}

/** The gateway's answer to the status query of a check. */
export type GatewayAnswer =
  | { readonly kind: 'report'; readonly report: GatewayStatusReport }
  /** The gateway refused the query (no such order, typically). */
  | { readonly kind: 'rejected'; readonly code: string }
  /** No usable answer within the run's attempts. */
  | { readonly kind: 'none' };

export type Verdict = 'match' | MismatchKind | 'not-final';

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
  if (expectation.outcome === 'unknown') return 'unknown-over-an-hour';
  if (answer.kind === 'none') return 'unresolved';
  if (answer.kind === 'rejected') {
    return expectation.outcome === 'approved' ? 'no-trace-at-gateway' : 'match';
  }
  const { report } = answer;
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
 *  - `order`: the status of our own order (by its order id when we know it) — the verdict above;
 *  - `client-order-id`: the status query by our client order id alone, sent once the gateway has
 *    confirmed our order charged. The spec identifies a status query "by orderid, or by
 *    client_orderid if orderid is unavailable"; the gateway offers no list or search of orders, so
 *    this lookup is the one way its API shows an order under our client order id that we do not
 *    know of (a resend charged again, a second order made by hand). Its reply is about one order:
 *    when that is ours, another order (if any) stays invisible.
 */
export type CheckSubject = 'order' | 'client-order-id';

/** Operations that take money from the customer or pay it out when approved. */
const MONEY_OPERATIONS: ReadonlySet<string> = new Set([
  'sale',
  'rebill',
  'capture',
  'payout',
  'payout-pay',
  'payout-v4',
  'payout-form',
]);

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
 * `match`: nothing confirms a second charge. A reply without a transaction type names no operation
 * and confirms nothing either.
 */
export function anotherOrderVerdict(
  ours: Expectation,
  answer: GatewayAnswer,
  named: (transactionType: string | undefined) => readonly string[] | undefined,
): 'match' | 'paid-twice' | 'unresolved' | 'not-final' {
  if (answer.kind === 'none') return 'unresolved';
  if (answer.kind === 'rejected') return 'match';
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
