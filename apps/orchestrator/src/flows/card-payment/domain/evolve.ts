import { unhandled } from '../../../domain/decision';
import type { PaymentEvent } from '@payments/contracts';
import { DomainError } from '../../../domain/domain-error';
import { withSettledSerial } from '../../../domain/gateway-operation/gateway-operation';
import { pendingSerial } from '../../../domain/gateway-operation/operation-serial';
import { evolveCardReference } from './card-reference';
import {
  type FailedPayment,
  type InFlightOperation,
  isMainOperation,
  type OpenPayment,
  type PaymentState,
  type PendingPayment,
  type SucceededPayment,
  type SucceededStatus,
} from './state';

/** Folds one event into the state. Total over event types; throws only on a corrupt history. */
export function evolve(state: PaymentState, event: PaymentEvent): PaymentState {
  if (event.version !== state.version + 1) {
    throw new DomainError(
      'VERSION_GAP',
      `event version ${event.version} after state version ${state.version}`,
    );
  }
  const version = event.version;
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
        ...(event.via === undefined ? {} : { via: event.via }),
        ...(event.transactionByGateway === undefined ? {} : { transactionByGateway: true }),
      };
      if (isMainOperation(event.operation)) {
        if (event.merchant === undefined) {
          throw new DomainError(
            'INCOMPLETE_EVENT',
            `${event.operation} requested without merchant`,
          );
        }
        const pending: PendingPayment = {
          status: 'requested',
          version,
          paymentId: event.paymentId,
          kind: event.operation,
          merchant: event.merchant,
          currency: event.amount.currency,
          clientOrderId: event.clientOrderId,
          ...(event.cardRef === undefined ? {} : { cardRef: event.cardRef }),
          ...(event.schedule === undefined ? {} : { schedule: event.schedule }),
          authorized: state.authorized,
          captured: state.captured,
          returned: state.returned,
          holdReleased: state.holdReleased,
          holdExpired: state.holdExpired,
          inFlight,
        };
        return pending;
      }
      const succeeded = requireSucceeded(state, event);
      // Asked while the sale's serial is still asked for: written held (decide-serial.ts).
      return {
        ...succeeded,
        version,
        inFlight: succeeded.serialPending === undefined ? inFlight : { ...inFlight, held: true },
      };
    }
    case 'accepted-by-gateway': {
      if (state.status !== 'initial' && state.serialPending?.requestId === event.requestId)
        return serialLearnt(state, event);
      const [open, op] = requireInFlight(state, event);
      const withOrder =
        event.gatewayOrderId !== undefined && isMainOperation(op.operation)
          ? { gatewayOrderId: event.gatewayOrderId }
          : {};
      const { concern: _c, ...rest } = op;
      return stage(
        { ...open, ...withOrder, version },
        {
          ...rest,
          stage: 'processing',
          ...(event.serialNumber === undefined ? {} : { serial: event.serialNumber }),
        },
      );
    }
    case 'action-required': {
      const [open, op] = requireInFlight(state, event);
      return stage({ ...open, version }, { ...op, stage: 'action-required', action: event.action });
    }
    case 'outcome-unknown': {
      const [open, op] = requireInFlight(state, event);
      return stage(
        { ...open, version },
        {
          ...op,
          stage: 'outcome-unknown',
          unknownSince: event.since,
          alerted: op.alerted || event.alert,
          ...(event.concern === undefined ? {} : { concern: event.concern }),
        },
      );
    }
    case 'operation-resent': {
      // Sent once more after no trace: still unknown (the first send may yet reach the gateway),
      // now since the repeat, as the shared inFlight.resent keeps it; never back to requested,
      // whose send results could fail an operation that may have charged.
      const [open, op] = requireInFlight(state, event);
      const { concern: _c, ...rest } = op;
      return stage(
        { ...open, version },
        { ...rest, alerted: false, resent: true, unknownSince: event.occurredAt },
      );
    }
    case 'approved':
      return withSerialMark(
        state,
        event,
        settle(state, event, 'approved', {
          authorized: event.amount.minor,
          captured: event.amount.minor,
        }),
      );
    case 'authorized':
      // A hold, whatever was assumed when the gateway decided the transaction (payment-form).
      return withSerialMark(state, event, {
        ...settle(state, event, 'authorized', { authorized: event.amount.minor }),
        kind: 'preauth',
      });
    case 'account-verified':
      return settle(state, event, 'verified', {});
    case 'declined':
    case 'failed': {
      const [open, op] = requireInFlight(state, event);
      const withCard =
        event.type === 'declined' && event.card !== undefined ? { card: event.card } : {};
      const rest = { ...withoutInFlight(open), ...withCard, version };
      if (isMainOperation(op.operation)) {
        const failed: FailedPayment = { ...rest, status: event.type };
        return failed;
      }
      // A declined or failed follow-up moved no money: the position stays as it was.
      return { ...rest, status: succeededStatusOf(open, event) };
    }
    case 'captured':
      return settle(state, event, 'captured', { captured: event.totalCaptured.minor });
    case 'voided':
      return settle(state, event, 'voided', {});
    case 'returned':
      return settle(
        state,
        event,
        event.holdReleased || event.remainingBalance.minor === 0
          ? 'returned'
          : 'partially-returned',
        { returned: event.totalReturned.minor, holdReleased: event.holdReleased },
      );
    case 'settled-by-decision':
      return settledByDecision(state, event);
    case 'case-reopened': {
      const open = requireOpen(state, event);
      return open.decided === undefined
        ? { ...open, version }
        : { ...open, version, decided: { ...open.decided, reopened: true } };
    }
    case 'hold-expired':
      return { ...requireOpen(state, event), version, holdExpired: true };
    case 'command-rejected':
      return { ...state, version };
    case 'card-ref-requested':
    case 'card-ref-created':
    case 'card-info-requested':
    case 'card-info-reported':
    case 'card-reference-unknown':
    case 'card-reference-failed':
      return evolveCardReference(requireOpen(state, event), event);
    default:
      return unhandled(event, 'event');
  }
}

