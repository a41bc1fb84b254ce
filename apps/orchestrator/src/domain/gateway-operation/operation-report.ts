/**
 * What a gateway report (a send's reply, a status query's answer, a verified callback) says of
 * the operation in flight: which request it describes, and the events and effects it means.
 */
import {
  isFinalGatewayStatus,
  type GatewayStatusReport,
  type Money,
  type PayerAction,
} from '@payments/contracts';
import {
  type GatewayOrder,
  firstPoll,
  ignored,
  news,
  type OperationEffect,
  type OperationInFlight,
  type OperationOutcome,
  type OperationScope,
  type OperationStep,
  type OperationVocabulary,
  type ReplyFacts,
  reportError,
  settleTimers,
  unknownAlertTimer,
} from './operation-model';
import { answerNamesAmount, type GatewayAnswer } from './reply-amounts';

/**
 * Which request of the order a status reply describes, for the operation in flight:
 *  - `this`: the operation's own request;
 *  - `earlier`: a request the order had before it (this request has left no trace yet);
 *  - `undetermined`: it cannot be told (no serial to tell two requests of one type apart).
 * The reply names its request by serial (`by-request-sn`); `about` lists the operations its
 * transaction type can name, normalised at the edge.
 */
export type ReplySubject = 'this' | 'earlier' | 'undetermined';

export function replySubject<O extends OperationInFlight>(
  report: GatewayStatusReport,
  about: readonly string[] | undefined,
  order: Pick<GatewayOrder, 'requestSerials'>,
  op: O,
  opensOrder: (operation: O['operation']) => boolean,
): ReplySubject {
  const serial = report.requestSerial;
  const earlier = order.requestSerials ?? [];
  if (serial !== undefined && earlier.includes(serial)) return 'earlier';
  // Nothing came before the request that opens the order: any reply about the order is about it.
  if (opensOrder(op.operation)) return 'this';
  if (serial !== undefined && op.serial !== undefined)
    return serial === op.serial ? 'this' : 'undetermined';
  // The latest request is of another type: an earlier one (e.g. the preauth before a capture).
  if (about !== undefined && !about.includes(op.operation)) return 'earlier';
  // Same type, and no serial to tell ours from an earlier one of that type (a second return).
  if (serial === undefined) return 'undetermined';
  return 'this';
}

/**
 * The operation in flight as the gateway's answer names it. When the gateway decides the
 * transaction ({@link OperationVocabulary.transactionsByGateway}), its answer's transaction type
 * says which of the possible operations it was: a universal form that held the money reports an
 * authorization, never a charge. Undefined when the answer cannot tell which it was: it names no
 * transaction type, or one that is none of the possible operations (a type the table does not
 * know, `authorization`, `hold`, …: "charged" is never read into a word we do not know; the
 * operation stays undetermined and polled, as a callback naming it is ignored).
 */
export function namedBy<O extends OperationInFlight, D, E>(
  about: readonly string[] | undefined,
  op: O,
  vocab: OperationVocabulary<O, D, E>,
): O | undefined {
  const possible = vocab.transactionsByGateway?.(op);
  if (possible === undefined) return op;
  if (about === undefined) return undefined;
  const named = possible.find((operation) => about.includes(operation));
  if (named === undefined) return undefined;
  return named === op.operation ? op : { ...op, operation: named };
}

export function applyReport<O extends OperationInFlight, D, E>(
  report: GatewayStatusReport,
  scope: OperationScope<O, D, E>,
  reply?: ReplyFacts,
  answer: GatewayAnswer = 'status-reply',
): OperationStep<D, E> {
  const { drafts, effects } = reportOutcome(report, scope, reply, answer);
  if (drafts.length === 0 && effects.length === 0) return ignored('NO_NEWS');
  return news(drafts, effects);
}

export const sameMoney = (a: Money, b: Money): boolean =>
  a.minor === b.minor && a.currency === b.currency;

/**
 * What an approving answer says of the amount the operation asked for (`expected`):
 *  - `asked`: the same amount and currency, or no amount in an answer that carries none
 *    ({@link answerNamesAmount}: a send's own reply);
 *  - `other`: another amount or currency (`report.amount`);
 *  - `unreadable`: an amount we cannot read (`unreadableAmount`: `eur`, `7,000.00`, no currency),
 *    or none in an answer that names the operation's amount. Never read as the amount asked for.
 */
export function approvedAmount(
  expected: Money,
  report: Pick<GatewayStatusReport, 'amount' | 'unreadableAmount'>,
  operation: string,
  answer: GatewayAnswer,
): 'asked' | 'other' | 'unreadable' {
  if (report.amount !== undefined) return sameMoney(expected, report.amount) ? 'asked' : 'other';
  if (report.unreadableAmount !== undefined) return 'unreadable';
  return answerNamesAmount(operation, answer) ? 'unreadable' : 'asked';
}

function samePayerAction(a: PayerAction | undefined, b: PayerAction): boolean {
  if (a === undefined || a.kind !== b.kind) return false;
  switch (b.kind) {
    case 'redirect':
      return a.kind === 'redirect' && a.url === b.url;
    case 'html':
      return a.kind === 'html' && a.html === b.html;
    case 'threeds-method':
      return (
        a.kind === 'threeds-method' &&
        a.url === b.url &&
        a.threeDSServerTransID === b.threeDSServerTransID
      );
    default: {
      const never: never = b;
      throw new Error(`unhandled payer action ${JSON.stringify(never)}`);
    }
  }
}

