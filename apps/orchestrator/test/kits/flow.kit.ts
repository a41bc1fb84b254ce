/**
 * given/when/then over the flow contract (decide + evolve), the one kit every flow's specs use
 * (test support only). A flow's kit names its contract (`FlowContract`) and its input builders;
 * everything else is here:
 *
 *   - `FlowHistory`: one saga's history, immutable, as the card-payment and schedule specs tell it
 *     (`given(...events)`, `.and(input, now)`, `.when(input, now).then([...])`);
 *   - `FlowWorld`: several sagas deciding at once, their effects carried out by the flow's
 *     `carryOut` (which may feed answers back, as the runtime does within its transaction), for
 *     flows whose sagas talk to each other (payouts, transfers and their daily budget);
 *   - `FlowOutcome`: what a decision is checked for (`then`, `thenRejected`, `thenIgnored`, …).
 *
 * Inputs made from the state are functions `(state, now, sagaId) => input`: they are resolved
 * when decided, against the state and the time of that decision.
 */
import type {
  GatewayClassification,
  GatewayResult,
  GatewayStatusReport,
  SubjectOperation,
} from '@payments/contracts';
import type { FlowDecision } from '../../src/domain/decision';
import type { OperationInFlight } from '../../src/domain/gateway-operation/gateway-operation';
import { idSequence, T0, uuid } from './base.kit';

type Versioned = { readonly version: number };
type Ids = { next(): string };

/** The types a flow's decider works with. */
export interface FlowTypes {
  input: unknown;
  state: Versioned;
  event: { type: string };
  effect: unknown;
  context: unknown;
  policy: unknown;
}

export type InputOrFn<F extends FlowTypes> =
  F['input'] | ((state: F['state'], now: string, sagaId: string) => F['input']);

/** An effect as a test names it: its type (one of the flow's) and the fields that matter. */
type EffectLike<F extends FlowTypes> = (F['effect'] extends { type: infer T }
  ? { type: T }
  : unknown) &
  Record<string, unknown>;

export type Decided<F extends FlowTypes> = FlowDecision<F['event'], F['effect'], string>;

/** What carrying out an effect may do to the world: publish a request, decide an answer. */
export interface EffectSink<Input> {
  readonly now: string;
  publish(sagaId: string, operation: string, requestId: string): void;
  apply(input: Input, sagaId: string): unknown;
}

export interface FlowContract<F extends FlowTypes> {
  readonly decide: (input: F['input'], state: F['state'], ctx: F['context']) => Decided<F>;
  readonly evolve: (state: F['state'], event: F['event']) => F['state'];
  readonly initial: F['state'];
  /** The decision context at `now` under `policy` (ids as the flow needs them). */
  readonly context: (now: string, ids: Ids, policy: F['policy']) => F['context'];
  /** When decisions are taken unless a test names the time (default T0). */
  readonly now?: string;
  /** The policy decisions are taken under unless a test names another. */
  readonly policy: F['policy'];
  /** The type of the flow's command-rejected event. */
  readonly rejected: F['event']['type'];
  /** An ignored input never has effects in this flow (a card payment's may ask the gateway). */
  readonly quietWhenIgnored?: boolean;
  /** The saga a plain input is about, when the test does not name it. */
  readonly sagaOf?: (input: F['input']) => string | undefined;
  /** Carries out an effect of saga `sagaId` in a `FlowWorld` (default: nothing). */
  readonly carryOut?: (effect: F['effect'], sagaId: string, world: EffectSink<F['input']>) => void;
}

/** Decides `input` (made from `state` if it is a function) at `now`. */
function decideOn<F extends FlowTypes>(
  flow: FlowContract<F>,
  input: InputOrFn<F>,
  state: F['state'],
  at: { now: string; sagaId: string; ids: Ids; policy: F['policy'] },
): Decided<F> {
  const resolved =
    typeof input === 'function'
      ? (input as (s: F['state'], now: string, id: string) => F['input'])(state, at.now, at.sagaId)
      : input;
  return flow.decide(resolved, state, flow.context(at.now, at.ids, at.policy));
}

