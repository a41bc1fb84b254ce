import type {
  GatewayCallback,
  GatewayRequest,
  GatewayResult,
  RejectionCode,
  StatusCheckHint,
} from '@payments/contracts';
import type { FlowDecision, KeepSooner, Rejection } from '../domain/decision';

/**
 * The saga runtime's contract with a flow (DESIGN.md "Sagas"). A flow is a folder with a pure
 * decider (`decide`, `evolve`, an initial state) and this binding, which tells the runtime how
 * inputs reach the decider, what its effects mean and how its state is projected onto the row.
 * Everything else (inbox, idempotency, locks, history, outbox, timers, child sagas, one commit)
 * is the runtime's.
 */

/** What every flow's events have in common. */
export interface SagaEvent {
  readonly type: string;
  readonly version: number;
  readonly commandId: string;
  /** ISO instant. */
  readonly occurredAt: string;
}

/** Time, ids and the flow's policy enter a decision as data. */
export interface DecisionContext<Policy = unknown> {
  /** ISO instant. */
  now: string;
  ids: { next(): string };
  policy?: Policy;
}

/** A pure decider: `decide(input, state, ctx) → events + effects`, `evolve(state, event) → state`. */
export interface Decider<State, Input, Event extends SagaEvent, Effect, Policy = unknown> {
  readonly initialState: State;
  decide(input: Input, state: State, ctx: DecisionContext<Policy>): Decision<Event, Effect>;
  evolve(state: State, event: Event): State;
}

/** A decision (domain/decision.ts): accepted, rejected (its command-rejected event) or ignored. */
export type Decision<Event, Effect> = FlowDecision<Event, Effect, string>;

/** What the runtime does for a flow, in the same transaction as appending the events. */
export type RuntimeEffect =
  /**
   * Write the request (kept for resends) and publish it. `held`: written, not published, until a
   * `publish-held-request` of a later decision in the same transaction publishes it (a request
   * that waits for its daily-budget reservation); never published otherwise.
   */
  | { type: 'send-gateway-request'; request: GatewayRequest; held?: true }
  /** Publish a request a decision wrote `held` (as written: same attempt). */
  | { type: 'publish-held-request'; requestId: string }
  /**
   * Publish the SAME request again (attempt bumped) not before `notBefore`. `afterNoTrace`: the
   * one resend of a request the gateway showed no trace of (the adapter's ledger lets it pass).
   */
  | {
      type: 'resend-gateway-request';
      requestId: string;
      attempt: number;
      notBefore: string;
      afterNoTrace?: true;
    }
  /**
   * Make the deferred resend of `requestId` due now, when the saga has one pending for that very
   * request (a refresh of a request whose only re-ask is itself); otherwise nothing.
   */
  | { type: 'hasten-resend'; requestId: string }
  /**
   * Upsert the saga's timer of this kind and scope (one per flow, saga, kind and scope). `scope`:
   * the request id of the operation it belongs to, so operations in flight at once never share a
   * timer; undefined: the saga's own (''). `keepSooner` (KeepSooner): one pending and due no later
   * stays as it is — any, or one a hint brought forward (a hint's poll is not put off by the first
   * poll after a send result that came after it, nor by the re-ask of a query held back).
   */
  | {
      type: 'set-timer';
      kind: string;
      at: string;
      payload: object;
      scope?: string;
      keepSooner?: KeepSooner;
    }
  /** Drop the saga's timer of this kind and scope; with no scope, every timer of the kind. */
  | { type: 'cancel-timer'; kind: string; scope?: string }
  /**
   * Bring the saga's timer of this kind and scope forward to `at` (its payload kept), when it is
   * set for later; otherwise nothing (a search held back by the adapter asks again at `retryAt`).
   */
  | { type: 'advance-timer'; kind: string; at: string; scope?: string }
  /**
   * Start another saga in the same transaction with a command (a schedule starts a rebill). The
   * command's id makes the start idempotent like any command.
   */
  | { type: 'start-saga'; command: object };