/**
 * What a gateway status (a reply, a status query or a verified callback) means for the operation
 * in flight. `final` when the operation has its outcome.
 */
export function reportOutcome<O extends OperationInFlight, D, E>(
  report: GatewayStatusReport,
  { op, vocab, rules, ctx }: OperationScope<O, D, E>,
  reply?: ReplyFacts,
  answer: GatewayAnswer = 'status-reply',
): { drafts: D[]; effects: Array<E | OperationEffect>; final: boolean } {
  // A status reply names the request's serial: kept (accepted-by-gateway) before anything else,
  // so a later request of the order can tell a reply about this one from one about itself.
  const learned: D[] =
    report.requestSerial !== undefined &&
    op.serial === undefined &&
    // (requested / unknown and not final: the acknowledgement below names it; a payer's step in
    // progress is left as it is until the outcome.)
    (isFinalGatewayStatus(report.status) || op.stage === 'processing')
      ? [
          vocab.acceptedByGateway(op, {
            ...(report.gatewayOrderId === undefined
              ? {}
              : { gatewayOrderId: report.gatewayOrderId }),
            serialNumber: report.requestSerial,
          }),
        ]
      : [];
  if (isFinalGatewayStatus(report.status)) {
    const expected = report.status === 'approved' ? vocab.expectedAmount?.(op) : undefined;
    if (
      expected !== undefined &&
      approvedAmount(expected, report, op.operation, answer) !== 'asked'
    ) {
      // Not the money asked for, or money we cannot read: no success event; a person compares
      // the gateway's ledger.
      if (op.concern === 'amount-mismatch') return { drafts: [], effects: [], final: true };
      return {
        drafts: [
          ...learned,
          vocab.outcomeUnknown(op, {
            since: op.unknownSince ?? ctx.now,
            alert: true,
            concern: 'amount-mismatch',
            ...(report.amount === undefined ? {} : { reportedAmount: report.amount }),
          }),
        ],
        effects: [
          ...settleTimers(),
          ...(report.amount === undefined ? [] : (vocab.amountMismatch?.(op, report.amount) ?? [])),
        ],
        final: true,
      };
    }
    let outcome: OperationOutcome<D, E>;
    switch (report.status) {
      case 'approved':
        outcome = vocab.succeeded(report, op, reply);
        break;
      case 'declined':
        outcome = vocab.declined(report, op);
        break;
      case 'error':
      case 'filtered':
        outcome = vocab.failed(op, { reason: report.status, ...reportError(report) });
        break;
      default: {
        const never: never = report.status;
        throw new Error(`unhandled final status ${String(never)}`);
      }
    }
    return {
      drafts: [...learned, ...outcome.drafts],
      effects: [...settleTimers(), ...outcome.effects],
      final: true,
    };
  }

  // Non-final: processing, unknown, chain_declined.
  const drafts: D[] = [...learned];
  // A callback or status reply overtook the send result (which will then be ignored): poll from here.
  const effects: Array<E | OperationEffect> =
    op.stage === 'requested' ? [firstPoll(op, ctx.now)] : [];
  if (report.status === 'unknown') {
    if (op.stage !== 'outcome-unknown') {
      drafts.push(vocab.outcomeUnknown(op, { since: ctx.now, alert: false }));
      effects.push(unknownAlertTimer(op, ctx.now, rules));
    }
    return { drafts, effects, final: false };
  }
  const action: PayerAction | undefined =
    report.redirectUrl !== undefined
      ? { kind: 'redirect', url: report.redirectUrl }
      : report.html !== undefined
        ? { kind: 'html', html: report.html }
        : report.threeDSMethod !== undefined
          ? { kind: 'threeds-method', ...report.threeDSMethod }
          : undefined;
  // A hosted form whose reply was lost: the gateway holds the order, but the form's address never
  // reached us, so nobody can ever fill it in; its order stays `processing` at the gateway, which
  // here means nothing will happen. "The gateway has it" does not resolve such an unknown
  // outcome: it stays unknown, its alert timer armed, until the alert is raised after the window.
  // A payer action or a final status the reply brings is taken as for any operation.
  const formAddressLost =
    op.stage === 'outcome-unknown' &&
    op.action === undefined &&
    action === undefined &&
    vocab.hostedForm?.(op) === true;
  // The gateway has the transaction: it is no longer unknown (or not yet acknowledged).
  if ((op.stage === 'requested' || op.stage === 'outcome-unknown') && !formAddressLost) {
    drafts.push(
      vocab.acceptedByGateway(op, {
        ...(report.gatewayOrderId === undefined ? {} : { gatewayOrderId: report.gatewayOrderId }),
        ...(report.requestSerial === undefined ? {} : { serialNumber: report.requestSerial }),
      }),
    );
    if (op.stage === 'outcome-unknown')
      effects.push({ type: 'cancel-timer', timer: 'unknown-alert' });
  }
  if (
    action !== undefined &&
    vocab.actionRequired !== undefined &&
    !samePayerAction(op.action, action)
  ) {
    drafts.push(vocab.actionRequired(op, action));
    if (vocab.payerActionEffects !== undefined)
      effects.push(...vocab.payerActionEffects(op, action));
  }
  return { drafts, effects, final: false };
}
