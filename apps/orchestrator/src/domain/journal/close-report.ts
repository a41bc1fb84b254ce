/**
 * The close report of a merchant's day (issue #35 item 3), pure: our operations of the day (each
 * money event, each operation settled by a person's decision), each with the reconciliation
 * verdict of its check against the gateway (matched by serial, mismatched, unknown), the
 * operations still unknown and the open cases, tied out per currency and type: our totals, the
 * gateway's totals for the same operations, the differences, and the exceptions. The day is
 * `closed` when every operation matched (or was decided by a closed case) and nothing is unknown
 * or open, else `open-with-exceptions`.
 *
 * The gateway's side of an operation is what its status reply said about that very request: the
 * amount it reported when it reports one of its own (an order-opening operation's amount, an
 * `amount-differs`), else ours when it confirmed the request approved (`match`; the status API
 * reports an order's amount, not a follow-up's), nothing when it says the request did not move
 * money. Integer minor units only: amounts are bigint inside, decimal strings outside.
 */

/** The close report's verdict on one operation (how the line ties out). */
export type LineStatus =
  /** the gateway confirmed it as we reported it */
  | 'matched'
  /** settled by a decision of two people (a case, closed): the case is its tie-out */
  | 'decided'
  /** the gateway's answer differs from ours (the reconciliation mismatch kind is `verdict`) */
  | 'mismatched'
  /** no answer of the gateway to tie it to (unresolved, unanswered, or no check of the day's run) */
  | 'unconfirmed';

export type CloseState = 'closed' | 'open-with-exceptions';

/** One operation of the day as our records say it, with its check's verdict (if checked). */
export interface OperationFacts {
  readonly sagaId: string;
  readonly flow: string;
  readonly requestId?: string;
  readonly operation?: string;
  /** Our event type: a money event type, or `settled-by-decision`. */
  readonly type: string;
  readonly currency: string;
  /** What we say moved (integer minor units). */
  readonly minor: number;
  /** The reconciliation verdict of the operation's check; undefined: not checked. */
  readonly verdict?: string;
  /** The amount the gateway's reply reported for it, when it reported one. */
  readonly gatewayMinor?: number;
  /** `paid-twice`: the amount of the other order the gateway charged. */
  readonly otherOrderMinor?: number;
  /** The case about the operation, if any. */
  readonly caseId?: string;
  readonly caseStatus?: string;
}

/** An operation the gateway moved money for that we did not record (a mismatch with no event). */
export interface UnrecordedFacts {
  readonly sagaId: string;
  readonly flow: string;
  readonly requestId?: string;
  readonly operation: string;
  readonly verdict: string;
  readonly currency: string;
  /** The gateway's reported amount (0 when it reported none). */
  readonly gatewayMinor: number;
}

/** An operation of the day whose outcome is still unknown (held in flight). */
export interface UnknownFacts {
  readonly sagaId: string;
  readonly flow: string;
  readonly requestId: string;
  readonly operation?: string;
  readonly currency: string;
  readonly heldMinor: number;
  readonly caseId?: string;
}

/** A case still open (open, proposed or reopened) about an operation of the day. */
export interface OpenCaseFacts {
  readonly caseId: string;
  readonly sagaId: string;
  readonly requestId: string;
  readonly concern: string;
  readonly status: string;
}

export interface ReportLine {
  readonly sagaId: string;
  readonly flow: string;
  readonly requestId?: string;
  readonly operation?: string;
  readonly type: string;
  readonly currency: string;
  readonly oursMinor: string;
  /** Null: the gateway said nothing we can tie to it (`unconfirmed`). */
  readonly gatewayMinor: string | null;
  readonly differenceMinor: string;
  readonly status: LineStatus;
  readonly verdict?: string;
  readonly caseId?: string;
}

export interface ReportTotal {
  readonly currency: string;
  readonly type: string;
  readonly count: number;
  readonly oursMinor: string;
  readonly gatewayMinor: string;
  /** ours − the gateway's (an unconfirmed line counts as nothing at the gateway). */
  readonly differenceMinor: string;
}

export type ExceptionKind = 'mismatched' | 'unconfirmed' | 'unknown' | 'case-open';

export interface ReportException {
  readonly kind: ExceptionKind;
  readonly sagaId: string;
  readonly flow?: string;
  readonly requestId?: string;
  readonly operation?: string;
  readonly currency?: string;
  readonly minor?: string;
  readonly verdict?: string;
  readonly caseId?: string;
  readonly concern?: string;
}

export interface CloseReportBody {
  readonly state: CloseState;
  readonly totals: readonly ReportTotal[];
  readonly lines: readonly ReportLine[];
  readonly exceptions: readonly ReportException[];
}

/** Verdicts that say the gateway moved nothing for the request we said moved money. */
const MOVED_NOTHING = new Set([
  'reported-charged-but-not',
  'no-trace-at-gateway',
  'operation-differs',
]);
/** Verdicts that give no answer to tie to. */
const NO_ANSWER = new Set(['unresolved', 'unanswered', 'unknown-over-an-hour', 'handed-to-saga']);
const CASE_CLOSED = 'closed';