// ---- one saga's history -----------------------------------------------------------------------

/** One saga's events so far; `and` and `when` decide on it and leave it as it was. */
export class FlowHistory<F extends FlowTypes> {
  constructor(
    readonly flow: FlowContract<F>,
    readonly events: ReadonlyArray<F['event']> = [],
    readonly ids: Ids = idSequence(1000),
    readonly policy: F['policy'] = flow.policy,
  ) {}

  get state(): F['state'] {
    return this.events.reduce(this.flow.evolve, this.flow.initial);
  }

  /** The history with `input`'s events appended (decided at `now`). */
  and(input: InputOrFn<F>, now = this.flow.now ?? T0, policy = this.policy): FlowHistory<F> {
    const decision = this.decide(input, now, policy);
    return new FlowHistory(this.flow, [...this.events, ...decision.events], this.ids, this.policy);
  }

  when(input: InputOrFn<F>, now = this.flow.now ?? T0, policy = this.policy): FlowOutcome<F> {
    const before = this.state;
    const decision = this.decide(input, now, policy);
    return new FlowOutcome(this.flow, before, decision);
  }

  private decide(input: InputOrFn<F>, now: string, policy: F['policy']): Decided<F> {
    const sagaId = 'unnamed';
    return decideOn(this.flow, input, this.state, { now, sagaId, ids: this.ids, policy });
  }
}

// ---- several sagas, their effects carried out ------------------------------------------------------

export class FlowWorld<F extends FlowTypes> implements EffectSink<F['input']> {
  readonly sagas = new Map<string, Array<F['event']>>();
  /** Gateway requests published (not status queries), in order. */
  readonly sent: Array<{ sagaId: string; operation: string; requestId: string }> = [];
  private last?: string;

  constructor(
    readonly flow: FlowContract<F>,
    readonly ids: Ids = idSequence(7000),
    /** When the world decides (a test may move it). */
    public now = flow.now ?? T0,
    readonly policy: F['policy'] = flow.policy,
  ) {}

  /** The saga last decided on (the one `state()`, `types()` and `when` default to). */
  get current(): string {
    if (this.last === undefined) throw new Error('which saga?');
    return this.last;
  }

  events(sagaId = this.last): Array<F['event']> {
    return sagaId === undefined ? [] : (this.sagas.get(sagaId) ?? []);
  }

  state(sagaId = this.last): F['state'] {
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
  apply(input: InputOrFn<F>, sagaId?: string): Decided<F> {
    const id = this.sagaFor(input, sagaId);
    this.last = id;
    const decision = decideOn(this.flow, input, this.state(id), {
      now: this.now,
      sagaId: id,
      ids: this.ids,
      policy: this.policy,
    });
    if (decision.outcome !== 'rejected')
      this.sagas.set(id, [...this.events(id), ...decision.events]);
    for (const effect of decision.effects) this.flow.carryOut?.(effect, id, this);
    this.last = id;
    return decision;
  }

  private sagaFor(input: InputOrFn<F>, sagaId?: string): string {
    const id =
      sagaId ?? (typeof input === 'function' ? undefined : this.flow.sagaOf?.(input)) ?? this.last;
    if (id === undefined) throw new Error('which saga?');
    return id;
  }

  /** Inputs as history; the world, to go on with `when`. */
  given(...inputs: Array<InputOrFn<F>>): this {
    for (const input of inputs) this.apply(input);
    return this;
  }

  when(input: InputOrFn<F>, sagaId?: string): FlowOutcome<F> {
    const id = this.sagaFor(input, sagaId);
    const before = this.state(id);
    return new FlowOutcome(this.flow, before, this.apply(input, id));
  }
}

// ---- what a decision is checked for ----------------------------------------------------------------

export class FlowOutcome<F extends FlowTypes> {
  readonly after: F['state'];

  constructor(
    readonly flow: FlowContract<F>,
    readonly before: F['state'],
    readonly decision: Decided<F>,
  ) {
    this.after = decision.events.reduce(flow.evolve, before);
  }

