import type { PaymentEvent } from '@payments/contracts';
import { DomainError } from '../shared/domain-error';
import { isMainOperation, type InFlightOperation, type PaymentState } from './state';

/** Folds one event into the state. Total over event types; throws only on a corrupt history. */
export function evolve(state: PaymentState, event: PaymentEvent): PaymentState {
  if (event.version !== state.version + 1) {
    throw new DomainError(
      'VERSION_GAP',
      `event version ${event.version} after state version ${state.version}`,
    );
  }
  const next = { ...state, version: event.version };
  switch (event.type) {
    case 'operation-requested': {
      const inFlight: InFlightOperation = {
        operation: event.operation,
        requestId: event.requestId,
        commandId: event.commandId,
        amount: event.amount,
        stage: 'requested',
        requestedAt: event.occurredAt,
        alerted: false,
      };
      if (isMainOperation(event.operation)) {
        return {
          ...next,
          status: 'requested',
          paymentId: event.paymentId,
          kind: event.operation,
          ...(event.merchant === undefined ? {} : { merchant: event.merchant }),
          currency: event.amount.currency,
          clientOrderId: event.clientOrderId,
          inFlight,
        };
      }
      return { ...requireCreated(next, event), inFlight };
    }
    case 'accepted-by-gateway': {
      const op = requireInFlight(next, event);
      const withOrder =
        event.gatewayOrderId !== undefined && isMainOperation(op.operation)
          ? { gatewayOrderId: event.gatewayOrderId }
          : {};
      return stage({ ...next, ...withOrder }, { ...op, stage: 'processing' });
    }
    case 'action-required': {
      const op = requireInFlight(next, event);
      return stage(next, { ...op, stage: 'action-required', action: event.action });
    }
    case 'outcome-unknown': {
      const op = requireInFlight(next, event);
      return stage(next, {
        ...op,
        stage: 'outcome-unknown',
        unknownSince: event.since,
        alerted: op.alerted || event.alert,
      });
    }
    case 'approved':
      return settle(next, event, {
        status: 'approved',
        authorized: event.amount.minor,
        captured: event.amount.minor,
      });
    case 'authorized':
      return settle(next, event, { status: 'authorized', authorized: event.amount.minor });
    case 'declined':
    case 'failed': {
      requireInFlight(next, event);
      const withCard =
        event.type === 'declined' && event.card !== undefined ? { card: event.card } : {};
      const mainFailed = isMainOperation(event.operation) ? { status: event.type } : {};
      return { ...withoutInFlight(next), ...withCard, ...mainFailed };
    }
    case 'captured':
      return settle(next, event, { status: 'captured', captured: event.totalCaptured.minor });
    case 'voided':
      return settle(next, event, { status: 'voided' });
    case 'returned':
      return settle(next, event, {
        status:
          event.holdReleased || event.remainingBalance.minor === 0
            ? 'returned'
            : 'partially-returned',
        returned: event.totalReturned.minor,
        holdReleased: event.holdReleased,
      });
    case 'hold-expired':
      return { ...next, holdExpired: true };
    case 'command-rejected':
      return next;
    default: {
      const never: never = event;
      throw new Error(`unhandled event ${JSON.stringify(never)}`);
    }
  }
}

/** Replays a history from the initial state. */
export function fold(state: PaymentState, events: readonly PaymentEvent[]): PaymentState {
  return events.reduce(evolve, state);
}

function stage(state: PaymentState, op: InFlightOperation): PaymentState {
  // The payment's own status mirrors the stage only while the sale/preauth itself is in flight.
  return isMainOperation(op.operation)
    ? { ...state, status: op.stage, inFlight: op }
    : { ...state, inFlight: op };
}

function settle(
  state: PaymentState,
  event: PaymentEvent & { gatewayOrderId?: string; card?: PaymentState['card'] },
  patch: Partial<PaymentState>,
): PaymentState {
  requireInFlight(state, event);
  return {
    ...withoutInFlight(state),
    ...(event.gatewayOrderId === undefined ? {} : { gatewayOrderId: event.gatewayOrderId }),
    ...(event.card === undefined ? {} : { card: event.card }),
    ...patch,
  };
}

function withoutInFlight(state: PaymentState): PaymentState {
  const { inFlight: _done, ...rest } = state;
  return rest;
}

function requireCreated(state: PaymentState, event: PaymentEvent): PaymentState {
  if (state.paymentId === undefined) {
    throw new DomainError('EVENT_BEFORE_CREATION', `${event.type} before the payment was created`);
  }
  return state;
}

function requireInFlight(state: PaymentState, event: PaymentEvent): InFlightOperation {
  requireCreated(state, event);
  if (!state.inFlight)
    throw new DomainError('NO_OPERATION_IN_FLIGHT', `${event.type} with no operation in flight`);
  return state.inFlight;
}
