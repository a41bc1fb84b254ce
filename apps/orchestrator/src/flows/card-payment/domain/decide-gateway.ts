import { unhandled } from '../../../domain/decision';
import type { GatewayStatusReport, PaymentEvent, PaymentOperation } from '@payments/contracts';
import {
  operationDecision,
  reportError,
  type OperationInput,
  type OperationVocabulary,
} from '../../../domain/gateway-operation/gateway-operation';
import type { Decision, DecisionContext } from './decision';
import { addMs, policyOf, type EventDraft } from './drafts';
import type { Effect } from './effects';
import { accountVerified, methodDeadlineTimer } from './decide-payer-flows';
import {
  type InFlightOperation,
  isMainOperation,
  type OpenPayment,
  type PaymentState,
} from './state';

/** The open payment and its operation in flight, if any. */
export function inFlightOf(state: PaymentState): [OpenPayment, InFlightOperation] | undefined {
  return state.inFlight === undefined ? undefined : [state, state.inFlight];
}

/** How the card-payment flow names what happens to its operation in flight. */
export function paymentVocabulary(
  state: OpenPayment,
  ctx: DecisionContext,
): OperationVocabulary<InFlightOperation, EventDraft, Effect> {
  const ref = (op: InFlightOperation) =>
    ({ commandId: op.commandId, operation: op.operation, requestId: op.requestId }) as const;
  return {
    opensOrder: isMainOperation,
    // A second capture or void of the order is refused; a second return would refund again.
    refusesRepeat: (operation) => operation === 'capture' || operation === 'void',
    hostedForm: (op) => op.via === 'hosted-form',
    transactionsByGateway: (op) =>
      op.transactionByGateway === true ? (['sale', 'preauth'] as const) : undefined,
    expectedAmount: (op) =>
      isMainOperation(op.operation) && op.operation !== 'account-verification'
        ? op.amount
        : undefined,
    acceptedByGateway: (op, facts) => ({ type: 'accepted-by-gateway', ...ref(op), ...facts }),
    actionRequired: (op, action) => ({ type: 'action-required', ...ref(op), action }),
    payerActionEffects: (op, action) =>
      action.kind === 'threeds-method' ? [methodDeadlineTimer(op, ctx)] : [],
    outcomeUnknown: (op, facts) => ({ type: 'outcome-unknown', ...ref(op), ...facts }),
    operationResent: (op, attempt, unknownSince) => ({
      type: 'operation-resent',
      ...ref(op),
      attempt,
      unknownSince,
    }),
    succeeded: (report, op) => {
      const effects: Effect[] = [];
      return { drafts: [successDraft(report, state, op, effects, ctx)], effects };
    },
    declined: (report, op) => ({
      drafts: [
        {
          type: 'declined',
          ...ref(op),
          ...reportError(report),
          ...(report.card === undefined ? {} : { card: report.card }),
        },
      ],
      effects: [],
    }),
    failed: (op, why) => ({ drafts: [{ type: 'failed', ...ref(op), ...why }], effects: [] }),
  };
}

/**
 * A send result or status reply, a verified callback, a hint, a poll or alert timer: what it
 * means for the operation in flight (domain/gateway-operation/gateway-operation.ts). A status reply's or callback's
 * `about` lists the operations its transaction type can name, normalised at the edge: a status
 * query describes the order's LATEST operation, which may be the preauth or an earlier capture,
 * so a reply resolves a capture, void or return only when it names that operation. A final state
 * is never moved backwards: duplicates and late callbacks find nothing in flight.
 */
export function decideOperation(
  input: OperationInput<PaymentOperation>,
  current: PaymentState,
  ctx: DecisionContext,
): Decision {
  const open = inFlightOf(current);
  return operationDecision<InFlightOperation, PaymentEvent, 'paymentId', OpenPayment, Effect>(
    input,
    open && { state: open[0], sagaId: open[0].paymentId, idField: 'paymentId', op: open[1] },
    (state) => paymentVocabulary(state, ctx),
    policyOf(ctx),
    ctx,
  );
}

function successDraft(
  report: GatewayStatusReport,
  state: OpenPayment,
  op: InFlightOperation,
  effects: Effect[],
  ctx: DecisionContext,
): EventDraft {
  const currency = op.amount.currency;
  const m = (minor: number) => ({ minor, currency });
  // Which request moved the money, and how much it asked for.
  const moved = { commandId: op.commandId, requestId: op.requestId, amount: op.amount };
  const extras = {
    ...(report.gatewayOrderId === undefined ? {} : { gatewayOrderId: report.gatewayOrderId }),
    ...(report.approvalCode === undefined ? {} : { approvalCode: report.approvalCode }),
    ...(report.card === undefined ? {} : { card: report.card }),
  };
  switch (op.operation) {
    // A rebill is a sale of a card reference: approved means charged.
    case 'sale':
    case 'rebill':
      return {
        type: 'approved',
        ...moved,
        ...extras,
      };
    case 'preauth': {
      const hold = policyOf(ctx).holdExpiry;
      if (hold) {
        effects.push({
          type: 'schedule-timer',
          timer: { kind: 'hold-expiry', action: hold.action },
          at: addMs(ctx.now, hold.afterMs),
        });
      }
      return {
        type: 'authorized',
        ...moved,
        ...extras,
      };
    }
    case 'capture': {
      // One capture per authorization: the rest of the hold is released with it.
      const total = state.captured + op.amount.minor;
      effects.push({ type: 'cancel-timer', timer: 'hold-expiry' });
      return {
        type: 'captured',
        ...moved,
        totalCaptured: m(total),
        remainingAuthorized: m(0),
        released: m(state.authorized - total),
      };
    }
    case 'void':
      effects.push({ type: 'cancel-timer', timer: 'hold-expiry' });
      return {
        type: 'voided',
        ...moved,
      };
    case 'return': {
      const holdReleased = state.status === 'authorized';
      if (holdReleased) {
        effects.push({ type: 'cancel-timer', timer: 'hold-expiry' });
        return {
          type: 'returned',
          ...moved,
          totalReturned: op.amount,
          remainingBalance: m(0),
          holdReleased,
        };
      }
      const total = state.returned + op.amount.minor;
      return {
        type: 'returned',
        ...moved,
        totalReturned: m(total),
        remainingBalance: m(state.captured - total),
        holdReleased,
      };
    }
    case 'account-verification':
      return accountVerified(report, op);
    default:
      return unhandled(op.operation, 'operation');
  }
}
