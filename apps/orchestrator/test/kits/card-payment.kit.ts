/**
 * given/when/then for the payment decider (test support only; not exported from the domain index).
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
  RejectionCode,
} from '@payments/contracts';
import {
  DEFAULT_POLICY,
  type Decision,
  type DecisionContext,
  type IgnoreReason,
  type PaymentPolicy,
} from '../../src/flows/card-payment/domain/decision';
import { decide } from '../../src/flows/card-payment/domain/decide';
import type { Effect } from '../../src/flows/card-payment/domain/effects';
import { evolve, fold } from '../../src/flows/card-payment/domain/evolve';
import type { PaymentInput, Timer } from '../../src/flows/card-payment/domain/inputs';
import { initialState, type PaymentState } from '../../src/flows/card-payment/domain/state';
import { callbackInput, gatewayResultInput } from '../../src/flows/card-payment/gateway-vocabulary';

export const T0 = '2025-03-01T10:00:00.000Z';

export function at(offsetMs: number): string {
  return new Date(Date.parse(T0) + offsetMs).toISOString();
}

/** Deterministic uuids: 10000000-0000-4000-8000-<n>. */
export function idSequence(start = 1): { next(): string } {
  let n = start;
  return { next: () => `10000000-0000-4000-8000-${(n++).toString(16).padStart(12, '0')}` };
}

export function testContext(
  now = T0,
  policy: PaymentPolicy = DEFAULT_POLICY,
  ids = idSequence(),
): DecisionContext {
  return { now, ids, policy };
}

/** An input, or how to make it from the state and the time it is decided at. */
type InputOrFn = PaymentInput | ((state: PaymentState, now: string) => PaymentInput);

const resolve = (input: InputOrFn, state: PaymentState, now: string) =>
  typeof input === 'function' ? input(state, now) : input;

export class Scenario {
  constructor(
    readonly events: PaymentEvent[],
    readonly ids = idSequence(1000),
  ) {}

  get state(): PaymentState {
    return fold(initialState, this.events);
  }

  /** Applies more inputs as history (their events are appended). */
  and(input: InputOrFn, now = T0, policy: PaymentPolicy = DEFAULT_POLICY): Scenario {
    const state = this.state;
    const decision = decide(resolve(input, state, now), state, testContext(now, policy, this.ids));
    return new Scenario([...this.events, ...decision.events], this.ids);
  }

  when(input: InputOrFn, now = T0, policy: PaymentPolicy = DEFAULT_POLICY): Outcome {
    const before = this.state;
    const decision = decide(
      resolve(input, before, now),
      before,
      testContext(now, policy, this.ids),
    );
    return new Outcome(before, decision);
  }
}

export class Outcome {
  readonly after: PaymentState;

  constructor(
    readonly before: PaymentState,
    readonly decision: Decision,
  ) {
    this.after = decision.events.reduce(evolve, before);
  }

  /** The emitted events match these (partially), in this order, and nothing else. */
  then(expected: ReadonlyArray<Partial<PaymentEvent> & { type: PaymentEvent['type'] }>): this {
    expect(this.decision.outcome).toBe('accepted');
    expect(this.decision.events).toHaveLength(expected.length);
    this.decision.events.forEach((event, i) => expect(event).toMatchObject(expected[i]));
    return this;
  }

  thenRejected(code: RejectionCode): this {
    expect(this.decision.outcome).toBe('rejected');
    if (this.decision.outcome !== 'rejected') return this;
    expect(this.decision.rejection.code).toBe(code);
    expect(this.decision.events).toEqual([
      expect.objectContaining({
        type: 'command-rejected',
        reason: code,
        version: this.before.version + 1,
      }),
    ]);
    expect(this.decision.effects).toEqual([]);
    return this;
  }

  thenIgnored(reason?: IgnoreReason): this {
    expect(this.decision.outcome).toBe('ignored');
    if (reason !== undefined && this.decision.outcome === 'ignored')
      expect(this.decision.reason).toBe(reason);
    expect(this.decision.events).toEqual([]);
    return this;
  }

  thenEffects(expected: ReadonlyArray<{ type: Effect['type'] } & Record<string, unknown>>): this {
    expect(this.decision.effects).toHaveLength(expected.length);
    this.decision.effects.forEach((effect, i) => expect(effect).toMatchObject(expected[i]));
    return this;
  }

  thenState(expected: Partial<PaymentState>): this {
    const absent = Object.keys(expected).filter(
      (k) => expected[k as keyof PaymentState] === undefined,
    );
    for (const key of absent) expect(this.after[key as keyof PaymentState]).toBeUndefined();
    expect(this.after).toMatchObject(
      Object.fromEntries(Object.entries(expected).filter(([, v]) => v !== undefined)),
    );
    return this;
  }
}

export function given(...events: PaymentEvent[]): Scenario {
  return new Scenario(events);
}

export function givenInputs(...inputs: InputOrFn[]): Scenario {
  return inputs.reduce((s, input) => s.and(input), new Scenario([]));
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
  (report: GatewayStatusReport, answeredAt?: string) =>
  (state: PaymentState, now: string = T0): PaymentInput =>
    gatewayResultInput({
      requestId: '10000000-0000-4000-8000-00000000abcd',
      paymentId: state.status === 'initial' ? '' : state.paymentId,
      operation: 'status',
      subjectRequestId: state.inFlight?.requestId ?? '10000000-0000-4000-8000-ffffffffffff',
      attempt: 1,
      result: { kind: 'accepted', report },
      completedAt: answeredAt ?? now,
    });

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
      report: {
        status,
        gatewayOrderId: 'gw-777',
        ...(state.inFlight ? { transactionType: GATEWAY_TYPE[state.inFlight.operation] } : {}),
        ...extra,
      },
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
