import type {
  GatewayCallback,
  GatewayResult,
  StatusCheckHint,
  SubjectOperation,
} from '@payments/contracts';
import { addMs, type FlowDecision, type KeepSooner } from '../domain/decision';
import {
  DEFAULT_RESULT_DEADLINE_MS,
  RESULT_DEADLINE_TIMER,
  type ResultDeadlineTimer,
} from '../domain/gateway-operation/operation-model';
import type { Decision, DecisionContext, Flow, RuntimeEffect, SagaEvent, SagaInput } from './flow';

/**
 * One way to bind a flow whose decider drives gateway operations (card payments, payouts,
 * transfers …) to the runtime: runtime inputs become the decider's inputs (gateway vocabulary
 * normalised at the edge), the decider's timer effects become the runtime's keyed timers, and its
 * decision is handed back in the runtime's vocabulary. A flow states only what is its own.
 */

/** The inputs of a gateway flow's decider, with its own command, timer and operation types. */
export type GatewayFlowInput<Command, Timer, Op extends string> =
  | { kind: 'command'; command: Command }
  /** `about`: for a status reply, the operations its transaction type can name. */
  | { kind: 'gateway-result'; result: GatewayResult; about?: readonly Op[] }
  /** `about`: the operations the callback's transaction type can name; undefined: none. */
  | { kind: 'callback'; callback: GatewayCallback; about?: readonly Op[] }
  | { kind: 'status-check-hint'; hint: StatusCheckHint }
  | { kind: 'timer-fired'; timer: Timer };

/**
 * The gateway's transaction types (a callback's `type`, a status reply's `transaction-type`)
 * normalised into a flow's operations, so the domain never matches gateway vocabulary. An unknown
 * type names none of the flow's operations (an empty list: it is about something else).
 */
export interface TransactionTypes<Op extends string> {
  readonly named: (transactionType: string | undefined) => readonly Op[] | undefined;
  /** A verified callback as the decider's input, with the operations it names. */
  readonly callbackInput: (callback: GatewayCallback) => GatewayFlowInput<never, never, Op>;
  /** A gateway result as the decider's input; a status reply says which operations it names. */
  readonly resultInput: (result: GatewayResult) => GatewayFlowInput<never, never, Op>;
}

export function transactionTypes<Op extends string>(
  table: Readonly<Record<string, readonly Op[]>>,
): TransactionTypes<Op> {
  const named = (transactionType: string | undefined) =>
    transactionType === undefined ? undefined : (table[transactionType.toLowerCase()] ?? []);
  return {
    named,
    callbackInput: (callback) => {
      const about = named(callback.report.transactionType);
      return about === undefined
        ? { kind: 'callback', callback }
        : { kind: 'callback', callback, about };
    },
    resultInput: (result) => {
      if (result.operation !== 'status' || result.result.kind !== 'accepted')
        return { kind: 'gateway-result', result };
      const about = named(result.result.report?.transactionType);
      return about === undefined
        ? { kind: 'gateway-result', result }
        : { kind: 'gateway-result', result, about };
    },
  };
}

/**
 * A decider's timer effects: upsert the timer of a kind — the operation's own when it names its
 * request (`requestId`), else the saga's; `keepSooner`: unless one pending is due no later — or
 * drop every timer of a kind.
 */
export type TimerEffect<Timer extends { kind: string }> =
  | { type: 'schedule-timer'; timer: Timer; at: string; keepSooner?: KeepSooner }
  | { type: 'cancel-timer'; timer: Timer['kind'] };

/** The gateway and timer effects every gateway flow's decider has, in the runtime's vocabulary. */
export function runtimeEffectOf<Timer extends { kind: string }>(
  effect:
    | TimerEffect<Timer>
    | Extract<
        RuntimeEffect,
        {
          type:
            | 'send-gateway-request'
            | 'resend-gateway-request'
            | 'publish-held-request'
            | 'hasten-resend';
        }
      >,
): RuntimeEffect {
  switch (effect.type) {
    case 'send-gateway-request':
    case 'resend-gateway-request':
    case 'publish-held-request':
    case 'hasten-resend':
      return effect;
    case 'schedule-timer': {
      const { requestId } = effect.timer as { requestId?: unknown };
      return {
        type: 'set-timer',
        kind: effect.timer.kind,
        at: effect.at,
        payload: effect.timer,
        ...(typeof requestId === 'string' ? { scope: requestId } : {}),
        ...(effect.keepSooner === undefined ? {} : { keepSooner: effect.keepSooner }),
      };
    }
    case 'cancel-timer':
      return { type: 'cancel-timer', kind: effect.timer };
    default: {
      const never: never = effect;
      throw new Error(`unhandled effect ${JSON.stringify(never)}`);
    }
  }
}

export interface GatewayFlowSpec<
  State,
  Event extends SagaEvent,
  Command,
  Timer extends { kind: string },
  Op extends SubjectOperation,
  Effect,
> extends Omit<Flow<State, Event>, 'decide'> {
  /** The timer kinds this flow's decider owns (others are obsolete timers: ignored). */
  readonly timerKinds: readonly Timer['kind'][];
  readonly operations: TransactionTypes<Op>;
  decide(
    input: GatewayFlowInput<Command, Timer, Op>,
    state: State,
    ctx: DecisionContext,
  ): FlowDecision<Event, Effect, string>;
  /** The decider's effects in the runtime's vocabulary ({@link runtimeEffectOf} for the common ones). */
  readonly effect: (effect: Effect, ctx: DecisionContext) => RuntimeEffect;
  /**
   * How long a send may go without its result (undefined: {@link DEFAULT_RESULT_DEADLINE_MS});
   * only for a flow whose `timerKinds` hold `result-deadline` ({@link withResultDeadlines}).
   */
  readonly resultDeadlineMs?: number;
}

