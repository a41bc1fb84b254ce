/**
 * The card payment on the flow kit (test support only): its contract, its history and the
 * gateway's answers about the operation in flight.
 *
 *   given(...events).when(input).then([{ type: 'approved', ... }])
 *   givenInputs(sale, accepted).when(callback('approved')).thenRejected('...')
 */
import type {
  GatewayCallback,
  GatewayClassification,
  GatewayResult,
  GatewayStatusReport,
  PaymentCommand,
  PaymentEvent,
} from '@payments/contracts';
import {
  DEFAULT_POLICY,
  type DecisionContext,
  type PaymentPolicy,
} from '../../src/flows/card-payment/domain/decision';
import { decide } from '../../src/flows/card-payment/domain/decide';
import type { Effect } from '../../src/flows/card-payment/domain/effects';
import { evolve } from '../../src/flows/card-payment/domain/evolve';
import type { PaymentInput, Timer } from '../../src/flows/card-payment/domain/inputs';
import { initialState, type PaymentState } from '../../src/flows/card-payment/domain/state';
import { preauthCommand, saleCommand } from '@payments/contracts/testing';
import { callbackInput, gatewayResultInput } from '../../src/flows/card-payment/gateway-vocabulary';
import { idSequence, T0 } from './base.kit';
import { type FlowContract, FlowHistory, type InputOrFn, withAskedAmount } from './flow.kit';

export { at, idSequence, T0 } from './base.kit';

export function testContext(
  now = T0,
  policy: PaymentPolicy = DEFAULT_POLICY,
  ids = idSequence(),
): DecisionContext {
  return { now, ids, policy };
}

export interface PaymentTypes {
  input: PaymentInput;
  state: PaymentState;
  event: PaymentEvent;
  effect: Effect;
  context: DecisionContext;
  policy: PaymentPolicy;
}

export const cardPayment: FlowContract<PaymentTypes> = {
  decide,
  evolve,
  initial: initialState,
  context: (now, ids, policy) => ({ now, ids, policy }),
  policy: DEFAULT_POLICY,
  rejected: 'command-rejected',
};

/** A payment's history: `.and(input, now?, policy?)` appends, `.when(...)` decides on it. */
export type Scenario = FlowHistory<PaymentTypes>;

export function given(...events: PaymentEvent[]): Scenario {
  return new FlowHistory(cardPayment, events);
}

export function givenInputs(...inputs: Array<InputOrFn<PaymentTypes>>): Scenario {
  return inputs.reduce<Scenario>((s, input) => s.and(input), given());
}

// ---- input builders ---------------------------------------------------------------------------

export const command = (c: PaymentCommand): PaymentInput => ({ kind: 'command', command: c });

/** A result for the request currently in flight, answered when it is decided (or `answeredAt`). */
export const result =
  (classification: GatewayClassification, attempt = 1, answeredAt?: string) =>
  (state: PaymentState, now: string = T0): PaymentInput => {
    const op = state.inFlight;
    const gatewayResult: GatewayResult = {
      requestId: op?.requestId ?? '10000000-0000-4000-8000-ffffffffffff',
      paymentId:
        state.status === 'initial' ? '10000000-0000-4000-8000-ffffffffffff' : state.paymentId,
      operation: op?.operation ?? 'sale',
      attempt,
      result: classification,
      completedAt: answeredAt ?? now,
    };
    return gatewayResultInput(gatewayResult);
  };

/** The gateway's serial number of a request, as its reply and status replies about it name it. */
export const serialOf = (requestId: string): string => `sn-${requestId}`;

/** The gateway took the request in flight: its order id and the request's serial number. */
export const acceptedResult =
  (gatewayOrderId = 'gw-777') =>
  (state: PaymentState, now: string = T0): PaymentInput =>
    result({
      kind: 'accepted',
      gatewayOrderId,
      ...(state.inFlight ? { serialNumber: serialOf(state.inFlight.requestId) } : {}),
    })(state, now);

