import type {
  GatewayCallback,
  GatewayResult,
  MerchantRef,
  PayerAction,
  RejectionCode,
  StatusCheckHint,
  SubjectOperation,
  UnknownConcern,
} from '@payments/contracts';
import { type Draft, type FlowDecision, type Rejection, stampDrafts } from '../decision';
import {
  inFlight,
  type OperationContext,
  type OperationEffect,
  type OperationInFlight,
  type OperationInput,
  type OperationRules,
  type OperationTimer,
  type OperationVocabulary,
  operationDecision,
  OPERATION_TIMER_KINDS,
  orderOf,
  type OrderFacts,
  reportError,
  withOperation,
} from './gateway-operation';
import {
  decisionOf,
  answerAfterDecision,
  askAboutDecided,
  type Contradiction,
  type DecidedOperation,
  type DecisionVocabulary,
  type OperationDecision,
  settleByDecision,
} from './decided-operation';

/**
 * The decider kit of a saga whose gateway operations run one at a time (transfer,
 * pan-eligibility, payouts, card payments): its inputs, its stamped decisions, the lifecycle
 * events of its operation in flight (their names from the contracts' `operationLifecycle`: a
 * prefix and the shared suffixes) and how its state follows them. A flow supplies only what is
 * its own: its commands → requests, its event prefix, its success and its terminal states. Which
 * answer settles which request stays in gateway-operation.ts, never here.
 */

/** Everything such a decider reacts to: its commands, and the inputs about its operation. */
export type SagaOperationInput<Command, Op extends SubjectOperation, Timer = OperationTimer> =
  | { kind: 'command'; command: Command }
  /** `about`: for a status reply, the operations its transaction type names (edge-normalised). */
  | { kind: 'gateway-result'; result: GatewayResult; about?: readonly Op[] }
  | { kind: 'callback'; callback: GatewayCallback; about?: readonly Op[] }
  | { kind: 'status-check-hint'; hint: StatusCheckHint }
  | { kind: 'timer-fired'; timer: Timer };

/** Which request an operation's event is about (every lifecycle event carries it). */
export function operationRef<Op extends SubjectOperation>(op: OperationInFlight<Op>) {
  return { commandId: op.commandId, operation: op.operation, requestId: op.requestId } as const;
}

/**
 * A flow's decisions stamped as its events: the saga id under `idField`, versions continuing the
 * state's. A refused command is its `<prefix>command-rejected` event (every flow family's, by the
 * contracts' `operationLifecycle`).
 */
export function sagaDecisions<Event, IdField extends string>(idField: IdField, prefix: string) {
  const stamp = (
    state: { readonly version: number },
    sagaId: string,
    now: string,
    drafts: readonly Draft<Event, IdField>[],
  ): Event[] =>
    // A computed key widens to string: it is exactly the IdField given.
    stampDrafts<Event, IdField>(
      state.version,
      { [idField]: sagaId } as Record<IdField, string>,
      now,
      drafts,
    );
  return {
    stamp,
    accepted: <Effect>(
      state: { readonly version: number },
      sagaId: string,
      now: string,
      drafts: readonly Draft<Event, IdField>[],
      effects: Effect[],
    ): FlowDecision<Event, Effect> => ({
      outcome: 'accepted',
      events: stamp(state, sagaId, now, drafts),
      effects,
    }),
    rejected: <Effect>(
      state: { readonly version: number },
      sagaId: string,
      now: string,
      command: { readonly commandId: string; readonly type: string },
      rejection: Rejection,
    ): FlowDecision<Event, Effect> => ({
      outcome: 'rejected',
      rejection,
      events: stamp(state, sagaId, now, [
        // The contracts give every family this one command-rejected shape under its prefix.
        {
          type: `${prefix}command-rejected`,
          commandId: command.commandId,
          commandType: command.type,
          reason: rejection.code,
          message: rejection.message,
        } as unknown as Draft<Event, IdField>,
      ]),
      effects: [],
    }),
  };
}

/** A refusal as the kit's `rejected` takes it. */
export const refusal = (code: RejectionCode, message: string): Rejection => ({ code, message });

/**
 * The lifecycle events of an operation in flight under a flow's prefix (`transfer-`, `payout-`,
 * none for card payments): accepted by the gateway, outcome unknown, resent after no trace,
 * declined and failed (both followed by `ended`, e.g. a budget released), and, with
 * `payerAction`, the payer's action required (a flow without it never announces a redirect).
 * The flow adds what is its own: `opensOrder`, its success, any override.
 */
