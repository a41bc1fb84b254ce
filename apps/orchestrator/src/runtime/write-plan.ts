import type { GatewayRequest } from '@payments/contracts';
import { eventRow, gatewayRequestRow, type InputMeta, type OutboxRow } from './outbox/outbox-rows';
import type { HistoryRow } from '../persistence/saga.repository';
import type { TimerChange } from '../persistence/timer.repository';
import type { Flow, RuntimeEffect, SagaEvent, SagaProjection } from './flow';

/** The timer the runtime itself keeps: the deferred resend of a request that was not sent. */
export const RESEND_TIMER = 'gateway-resend';

export interface ResendPayload {
  requestId: string;
  /** Undefined: the stored request's own attempt (a held request published). */
  attempt?: number;
  afterNoTrace?: true;
}

/**
 * Everything one decision writes, computed without I/O: the new state (with its projection and
 * the version it must replace), history rows, outbox rows in publication order, gateway requests
 * to keep, timers to set and cancel, resends due now, child sagas to start.
 */
export interface WritePlan {
  readonly sagaId: string;
  readonly flow: string;
  readonly expectedVersion: number;
  /** Undefined when the decision appended no event (the row is not touched). */
  readonly next?: { state: unknown; version: number; projection: SagaProjection };
  readonly history: HistoryRow[];
  readonly outbox: OutboxRow[];
  readonly gatewayRequests: GatewayRequest[];
  readonly timers: TimerChange[];
  /** Resends due now: the original request is read back and published with `attempt`. */
  readonly resends: ResendPayload[];
  /** Commands that start (or reach) other sagas in the same transaction. */
  readonly children: object[];
  /** The saga is settled: drop the sealed card from its stored requests and published rows. */
  readonly purgeSealedCards: boolean;
}

/** A decision whose events do not continue the saga's version (a bug or a stale state). */
export class VersionConflictError extends Error {
  constructor(sagaId: string, expected: number, got: number) {
    super(`saga ${sagaId}: event version ${got} where ${expected} was next`);
    this.name = 'VersionConflictError';
  }
}

export function planWrites<State, Event extends SagaEvent>(args: {
  sagaId: string;
  flow: Flow<State, Event>;
  state: State;
  version: number;
  events: readonly Event[];
  effects: readonly RuntimeEffect[];
  meta: InputMeta;
  now: Date;
  ids: { next(): string };
}): WritePlan {
  const { sagaId, flow, events, effects, meta, now, ids } = args;
  // Versions continue the saga's without gaps (DESIGN.md guarantee 4), whatever the flow's evolve checks.
  events.forEach((event, i) => {
    const expected = args.version + i + 1;
    if (event.version !== expected) throw new VersionConflictError(sagaId, expected, event.version);
  });
  const history: HistoryRow[] = events.map((event) => ({ eventId: ids.next(), event }));
  const outbox: OutboxRow[] = history.map((h) =>
    eventRow(sagaId, h.event, { rowId: h.eventId, ceId: h.eventId }, meta),
  );
  let next: WritePlan['next'];
  let purgeSealedCards = false;
  const last = events.at(-1);
  if (last !== undefined) {
    const state = events.reduce((s, e) => flow.evolve(s, e), args.state);
    const projection = flow.project(state);
    next = { state, version: last.version, projection };
    purgeSealedCards = projection.settled;
  }
  const gatewayRequests: GatewayRequest[] = [];
  const timers: TimerChange[] = [];
  const resends: ResendPayload[] = [];
  const children: object[] = [];
  for (const effect of effects) {
    switch (effect.type) {
      case 'send-gateway-request':
        gatewayRequests.push(effect.request);
        if (!effect.held)
          outbox.push(gatewayRequestRow(effect.request, ids.next(), now.toISOString(), meta));
        break;
      case 'publish-held-request':
        resends.push({ requestId: effect.requestId });
        break;
      case 'resend-gateway-request': {
        const payload: ResendPayload = {
          requestId: effect.requestId,
          attempt: effect.attempt,
          ...(effect.afterNoTrace ? { afterNoTrace: true as const } : {}),
        };
        const notBefore = new Date(effect.notBefore);
        if (notBefore.getTime() > now.getTime()) {
          // The request's own: another request's resend of the saga never replaces it.
          timers.push({
            op: 'set',
            kind: RESEND_TIMER,
            scope: effect.requestId,
            at: notBefore,
            payload,
          });
        } else {
          resends.push(payload);
        }
        break;
      }
      case 'hasten-resend':
        timers.push({ op: 'advance', kind: RESEND_TIMER, at: now, requestId: effect.requestId });
        break;
      case 'set-timer':
        timers.push({
          op: 'set',
          kind: effect.kind,
          ...(effect.scope === undefined ? {} : { scope: effect.scope }),
          at: new Date(effect.at),
          payload: effect.payload,
          ...(effect.keepSooner === undefined ? {} : { keepSooner: effect.keepSooner }),
        });
        break;
      case 'advance-timer':
        timers.push({
          op: 'advance',
          kind: effect.kind,
          at: new Date(effect.at),
          requestId: effect.scope ?? '',
        });
        break;
      case 'cancel-timer':
        timers.push({
          op: 'cancel',
          kind: effect.kind,
          ...(effect.scope === undefined ? {} : { scope: effect.scope }),
        });
        break;
      case 'start-saga':
        children.push(effect.command);
        break;
      default: {
        const never: never = effect;
        throw new Error(`unhandled effect ${JSON.stringify(never)}`);
      }
    }
  }
  return {
    sagaId,
    flow: flow.name,
    expectedVersion: args.version,
    ...(next === undefined ? {} : { next }),
    history,
    outbox,
    gatewayRequests,
    timers,
    resends,
    children,
    purgeSealedCards,
  };
}