  /** Accepted; the emitted events match these (partially), in this order, and nothing else. */
  then(expected: ReadonlyArray<Partial<F['event']> & { type: F['event']['type'] }>): this {
    expect(this.decision.outcome).toBe('accepted');
    expect(this.decision.events).toHaveLength(expected.length);
    this.decision.events.forEach((event, i) => expect(event).toMatchObject(expected[i] ?? {}));
    return this;
  }

  /** Refused with `code`: only the flow's command-rejected event, at the next version, no effects. */
  thenRejected(code: string): this {
    expect(this.decision.outcome).toBe('rejected');
    if (this.decision.outcome === 'rejected') expect(this.decision.rejection.code).toBe(code);
    expect(this.decision.events).toEqual([
      expect.objectContaining({
        type: this.flow.rejected,
        reason: code,
        version: this.before.version + 1,
      }),
    ]);
    expect(this.decision.effects).toEqual([]);
    return this;
  }

  /**
   * Ignored (for `reason`, when given): no event; no effect either where the flow ignores without
   * acting (`quietWhenIgnored`), else its effects are checked with `thenEffects`.
   */
  thenIgnored(reason?: string): this {
    expect(this.decision.outcome).toBe('ignored');
    if (reason !== undefined && this.decision.outcome === 'ignored')
      expect(this.decision.reason).toBe(reason);
    expect(this.decision.events).toEqual([]);
    if (this.flow.quietWhenIgnored === true) expect(this.decision.effects).toEqual([]);
    return this;
  }

  /** These effects (each matching partially), in this order, and nothing else. */
  thenEffects(expected: ReadonlyArray<EffectLike<F>>): this {
    expect(this.decision.effects).toHaveLength(expected.length);
    this.decision.effects.forEach((effect, i) => expect(effect).toMatchObject(expected[i] ?? {}));
    return this;
  }

  /** Exactly these effects, in this order (`expect.objectContaining` for the parts that matter). */
  thenEffectsEqual(expected: readonly unknown[]): this {
    expect(this.decision.effects).toEqual(expected);
    return this;
  }

  thenStatus(status: string): this {
    expect(this.after).toMatchObject({ status });
    return this;
  }

  /** The state after matches `expected`; a key given as undefined must be absent. */
  thenState(expected: Partial<F['state']>): this {
    const entries = Object.entries(expected);
    for (const [key] of entries.filter(([, v]) => v === undefined))
      expect((this.after as Record<string, unknown>)[key]).toBeUndefined();
    expect(this.after).toMatchObject(
      Object.fromEntries(entries.filter(([, v]) => v !== undefined)),
    );
    return this;
  }
}

// ---- gateway answers about the operation in flight -------------------------------------------------

/** The state every one-operation flow shares: where it is, and the operation in flight. */
export type OperationState<Op extends SubjectOperation> =
  | { readonly status: 'initial'; readonly version: number }
  | {
      readonly status: string;
      readonly version: number;
      readonly inFlight?: OperationInFlight<Op>;
    };

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

/**
 * A gateway answer names the amount, as the gateway's status replies and callbacks do: unless
 * `report` says otherwise (an `amount` key, even undefined), the saga's own amount when it has one.
 */
export function withAskedAmount<R extends Pick<GatewayStatusReport, 'amount'>>(
  report: R,
  state: object,
): R {
  if ('amount' in report || !('amount' in state)) return report;
  const amount = (state as { amount?: unknown }).amount;
  return typeof amount === 'object' && amount !== null && 'minor' in amount
    ? { ...report, amount: amount as GatewayStatusReport['amount'] }
    : report;
}

/** A status reply about the operation in flight of saga `sagaId`; `about` as the edge names it. */
export function statusReply<Op extends SubjectOperation>(
  state: OperationState<Op>,
  sagaId: string,
  given: GatewayStatusReport,
  about: readonly Op[],
): { kind: 'gateway-result'; result: GatewayResult; about: readonly Op[] } {
  const report = withAskedAmount(given, state);
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