/** An input as the runtime hands it to a flow. */
export type SagaInput =
  | { kind: 'command'; command: RoutedCommand }
  | { kind: 'gateway-result'; result: GatewayResult }
  | { kind: 'callback'; callback: GatewayCallback }
  | { kind: 'status-check-hint'; hint: StatusCheckHint }
  | { kind: 'timer'; timer: { kind: string; payload: unknown } };

/** A validated command, with what the runtime needs to route and record it. */
export interface RoutedCommand {
  readonly type: string;
  readonly commandId: string;
  /** The saga it is about (for card payments, the payment id). */
  readonly sagaId: string;
  readonly endpointId: string;
  readonly body: unknown;
}

/** The row's projection of a state: what queries filter on and what must stay unique. */
export interface SagaProjection {
  readonly status: string;
  readonly kind: string | null;
  /** Undefined: keep the row's. */
  readonly endpointId?: string;
  /** The sale's or payout's client_orderid, unique per endpoint (undefined: none). */
  readonly clientOrderId?: string;
  /** Nothing will be resent any more: the sealed card of its requests can be purged. */
  readonly settled: boolean;
}

export interface Flow<State = unknown, Event extends SagaEvent = SagaEvent> {
  readonly name: string;
  /** The command types this flow starts or handles. */
  readonly commandTypes: readonly string[];
  /**
   * Internal command types another flow owns that a saga answers this flow's sagas with
   * (start-saga): routed here when addressed to an existing saga of this flow (the daily budget's
   * answer to a transfer); never from the topic, never opening a saga.
   */
  readonly answerTypes?: readonly string[];
  /**
   * Its event types that say money moved (counted in integer minor units after the commit);
   * set from its flow module by the registry (`flows/registered-flows.ts`).
   */
  readonly moneyEvents?: readonly string[];
  readonly initialState: State;
  /** The decision for an input, its effects already in the runtime's vocabulary. */
  decide(input: SagaInput, state: State, ctx: DecisionContext): Decision<Event, RuntimeEffect>;
  evolve(state: State, event: Event): State;
  project(state: State): SagaProjection;
  /** The command-rejected event for a command its decider never saw (invalid, or an id conflict). */
  rejection(args: {
    sagaId: string;
    commandId: string;
    commandType: string | undefined;
    version: number;
    now: string;
    reason: RejectionCode;
    message: string;
  }): Event;
  /** A deferred resend of `requestId` still applies in this state. */
  resendWanted(state: State, requestId: string): boolean;
  /**
   * The sagas a command its decider refused still starts (`start-saga` only; undefined: none). A
   * refused command starts no saga of its own, yet the saga that sent it (a schedule and its
   * rebill) may be waiting for an outcome that only this refusal can give.
   */
  refusalEffects?(command: RoutedCommand, rejection: Rejection, now: string): RuntimeEffect[];
  /**
   * The sagas to start when a command this flow's saga started (`child`, as it built it) is
   * refused by the runtime before any decider saw it (it fails its schema, its command id was
   * taken by another body, its saga belongs to another flow) and no saga exists under the id it
   * addresses (`start-saga` only; undefined: none). Nothing else would ever answer the saga that
   * sent it: a refusal its target's decider makes is that flow's `refusalEffects`, and a saga that
   * exists answers for itself.
   */
  childRefusalEffects?(child: object, rejection: Rejection, now: string): RuntimeEffect[];
}

/** How raw commands are validated and routed (contracts' schemas in the app; test flows' own). */
export interface CommandCatalogue {
  /**
   * `origin`: `topic` for a command from the commands topic, `saga` for one a flow started
   * (start-saga). A catalogue may accept some command types only from a saga.
   */
  parse(
    raw: unknown,
    origin?: CommandOrigin,
  ):
    | { ok: true; command: RoutedCommand; fingerprint: string }
    | {
        ok: false;
        reason: RejectionCode;
        message: string;
        ids: { commandId?: string; sagaId?: string; type?: string; endpointId: string };
        fingerprint: string;
      };
}

export type CommandOrigin = 'topic' | 'saga';

/** Folds events into a state with a flow's evolve. */
export function foldEvents<State, Event extends SagaEvent>(
  flow: Pick<Flow<State, Event>, 'evolve'>,
  state: State,
  events: readonly Event[],
): State {
  return events.reduce((s, e) => flow.evolve(s, e), state);
}
