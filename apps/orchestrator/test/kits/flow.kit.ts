/**
 * given/when/then over the flow contract (decide + evolve), for any flow whose sagas run one
 * gateway operation at a time (test support only).
 *
 *   panEligibilityWorld()
 *     .given(panEligibility(id))
 *     .when(eligibilityAnswer({ kind: 'unknown', reason: 'timeout' }))
 *     .then([{ type: 'pan-eligibility-outcome-unknown' }])
 *
 * A new flow's world is `flowWorld({ decide, evolve, initial, context, sagaOf, carryOut })`.
 *
 * The world keeps each saga's events as the runtime would (a rejected decision writes none),
 * resolves inputs made from the state (`(state, sagaId) => input`), and hands every effect to the
 * flow's `carryOut` (which may feed answers back, as the runtime does within its transaction).
 * Transfers carry out their effects with the payout kit's `moneyOutEffects` (held requests,
 * the daily budget shared with payouts).
 */
import type {
  AnyTransferCommand,
  GatewayClassification,
  GatewayResult,
  GatewayStatusReport,
  PanEligibilityEvent,
  SubjectOperation,
  TransferEvent,
} from '@payments/contracts';
import { PLACEHOLDER_SEALED_CARD } from '@payments/contracts/testing';
import type { FlowDecision } from '../../src/domain/decision';
import type { OperationInFlight } from '../../src/domain/gateway-operation';
import {
  decideCheck,
  evolveCheck,
  initialCheckState,
} from '../../src/flows/pan-eligibility/domain';
import type {
  CheckContext,
  CheckEffect,
  CheckInput,
  CheckState,
} from '../../src/flows/pan-eligibility/domain/model';
import { decideTransfer, evolveTransfer } from '../../src/flows/transfer/domain';
import {
  initialTransferState,
  type TransferContext,
  type TransferEffect,
  type TransferInput,
  type TransferState,
} from '../../src/flows/transfer/domain/model';
import { idSequence, T0 } from './card-payment.kit';
import {
  BudgetBook,
  type EffectSink,
  ENDPOINT,
  MERCHANT,
  moneyOutEffects,
  POLICY,
  uuid,
} from './payout.kit';

/** The state every one-operation flow shares: where it is, and the operation in flight. */
export type OperationState<Op extends SubjectOperation> =
  | { readonly status: 'initial'; readonly version: number }
  | {
      readonly status: string;
      readonly version: number;
      readonly inFlight?: OperationInFlight<Op>;
    };

type Versioned = { readonly version: number };

export type InputOrFn<Input, State> = Input | ((state: State, sagaId: string) => Input);

export interface FlowContract<Input, State, Event, Effect, Ctx> {
  readonly decide: (input: Input, state: State, ctx: Ctx) => FlowDecision<Event, Effect, string>;
  readonly evolve: (state: State, event: Event) => State;
  readonly initial: State;
  /** The decision context at `now` (ids and policy as the flow needs them). */
  readonly context: (now: string, ids: { next(): string }) => Ctx;
  /** The saga a plain input is about, when the test does not name it. */
  readonly sagaOf?: (input: Input) => string | undefined;
  /** Carries out an effect of saga `sagaId` (default: nothing). */
  readonly carryOut?: (effect: Effect, sagaId: string, world: EffectSink<Input>) => void;
}

export class FlowWorld<
  Input,
  State extends Versioned,
  Event extends { type: string },
  Effect,
  Ctx,