export function lifecycleVocabulary<O extends OperationInFlight, D, E>(
  prefix: string,
  options: { readonly ended?: E[]; readonly payerAction?: boolean } = {},
): Pick<
  OperationVocabulary<O, D, E>,
  | 'acceptedByGateway'
  | 'actionRequired'
  | 'outcomeUnknown'
  | 'operationResent'
  | 'declined'
  | 'failed'
> &
  DecisionVocabulary<O, D, E> & {
    caseReopened(decided: DecidedOperation, contradiction: Contradiction): D;
  } {
  const ended = options.ended ?? [];
  // The contracts name these events `${prefix}<suffix>` with the operation's ref and these fields.
  const draft = (suffix: string, op: O, fields: object) =>
    ({ type: `${prefix}${suffix}`, ...operationRef(op), ...fields }) as D;
  return {
    acceptedByGateway: (op, facts) => draft('accepted-by-gateway', op, facts),
    ...(options.payerAction === true
      ? { actionRequired: (op: O, action: PayerAction) => draft('action-required', op, { action }) }
      : {}),
    outcomeUnknown: (op, facts) => draft('outcome-unknown', op, facts),
    operationResent: (op, attempt, unknownSince) =>
      draft('operation-resent', op, { attempt, unknownSince }),
    declined: (report, op) => ({
      drafts: [draft('declined', op, reportError(report))],
      effects: ended,
    }),
    failed: (op, why) => ({ drafts: [draft('failed', op, why)], effects: ended }),
    // A decision of two people (a case): its own event; "not done" ends it like a failure.
    settledByDecision: (op, decision) => draft('settled-by-decision', op, decision),
    decidedEffects: (_op, decision) => (decision.decision === 'not-done' ? ended : []),
    caseReopened: (decided, contradiction) =>
      ({
        type: `${prefix}case-reopened`,
        commandId: decided.caseId,
        operation: decided.operation,
        requestId: decided.requestId,
        caseId: decided.caseId,
        decision: decided.decision,
        ...contradiction,
        alert: true,
      }) as D,
  };
}

/** The fields of a `<prefix>settle-by-decision` command (the contracts' DECISION_FIELDS). */
export type SettleByDecisionFields = OperationDecision & {
  readonly type: string;
  readonly commandId: string;
};

/** Whether a command is a family's `<prefix>settle-by-decision`. */
export function isSettleByDecision(command: { readonly type: string }): boolean {
  return command.type.endsWith('settle-by-decision');
}

/**
 * The case service's approved decision, decided for any saga that runs one operation at a time by
 * the one shared rule (decided-operation.ts): `<prefix>settled-by-decision` (with the flow's
 * `decidedEffects`, e.g. a payout's reservation released when not done), or its refusal.
 */
export function settlementDecision<O extends OperationInFlight, Event, IdField extends string, E>(
  command: SettleByDecisionFields,
  open: { readonly version: number; readonly inFlight?: O },
  sagaId: string,
  vocab: Pick<
    OperationVocabulary<O, Draft<Event, IdField>, E>,
    'settledByDecision' | 'decidedEffects'
  >,
  decisions: ReturnType<typeof sagaDecisions<Event, IdField>>,
  now: string,
  takes?: DecisionVocabulary<O, Draft<Event, IdField>, E>['takes'],
): FlowDecision<Event, E | OperationEffect> {
  const { settledByDecision: named, decidedEffects } = vocab;
  if (named === undefined) throw new Error('the flow names no settled-by-decision event');
  const decisionVocab: DecisionVocabulary<O, Draft<Event, IdField>, E> = {
    settledByDecision: named,
    ...(decidedEffects === undefined ? {} : { decidedEffects }),
    ...(takes === undefined ? {} : { takes }),
  };
  const step = settleByDecision<O, Draft<Event, IdField>, E>(
    decisionOf(command),
    open.inFlight,
    decisionVocab,
  );
  if (step.outcome === 'refused')
    return decisions.rejected(open, sagaId, now, command, {
      code: step.code,
      message: step.message,
    });
  if (step.outcome === 'ignored')
    return { outcome: 'ignored', reason: step.reason, events: [], effects: step.effects };
  const drafts = step.drafts.map((d) => ({ ...d, commandId: command.commandId }));
  return decisions.accepted(open, sagaId, now, drafts, step.effects);
}