/** The gateway's amount for a line and its status. */
function tie(op: OperationFacts): { gateway?: bigint; status: LineStatus } {
  const ours = BigInt(op.minor);
  if (op.type === 'settled-by-decision')
    return op.caseStatus === undefined || op.caseStatus === CASE_CLOSED
      ? { gateway: ours, status: 'decided' }
      : { status: 'unconfirmed' };
  const v = op.verdict;
  if (v === undefined || NO_ANSWER.has(v)) return { status: 'unconfirmed' };
  if (v === 'match') return { gateway: ours, status: 'matched' };
  if (MOVED_NOTHING.has(v)) return { gateway: 0n, status: 'mismatched' };
  if (v === 'amount-differs')
    return {
      gateway: op.gatewayMinor === undefined ? ours : BigInt(op.gatewayMinor),
      status: 'mismatched',
    };
  if (v === 'paid-twice')
    return { gateway: ours + BigInt(op.otherOrderMinor ?? op.minor), status: 'mismatched' };
  return {
    status: 'mismatched',
    gateway: op.gatewayMinor === undefined ? 0n : BigInt(op.gatewayMinor),
  };
}

const byKey = <T>(items: readonly T[], key: (t: T) => string): T[] =>
  [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

/** The report of a merchant's day from its facts (deterministic: same facts, same report). */
export function closeReport(facts: {
  readonly operations: readonly OperationFacts[];
  readonly unrecorded: readonly UnrecordedFacts[];
  readonly unknown: readonly UnknownFacts[];
  readonly openCases: readonly OpenCaseFacts[];
}): CloseReportBody {
  const lines: ReportLine[] = [];
  const exceptions: ReportException[] = [];
  for (const op of facts.operations) {
    const { gateway, status } = tie(op);
    const ours = BigInt(op.minor);
    lines.push({
      sagaId: op.sagaId,
      flow: op.flow,
      ...(op.requestId === undefined ? {} : { requestId: op.requestId }),
      ...(op.operation === undefined ? {} : { operation: op.operation }),
      type: op.type,
      currency: op.currency,
      oursMinor: ours.toString(),
      gatewayMinor: gateway === undefined ? null : gateway.toString(),
      differenceMinor: (ours - (gateway ?? 0n)).toString(),
      status,
      ...(op.verdict === undefined ? {} : { verdict: op.verdict }),
      ...(op.caseId === undefined ? {} : { caseId: op.caseId }),
    });
    if (status === 'mismatched' || status === 'unconfirmed')
      exceptions.push({
        kind: status,
        sagaId: op.sagaId,
        flow: op.flow,
        ...(op.requestId === undefined ? {} : { requestId: op.requestId }),
        ...(op.operation === undefined ? {} : { operation: op.operation }),
        currency: op.currency,
        minor: ours.toString(),
        ...(op.verdict === undefined ? {} : { verdict: op.verdict }),
        ...(op.caseId === undefined ? {} : { caseId: op.caseId }),
      });
  }
  for (const op of facts.unrecorded) {
    const gateway = BigInt(op.gatewayMinor);
    lines.push({
      sagaId: op.sagaId,
      flow: op.flow,
      ...(op.requestId === undefined ? {} : { requestId: op.requestId }),
      operation: op.operation,
      type: op.operation,
      currency: op.currency,
      oursMinor: '0',
      gatewayMinor: gateway.toString(),
      differenceMinor: (-gateway).toString(),
      status: 'mismatched',
      verdict: op.verdict,
    });
    exceptions.push({
      kind: 'mismatched',
      sagaId: op.sagaId,
      flow: op.flow,
      ...(op.requestId === undefined ? {} : { requestId: op.requestId }),
      operation: op.operation,
      currency: op.currency,
      minor: '0',
      verdict: op.verdict,
    });
  }
  for (const u of facts.unknown)
    exceptions.push({
      kind: 'unknown',
      sagaId: u.sagaId,
      flow: u.flow,
      requestId: u.requestId,
      ...(u.operation === undefined ? {} : { operation: u.operation }),
      currency: u.currency,
      minor: String(u.heldMinor),
      ...(u.caseId === undefined ? {} : { caseId: u.caseId }),
    });
  for (const c of facts.openCases)
    exceptions.push({
      kind: 'case-open',
      sagaId: c.sagaId,
      requestId: c.requestId,
      caseId: c.caseId,
      concern: c.concern,
    });

  const totals = new Map<string, { count: number; ours: bigint; gateway: bigint }>();
  for (const line of lines) {
    const key = `${line.currency} ${line.type}`;
    const t = totals.get(key) ?? { count: 0, ours: 0n, gateway: 0n };
    t.count += 1;
    t.ours += BigInt(line.oursMinor);
    t.gateway += BigInt(line.gatewayMinor ?? '0');
    totals.set(key, t);
  }
  const sortedLines = byKey(
    lines,
    (l) => `${l.currency} ${l.type} ${l.sagaId} ${l.requestId ?? ''}`,
  );
  return {
    state: exceptions.length === 0 ? 'closed' : 'open-with-exceptions',
    totals: byKey([...totals], ([key]) => key).map(([key, t]) => {
      const [currency = '', type = ''] = key.split(' ');
      return {
        currency,
        type,
        count: t.count,
        oursMinor: t.ours.toString(),
        gatewayMinor: t.gateway.toString(),
        differenceMinor: (t.ours - t.gateway).toString(),
      };
    }),
    lines: sortedLines,
    exceptions: byKey(
      exceptions,
      (e) => `${e.kind} ${e.sagaId} ${e.requestId ?? ''} ${e.caseId ?? ''}`,
    ),
  };
}