> implements EffectSink<Input> {
  readonly ids = idSequence(7000);
  readonly sagas = new Map<string, Event[]>();
  /** Gateway requests published (not status queries), in order. */
  readonly sent: Array<{ sagaId: string; operation: string; requestId: string }> = [];
  private last?: string;

  constructor(
    readonly flow: FlowContract<Input, State, Event, Effect, Ctx>,
    readonly now = T0,
  ) {}

  /** The saga last decided on (the one `state()`, `types()` and `when` default to). */
  get current(): string {
    if (this.last === undefined) throw new Error('which saga?');
    return this.last;
  }

  events(sagaId = this.last): Event[] {
    return sagaId === undefined ? [] : (this.sagas.get(sagaId) ?? []);
  }

  state(sagaId = this.last): State {
    return this.events(sagaId).reduce(this.flow.evolve, this.flow.initial);
  }

  types(sagaId = this.last): string[] {
    return this.events(sagaId).map((e) => e.type);
  }

  publish(sagaId: string, operation: string, requestId: string): void {
    this.sent.push({ sagaId, operation, requestId });
  }

  /** Operations published, in order (`sagaId`: only that saga's). */
  sentOperations(sagaId?: string): string[] {
    return this.sent
      .filter((s) => sagaId === undefined || s.sagaId === sagaId)
      .map((s) => s.operation);
  }

  /** Decides an input, keeps its events and carries out its effects; the decision. */
  apply(input: InputOrFn<Input, State>, sagaId?: string): FlowDecision<Event, Effect, string> {
    const id = this.sagaFor(input, sagaId);
    this.last = id;
    const before = this.state(id);
    const resolved =
      typeof input === 'function' ? (input as (s: State, id: string) => Input)(before, id) : input;
    const decision = this.flow.decide(resolved, before, this.flow.context(this.now, this.ids));
    if (decision.outcome !== 'rejected')
      this.sagas.set(id, [...this.events(id), ...decision.events]);
    for (const effect of decision.effects) this.flow.carryOut?.(effect, id, this);
    this.last = id;
    return decision;
  }

  private sagaFor(input: InputOrFn<Input, State>, sagaId?: string): string {
    const id =
      sagaId ?? (typeof input === 'function' ? undefined : this.flow.sagaOf?.(input)) ?? this.last;
    if (id === undefined) throw new Error('which saga?');
    return id;
  }

  /** Inputs as history; the world, to go on with `when`. */
  given(...inputs: Array<InputOrFn<Input, State>>): this {
    for (const input of inputs) this.apply(input);
    return this;
  }

  when(input: InputOrFn<Input, State>, sagaId?: string): FlowOutcome<Event, Effect, State> {
    const id = this.sagaFor(input, sagaId);
    const before = this.state(id);
    const decision = this.apply(input, id);
    return new FlowOutcome(before, decision, this.state(id));
  }
}

export class FlowOutcome<Event extends { type: string }, Effect, State extends Versioned> {
  constructor(
    readonly before: State,
    readonly decision: FlowDecision<Event, Effect, string>,
    readonly after: State,
  ) {}

  /** The emitted events match these (partially), in this order, and nothing else. */
  then(expected: ReadonlyArray<Partial<Event> & { type: Event['type'] }>): this {
    expect(this.decision.outcome).toBe('accepted');
    expect(this.decision.events).toMatchObject(expected);
    expect(this.decision.events).toHaveLength(expected.length);
    return this;
  }

  /** Refused with `code`: only the flow's command-rejected event, at the next version, no effects. */
  thenRejected(code: string): this {
    expect(this.decision.outcome).toBe('rejected');
    if (this.decision.outcome === 'rejected') expect(this.decision.rejection.code).toBe(code);
    expect(this.decision.events).toEqual([
      expect.objectContaining({ reason: code, version: this.before.version + 1 }),
    ]);
    expect(this.decision.events[0]?.type).toMatch(/command-rejected$/);
    expect(this.decision.effects).toEqual([]);
    return this;
  }

  thenIgnored(): this {
    expect(this.decision.outcome).toBe('ignored');
    expect(this.decision.events).toEqual([]);
    return this;
  }

  /** Exactly these effects, in this order (`expect.objectContaining` for the parts that matter). */
  thenEffects(expected: readonly unknown[]): this {
    expect(this.decision.effects).toEqual(expected);
    return this;
  }

  thenStatus(status: string): this {
    expect(this.after).toMatchObject({ status });
    return this;
  }
}

export function flowWorld<
  Input,
  State extends Versioned,
  Event extends { type: string },
  Effect,
  Ctx,
>(
  flow: FlowContract<Input, State, Event, Effect, Ctx>,
): FlowWorld<Input, State, Event, Effect, Ctx> {
  return new FlowWorld(flow);
}

// ---- gateway answers about the operation in flight -------------------------------------------------

const inFlightOf = <Op extends SubjectOperation>(state: OperationState<Op>) =>
  'inFlight' in state ? state.inFlight : undefined;

/** The send result of the operation in flight of saga `sagaId` (`operation` if none is). */
export function sendResult<Op extends SubjectOperation>(
  state: OperationState<Op>,
  sagaId: string,
  operation: Op,
  result: GatewayClassification,
): { kind: 'gateway-result'; result: GatewayResult } {
  const op = inFlightOf(state);
  return {
    kind: 'gateway-result',
    result: {
      requestId: op?.requestId ?? uuid(),
      paymentId: sagaId,
      operation: op?.operation ?? operation,
      attempt: 1,
      result,
      completedAt: T0,
    },
  };
}