/**
 * A status-query reply to a query about the operation in flight, answered when it is decided (or
 * `answeredAt`). `report` says which request of the order it describes (`requestSerial`).
 */
export const statusReply =
  (given: GatewayStatusReport, answeredAt?: string) =>
  (state: PaymentState, now: string = T0): PaymentInput => {
    const report = state.inFlight === undefined ? given : withAskedAmount(given, state.inFlight);
    return gatewayResultInput({
      requestId: '10000000-0000-4000-8000-00000000abcd',
      paymentId: state.status === 'initial' ? '' : state.paymentId,
      operation: 'status',
      subjectRequestId: state.inFlight?.requestId ?? '10000000-0000-4000-8000-ffffffffffff',
      attempt: 1,
      result: { kind: 'accepted', report },
      completedAt: answeredAt ?? now,
    });
  };

/** The gateway's transaction type for each of our operations (a return is a `reversal`). */
const GATEWAY_TYPE = {
  sale: 'sale',
  preauth: 'preauth',
  capture: 'capture',
  void: 'void',
  return: 'reversal',
  // The gateway names a rebill's order a sale.
  rebill: 'sale',
  'account-verification': 'account-verification',
} as const;

export const callback =
  (status: GatewayStatusReport['status'], extra: Partial<GatewayCallback['report']> = {}) =>
  (state: PaymentState): PaymentInput =>
    callbackInput({
      kind: 'callback',
      notificationId: `n-${status}`,
      paymentId: state.status === 'initial' ? '' : state.paymentId,
      clientOrderId: state.status === 'initial' ? '' : state.clientOrderId,
      source: 'server-callback',
      // A real server callback names its transaction (sandbox and gateway alike).
      report: withAskedAmount(
        {
          status,
          gatewayOrderId: 'gw-777',
          ...(state.inFlight ? { transactionType: GATEWAY_TYPE[state.inFlight.operation] } : {}),
          ...extra,
        },
        state.inFlight ?? {},
      ),
      receivedAt: T0,
    });

export const timer = (t: Timer): PaymentInput => ({ kind: 'timer-fired', timer: t });

/**
 * The gateway's answer about the operation in flight: for the sale/preauth a verified server
 * callback naming it; for a capture, void or return a status reply naming that operation (a
 * callback about a follow-up is only a hint: its checksum binds neither operation nor amount).
 */
export const answer =
  (status: GatewayStatusReport['status'], extra: Partial<GatewayStatusReport> = {}) =>
  (state: PaymentState, now: string = T0): PaymentInput => {
    const op = state.inFlight;
    if (
      op === undefined ||
      op.operation === 'sale' ||
      op.operation === 'preauth' ||
      op.operation === 'account-verification'
    )
      return callback(status, extra)(state);
    return statusReply({
      status,
      gatewayOrderId: 'gw-777',
      transactionType: GATEWAY_TYPE[op.operation],
      // A status reply about this very request names it (by-request-sn).
      requestSerial: op.serial ?? serialOf(op.requestId),
      ...extra,
    })(state, now);
  };

// ---- where most payments' stories start ---------------------------------------------------------

/** The effects that cancel these timers, in this order (what settling an operation stops). */
export const cancelled = (...timers: string[]) =>
  timers.map((timer) => ({ type: 'cancel-timer' as const, timer }));

/** Euros, minor units. */
export const eur = (minor: number) => ({ minor, currency: 'EUR' });

/** A sale the gateway took and answered approved. */
export const approvedSale = () =>
  givenInputs(command(saleCommand()), acceptedResult(), answer('approved'));

/** A preauth the gateway took and answered approved (the hold in place). */
export const authorized = () =>
  givenInputs(command(preauthCommand()), acceptedResult(), answer('approved'));

/** `history` with the follow-up `cmd` (a capture, void or return) taken and approved. */
export const approvedFollowUp = (history: Scenario, cmd: PaymentCommand) =>
  history.and(command(cmd)).and(acceptedResult()).and(answer('approved'));