/**
 * A create-card-ref decided "not done" (a case): the request no longer waits, no reference is
 * kept, the payment's status and operation in flight untouched; the decision is kept so a
 * reference answered afterwards reopens the case.
 */
function cardRefSettledByDecision(
  state: PaymentState,
  event: Extract<PaymentEvent, { type: 'settled-by-decision' }>,
): PaymentState {
  const { cardRefRequest: _decided, ...open } = requireOpen(state, event);
  return {
    ...open,
    version: event.version,
    decided: {
      operation: event.operation,
      requestId: event.requestId,
      caseId: event.caseId,
      decision: event.decision,
    },
  };
}

/**
 * A sale, preauth or rebill that succeeded before any reply named its serial (a verified callback
 * settled it) keeps the mark: its serial is asked for, follow-ups wait (operation-serial.ts).
 */
function withSerialMark(
  before: PaymentState,
  event: Extract<PaymentEvent, { type: 'approved' | 'authorized' }>,
  settled: SucceededPayment,
): SucceededPayment {
  const op = before.inFlight;
  if (op === undefined) return settled;
  const mark = pendingSerial(
    op,
    isMainOperation(op.operation),
    event.occurredAt,
    event.type === 'authorized' ? 'preauth' : undefined,
  );
  return mark === undefined ? settled : { ...settled, serialPending: mark };
}

/**
 * The serial question of a settled sale closed (`accepted-by-gateway` about it after its outcome):
 * its serial, when named, joins the order's; a follow-up held on it is held no more.
 */
function serialLearnt(
  state: OpenPayment,
  event: Extract<PaymentEvent, { type: 'accepted-by-gateway' }>,
): PaymentState {
  const { serialPending: _closed, ...open } = state;
  const held = open.inFlight;
  const { held: _h, ...released } = held ?? { held: undefined };
  return {
    ...open,
    version: event.version,
    ...(event.serialNumber === undefined
      ? {}
      : withSettledSerial(open, { serial: event.serialNumber })),
    ...(open.gatewayOrderId === undefined && event.gatewayOrderId !== undefined
      ? { gatewayOrderId: event.gatewayOrderId }
      : {}),
    ...(held === undefined ? {} : { inFlight: released as InFlightOperation }),
  } as PaymentState;
}

/** Replays a history from the initial state. */
export function fold(state: PaymentState, events: readonly PaymentEvent[]): PaymentState {
  return events.reduce(evolve, state);
}

/**
 * A decision of two people about the operation in flight (a case): "done" moves the position as the
 * operation's success would, at the decided amount (the gateway's); "not done" as its failure
 * (a follow-up leaves the position as it was, so follow-ups are taken again). The decision is kept
 * (`decided`) so a contradicting gateway answer later reopens the case.
 */