/**
 * Every request a decision publishes gets the deadline of its result, the request's own timer
 * (issue 32 item 8): a first send, a held request published, a resend (from when it may go). A
 * result of the request drops its deadline, before anything the decision arms again. Status
 * queries have none: the poll timer asks again.
 */
export function withResultDeadlines(
  input: SagaInput,
  effects: readonly RuntimeEffect[],
  now: string,
  deadlineMs: number,
): RuntimeEffect[] {
  const deadline = (requestId: string, attempt: number, from: string): RuntimeEffect => {
    const timer: ResultDeadlineTimer = { kind: RESULT_DEADLINE_TIMER, requestId, attempt };
    return {
      type: 'set-timer',
      kind: RESULT_DEADLINE_TIMER,
      scope: requestId,
      at: addMs(from, deadlineMs),
      payload: timer,
    };
  };
  const armed = effects.flatMap((effect): RuntimeEffect[] => {
    switch (effect.type) {
      case 'send-gateway-request':
        return effect.held === true || effect.request.operation === 'status'
          ? [effect]
          : [effect, deadline(effect.request.requestId, effect.request.attempt, now)];
      case 'publish-held-request':
        // A held request is published as it was written: its first attempt.
        return [effect, deadline(effect.requestId, 1, now)];
      case 'resend-gateway-request':
        return [
          effect,
          deadline(
            effect.requestId,
            effect.attempt,
            Date.parse(effect.notBefore) > Date.parse(now) ? effect.notBefore : now,
          ),
        ];
      case 'cancel-timer':
      case 'advance-timer':
      case 'hasten-resend':
      case 'set-timer':
      case 'start-saga':
        return [effect];
      default: {
        const never: never = effect;
        throw new Error(`unhandled effect ${JSON.stringify(never)}`);
      }
    }
  });
  if (input.kind !== 'gateway-result' || input.result.operation === 'status') return armed;
  return [
    { type: 'cancel-timer', kind: RESULT_DEADLINE_TIMER, scope: input.result.requestId },
    ...armed,
  ];
}

/** A gateway flow under the runtime's contract (see {@link GatewayFlowSpec}). */
export function gatewayFlow<
  State,
  Event extends SagaEvent,
  Command,
  Timer extends { kind: string },
  Op extends SubjectOperation,
  Effect,
>(spec: GatewayFlowSpec<State, Event, Command, Timer, Op, Effect>): Flow<State, Event> {
  const timerKinds: ReadonlySet<string> = new Set(spec.timerKinds);
  const toDomainInput = (input: SagaInput): GatewayFlowInput<Command, Timer, Op> | undefined => {
    switch (input.kind) {
      case 'command':
        // Validated against the contracts' schema by the command catalogue before routing.
        return { kind: 'command', command: input.command.body as Command };
      case 'gateway-result':
        return spec.operations.resultInput(input.result);
      case 'callback':
        return spec.operations.callbackInput(input.callback);
      case 'status-check-hint':
        return { kind: 'status-check-hint', hint: input.hint };
      case 'timer':
        // A timer row holds the payload the decider scheduled under this kind.
        return timerKinds.has(input.timer.kind)
          ? { kind: 'timer-fired', timer: input.timer.payload as Timer }
          : undefined;
      default: {
        const never: never = input;
        throw new Error(`unhandled input ${JSON.stringify(never)}`);
      }
    }
  };
  const { timerKinds: _kinds, operations: _operations, effect, resultDeadlineMs, ...flow } = spec;
  const deadlines = timerKinds.has(RESULT_DEADLINE_TIMER);
  const runtimeEffects = (input: SagaInput, effects: readonly Effect[], ctx: DecisionContext) => {
    const mapped = effects.map((e) => effect(e, ctx));
    return deadlines
      ? withResultDeadlines(input, mapped, ctx.now, resultDeadlineMs ?? DEFAULT_RESULT_DEADLINE_MS)
      : mapped;
  };
  return {
    ...flow,
    decide(input, state, ctx): Decision<Event, RuntimeEffect> {
      const domainInput = toDomainInput(input);
      if (domainInput === undefined)
        return { outcome: 'ignored', reason: 'TIMER_OBSOLETE', events: [], effects: [] };
      const decision = spec.decide(domainInput, state, ctx);
      switch (decision.outcome) {
        case 'accepted':
        case 'ignored':
          return { ...decision, effects: runtimeEffects(input, decision.effects, ctx) };
        case 'rejected':
          return decision;
        default: {
          const never: never = decision;
          throw new Error(`unhandled decision ${JSON.stringify(never)}`);
        }
      }
    },
  };
}

/**
 * The row projection and resend rule of a saga that performs one gateway operation (a transfer,
 * a PAN-eligibility check): settled, and no resend wanted, once the status is no longer
 * `pendingStatus`.
 */
export function singleOperationSaga<
  State extends
    | { status: 'initial' }
    | {
        status: string;
        merchant: { endpointId: string };
        clientOrderId: string;
        inFlight?: { requestId: string };
      },
>(kind: string, pendingStatus: string): Pick<Flow<State>, 'project' | 'resendWanted'> {
  return {
    project: (state) =>
      !('merchant' in state)
        ? { status: state.status, kind: null, settled: false }
        : {
            status: state.status,
            kind,
            endpointId: state.merchant.endpointId,
            clientOrderId: state.clientOrderId,
            // The request's sealed cards are needed only until the operation has its outcome.
            settled: state.status !== pendingStatus,
          },
    resendWanted: (state, requestId) =>
      state.status === pendingStatus &&
      'inFlight' in state &&
      state.inFlight?.requestId === requestId,
  };
}