/** An open saga that runs one operation at a time, as its state holds it. */
export type OperationSagaState<O extends OperationInFlight, IdField extends string> = OrderFacts &
  Readonly<Record<IdField, string>> & {
    readonly inFlight?: O;
    /** The last operation settled by a decision of two people (a case). */
    readonly decided?: DecidedOperation;
  };

/**
 * An input about the saga's operation in flight decided by the shared rules and stamped as the
 * flow's events. `open` undefined (nothing requested yet), or nothing in flight: ignored.
 */
export function decideInFlight<
  O extends OperationInFlight,
  Event,
  IdField extends string,
  S extends OperationSagaState<O, IdField>,
  E,
>(
  input: OperationInput<O['operation']>,
  open: S | undefined,
  idField: IdField,
  vocabulary: (state: S) => OperationVocabulary<O, Draft<Event, IdField>, E>,
  rules: OperationRules,
  ctx: OperationContext,
): FlowDecision<Event, E | OperationEffect> {
  const op = open?.inFlight;
  return operationDecision<O, Event, IdField, S, E>(
    input,
    open && op && { state: open, sagaId: open[idField], idField, op },
    vocabulary,
    rules,
    ctx,
  );
}

type Initial = { readonly status: 'initial'; readonly version: number };

/** What a saga that runs one operation at a time supplies its decider (see {@link operationSagaDecider}). */
export interface OperationSagaSpec<
  Command,
  O extends OperationInFlight,
  Event,
  IdField extends string,
  S extends OperationSagaState<O, IdField>,
  E,
  Ctx extends OperationContext,
  OwnTimer extends { readonly kind: string },
> {
  readonly idField: IdField;
  /** Its commands: checked, then its request (or a refusal, its command-rejected event). */
  readonly command: (command: Command, state: S | Initial, ctx: Ctx) => FlowDecision<Event, E>;
  /** How it names its operation's outcomes, from its open state. */
  readonly vocabulary: (state: S, ctx: Ctx) => OperationVocabulary<O, Draft<Event, IdField>, E>;
  readonly rules: (ctx: Ctx) => OperationRules;
  /** Its own timers besides the operation's poll and alert (an approval's deadline …). */
  readonly ownTimer?: (timer: OwnTimer, state: S | Initial, ctx: Ctx) => FlowDecision<Event, E>;
}

const isOperationTimer = (timer: { readonly kind: string }): timer is OperationTimer =>
  (OPERATION_TIMER_KINDS as readonly string[]).includes(timer.kind);

/**
 * The decider of a saga that runs one operation at a time: a command and an own timer are the
 * flow's; everything else is about the operation in flight ({@link decideInFlight}).
 */
export function operationSagaDecider<
  Command,
  O extends OperationInFlight,
  Event,
  IdField extends string,
  S extends OperationSagaState<O, IdField> & { readonly status: string },
  E,
  Ctx extends OperationContext,
  OwnTimer extends { readonly kind: string } = never,
>(spec: OperationSagaSpec<Command, O, Event, IdField, S, E, Ctx, OwnTimer>) {
  return (
    input: SagaOperationInput<Command, O['operation'], OperationTimer | OwnTimer>,
    state: S | Initial,
    ctx: Ctx,
  ): FlowDecision<Event, E | OperationEffect> => {
    if (input.kind === 'command') return spec.command(input.command, state, ctx);
    // A gateway answer about the request settled by decision: reopens the case if it contradicts.
    const open = state.status === 'initial' ? undefined : (state as S);
    if (input.kind === 'callback' && open?.decided !== undefined && open.inFlight === undefined) {
      const query = askAboutDecided(
        input.callback,
        input.about,
        orderOf(open[spec.idField], open),
        open.decided,
        ctx,
      );
      if (query !== undefined)
        return { outcome: 'ignored', reason: 'HINT_ONLY', events: [], effects: [query] };
    }
    if (input.kind === 'gateway-result' && open?.decided !== undefined) {
      const subject =
        input.result.operation === 'status'
          ? input.result.subjectRequestId
          : input.result.requestId;
      if (subject === open.decided.requestId && open.inFlight?.requestId !== subject) {
        const vocab = spec.vocabulary(open, ctx);
        const step = answerAfterDecision(
          input.result,
          input.about,
          open,
          open.decided,
          (operation) => vocab.opensOrder(operation as O['operation']),
          (decided, contradiction) =>
            vocab.caseReopened?.(decided, contradiction) ??
            (() => {
              throw new Error('the flow names no case-reopened event');
            })(),
        );
        return step.outcome === 'ignored'
          ? { outcome: 'ignored', reason: step.reason, events: [], effects: [] }
          : {
              outcome: 'accepted',
              events: stampDrafts<Event, IdField>(
                open.version,
                { [spec.idField]: open[spec.idField] } as unknown as Record<IdField, string>,
                ctx.now,
                step.drafts,
              ),
              effects: [],
            };
      }
    }
    if (input.kind === 'timer-fired' && !isOperationTimer(input.timer))
      return spec.ownTimer === undefined
        ? { outcome: 'ignored', reason: 'TIMER_OBSOLETE', events: [], effects: [] }
        : spec.ownTimer(input.timer, state, ctx);
    return decideInFlight<O, Event, IdField, S, E>(
      // A timer left here is the operation's poll or alert.
      input as OperationInput<O['operation']>,
      // Every state but the initial one is open (the flow's union says so).
      state.status === 'initial' ? undefined : (state as S),
      spec.idField,
      (open) => spec.vocabulary(open, ctx),
      spec.rules(ctx),
      ctx,
    );
  };
}