function settledByDecision(
  state: PaymentState,
  event: Extract<PaymentEvent, { type: 'settled-by-decision' }>,
): PaymentState {
  if (event.operation === 'create-card-ref') return cardRefSettledByDecision(state, event);
  const [open, op] = requireInFlight(state, event);
  const decided = {
    operation: op.operation,
    requestId: op.requestId,
    caseId: event.caseId,
    decision: event.decision,
    ...(event.amount === undefined ? {} : { amount: event.amount }),
    ...(op.serial === undefined ? {} : { serial: op.serial }),
  };
  const version = event.version;
  if (event.decision === 'not-done' || event.amount === undefined) {
    const rest = { ...withoutInFlight(open), version, decided };
    if (isMainOperation(op.operation)) {
      const failed: FailedPayment = { ...rest, status: 'failed' };
      return failed;
    }
    return { ...rest, status: succeededStatusOf(open, event) };
  }
  const amount = event.amount.minor;
  const done = (
    status: SucceededStatus,
    balances: Partial<
      Pick<SucceededPayment, 'authorized' | 'captured' | 'returned' | 'holdReleased'>
    >,
  ): SucceededPayment => ({ ...withoutInFlight(open), ...balances, version, decided, status });
  switch (op.operation) {
    case 'sale':
    case 'rebill':
      return done('approved', { authorized: amount, captured: amount });
    case 'preauth':
      return { ...done('authorized', { authorized: amount }), kind: 'preauth' };
    case 'account-verification':
      return done('verified', {});
    case 'capture':
      return done('captured', { captured: open.captured + amount });
    case 'void':
      return done('voided', {});
    case 'return': {
      if (open.status === 'authorized')
        return done('returned', { returned: amount, holdReleased: true });
      const returned = open.returned + amount;
      return done(returned >= open.captured ? 'returned' : 'partially-returned', { returned });
    }
    default:
      return unhandled(op.operation, 'operation');
  }
}

function stage(state: OpenPayment, op: InFlightOperation): PaymentState {
  // The payment's own status mirrors the stage only while the sale/preauth itself is in flight.
  if (isMainOperation(op.operation)) {
    const pending: PendingPayment = { ...state, status: op.stage, inFlight: op };
    return pending;
  }
  const succeeded: SucceededPayment = {
    ...state,
    status: succeededStatusOf(state, undefined),
    inFlight: op,
  };
  return succeeded;
}

function settle(
  state: PaymentState,
  event: PaymentEvent & { gatewayOrderId?: string; card?: SucceededPayment['card'] },
  status: SucceededStatus,
  balances: Partial<
    Pick<SucceededPayment, 'authorized' | 'captured' | 'returned' | 'holdReleased'>
  >,
): SucceededPayment {
  const [open] = requireInFlight(state, event);
  return {
    ...withoutInFlight(open),
    ...(event.gatewayOrderId === undefined ? {} : { gatewayOrderId: event.gatewayOrderId }),
    ...(event.card === undefined ? {} : { card: event.card }),
    ...balances,
    version: event.version,
    status,
  };
}

/** Without the operation in flight (its outcome is known); its serial joins the order's. */
function withoutInFlight(state: OpenPayment): Omit<OpenPayment, 'inFlight' | 'status'> {
  const { inFlight: done, status: _status, ...rest } = state;
  return { ...rest, ...withSettledSerial(state, done) };
}

/** The status of a payment whose sale/preauth succeeded (follow-ups never change it by themselves). */
function succeededStatusOf(state: OpenPayment, event: PaymentEvent | undefined): SucceededStatus {
  switch (state.status) {
    case 'authorized':
    case 'approved':
    case 'captured':
    case 'partially-returned':
    case 'returned':
    case 'voided':
    case 'verified':
      return state.status;
    case 'requested':
    case 'processing':
    case 'action-required':
    case 'outcome-unknown':
    case 'declined':
    case 'failed':
      throw new DomainError(
        'NO_OPERATION_IN_FLIGHT',
        `${event?.type ?? 'a follow-up'} on a payment that is ${state.status}`,
      );
    default:
      return unhandled(state, 'state');
  }
}

function requireOpen(state: PaymentState, event: PaymentEvent): OpenPayment {
  if (state.status === 'initial') {
    throw new DomainError('EVENT_BEFORE_CREATION', `${event.type} before the payment was created`);
  }
  return state;
}

function requireSucceeded(state: PaymentState, event: PaymentEvent): SucceededPayment {
  const open = requireOpen(state, event);
  const status = succeededStatusOf(open, event);
  return { ...open, status };
}

function requireInFlight(
  state: PaymentState,
  event: PaymentEvent,
): [OpenPayment, InFlightOperation] {
  const open = requireOpen(state, event);
  if (!open.inFlight)
    throw new DomainError('NO_OPERATION_IN_FLIGHT', `${event.type} with no operation in flight`);
  return [open, open.inFlight];
}