/** A status reply about the operation in flight of saga `sagaId`; `about` as the edge names it. */
export function statusReply<Op extends SubjectOperation>(
  state: OperationState<Op>,
  sagaId: string,
  report: GatewayStatusReport,
  about: readonly Op[],
): { kind: 'gateway-result'; result: GatewayResult; about: readonly Op[] } {
  return {
    kind: 'gateway-result',
    result: {
      requestId: uuid(),
      paymentId: sagaId,
      operation: 'status',
      subjectRequestId: inFlightOf(state)?.requestId ?? uuid(),
      attempt: 1,
      result: { kind: 'accepted', report },
      completedAt: T0,
    },
    about,
  };
}

// ---- transfer ------------------------------------------------------------------------------------

/**
 * Transfers as the runtime runs them: each drawing on the daily payout budget of `book` (pass a
 * PayoutWorld's book to have payouts and transfers share it).
 */
export function transferWorld(book?: BudgetBook) {
  const world: FlowWorld<
    TransferInput,
    TransferState,
    TransferEvent,
    TransferEffect,
    TransferContext
  > = flowWorld<TransferInput, TransferState, TransferEvent, TransferEffect, TransferContext>({
    decide: decideTransfer,
    evolve: evolveTransfer,
    initial: initialTransferState,
    context: (now, ids) => ({ now, ids, policy: POLICY }),
    sagaOf: (input) =>
      input.kind !== 'command'
        ? undefined
        : input.command.type === 'payout-budget-answer'
          ? input.command.payoutId
          : input.command.transferId,
    carryOut: moneyOutEffects(
      () => shared,
      (command): TransferInput => ({ kind: 'command', command }),
    ),
  });
  const shared = book ?? new BudgetBook(world.ids, POLICY);
  return Object.assign(world, { book: shared });
}

export function transfer(
  transferId: string,
  type: AnyTransferCommand['type'] = 'transfer',
  minor = 1_500,
): TransferInput {
  const base = {
    commandId: uuid(),
    transferId,
    merchant: MERCHANT,
    occurredAt: T0,
    amount: { minor, currency: 'EUR' },
    sealedDestinationCard: PLACEHOLDER_SEALED_CARD,
  };
  return {
    kind: 'command',
    command:
      type === 'transfer'
        ? { type, ...base, sealedCard: PLACEHOLDER_SEALED_CARD }
        : { type, ...base },
  };
}

export const refreshTransfer = (transferId: string, endpointId = ENDPOINT): TransferInput => ({
  kind: 'command',
  command: {
    type: 'refresh-transfer-status',
    commandId: uuid(),
    transferId,
    merchant: { endpointId },
    occurredAt: T0,
  },
});

/** The send result of the transfer in flight. */
export const transferSent =
  (result: GatewayClassification) =>
  (state: TransferState, transferId: string): TransferInput =>
    sendResult(state, transferId, 'transfer', result);

/** A status reply about the transfer in flight (the edge names both transfer operations). */
export const transferStatus =
  (status: 'approved' | 'declined') =>
  (state: TransferState, transferId: string): TransferInput =>
    statusReply(state, transferId, { status, gatewayOrderId: 'T-1' }, [
      'transfer',
      'transfer-by-ref',
    ]);

// ---- pan-eligibility -----------------------------------------------------------------------------

export function panEligibilityWorld() {
  return flowWorld<CheckInput, CheckState, PanEligibilityEvent, CheckEffect, CheckContext>({
    decide: decideCheck,
    evolve: evolveCheck,
    initial: initialCheckState,
    context: (now, ids) => ({ now, ids, policy: POLICY }),
    sagaOf: (input) => (input.kind === 'command' ? input.command.checkId : undefined),
  });
}

export const panEligibility = (checkId: string, cardRefId = '123456'): CheckInput => ({
  kind: 'command',
  command: {
    type: 'pan-eligibility',
    commandId: uuid(),
    checkId,
    merchant: MERCHANT,
    occurredAt: T0,
    cardRefId,
  },
});

/** The gateway's answer to the check in flight. */
export const eligibilityAnswer =
  (result: GatewayClassification) =>
  (state: CheckState, checkId: string): CheckInput =>
    sendResult(state, checkId, 'pan-eligibility', result);