/**
 * The open state a saga's requested event starts (the flow adds its saga id and its own fields):
 * at `status`, its order, its one operation in flight.
 */
export function requestedState<Op extends SubjectOperation, Status extends string>(
  status: Status,
  event: {
    readonly version: number;
    readonly occurredAt: string;
    readonly operation: Op;
    readonly requestId: string;
    readonly commandId: string;
    readonly merchant: MerchantRef;
    readonly clientOrderId: string;
  },
) {
  return {
    status,
    version: event.version,
    merchant: event.merchant,
    clientOrderId: event.clientOrderId,
    inFlight: inFlight.requested(event),
  };
}

/** An open state (an event of a saga that was never requested is a bug, not an input). */
export function opened<S extends { readonly status: string }>(
  state: S,
  what: string,
): Exclude<S, { status: 'initial' }> {
  if (state.status === 'initial') throw new Error(`event for a ${what} that was never requested`);
  return state as Exclude<S, { status: 'initial' }>;
}

/** The saga once its operation has its outcome: nothing in flight, at `status`. */
export function settledAt<
  S extends { readonly inFlight?: OperationInFlight },
  Status extends string,
>(
  state: S,
  status: Status,
  version: number,
): Omit<S, 'inFlight'> & { status: Status; version: number } {
  const { inFlight: _done, ...rest } = state;
  return { ...rest, status, version };
}

/** The fields of the lifecycle events of an operation in flight that its state follows. */
export interface LifecycleEventFields {
  readonly type: string;
  readonly version: number;
  readonly occurredAt: string;
  readonly serialNumber?: string;
  readonly gatewayOrderId?: string;
  readonly since?: string;
  readonly alert?: boolean;
  readonly concern?: UnknownConcern;
  readonly action?: PayerAction;
}

/**
 * The state after a lifecycle event of its operation in flight (accepted by the gateway, the
 * payer's action required, outcome unknown, resent), named by the contracts' suffixes; the
 * accepted event's gateway order id joins the state.
 */
export function withLifecycleEvent<
  S extends {
    readonly version: number;
    readonly inFlight?: OperationInFlight;
    readonly gatewayOrderId?: string;
  },
>(state: S, event: LifecycleEventFields): S {
  const { type, version } = event;
  if (type.endsWith('accepted-by-gateway')) {
    const s = withOperation(state, version, (op) => inFlight.accepted(op, event.serialNumber));
    return event.gatewayOrderId === undefined ? s : { ...s, gatewayOrderId: event.gatewayOrderId };
  }
  const { action, since } = event;
  if (type.endsWith('action-required') && action !== undefined)
    return withOperation(state, version, (op) => inFlight.actionRequired(op, action));
  if (type.endsWith('outcome-unknown') && since !== undefined)
    return withOperation(state, version, (op) =>
      inFlight.unknown(op, since, event.alert === true, event.concern),
    );
  if (type.endsWith('operation-resent'))
    return withOperation(state, version, (op) => inFlight.resent(op, event.occurredAt));
  throw new Error(`${type} is not an event of the operation in flight`);
}
