/**
 * The serial of an order-opening operation settled before any reply named it (issue #35), the same
 * way in every flow whose order takes follow-ups (card payments: sale, preauth, the forms, rebills).
 *
 * A verified server callback settles an operation that opens the order (gateway-operation.ts) but
 * names no serial; a status reply always does. An operation settled by its callback — its reply
 * lost, or overtaken by the callback — would never learn its serial, and once a follow-up (capture,
 * void, return) becomes the order's latest request, nothing can name it to the gateway any more
 * (reconciliation asks `by-request-sn`, or about the order's latest request). So:
 *  - the saga keeps a mark ({@link SerialPending}) when such an operation succeeds with its serial
 *    unknown (the flow's evolve: {@link pendingSerial});
 *  - a send result of that very request arriving after the callback names its serial with no
 *    ambiguity: it is recorded (`accepted-by-gateway` for that request), never its outcome;
 *  - otherwise one status query by order is asked while the operation is still the order's latest
 *    request (`background`, `urgent` once a follow-up waits on it), again at its class's cadence
 *    up to {@link SERIAL_QUERY_ATTEMPTS} times and for at least {@link SERIAL_QUESTION_MIN_MS}
 *    (never more than {@link SERIAL_QUESTION_MAX_MS}); its
 *    reply naming the request's serial
 *    (`requestSerial`, not one of the order's earlier requests, its transaction type naming the
 *    operation) is recorded the same way; a reply about the operation naming none, or no usable
 *    answer after the attempts, closes the question (`accepted-by-gateway` naming no serial: the
 *    gateway has the request; nothing more is learnt, the operation stays as it was);
 *  - no follow-up is sent while the mark stands (a reply by order would then describe the
 *    follow-up): the flow writes it held and publishes it when the mark clears.
 * None of this ever settles an operation or moves money: the outcome was settled already.
 */
import type { GatewayResult, StatusPriority } from '@payments/contracts';
import { addMs } from '../decision';
import { replySubject } from './operation-report';
import {
  type AcceptedFacts,
  type GatewayOrder,
  type OperationContext,
  type OperationEffect,
  type OperationInFlight,
  statusRequest,
} from './operation-model';
import { BACKGROUND_FAST_BAND, classPollDelay, heldPollDelay } from './polling';

/** An order-opening operation settled with its serial unknown: the serial is still asked for. */
export interface SerialPending<Op extends string = string> {
  /** The request, as its operation-requested event named it. */
  readonly requestId: string;
  readonly operation: Op;
  readonly commandId: string;
  /** What the gateway's answer made of it, when it decided the transaction (a payment form). */
  readonly named?: Op;
  /** When it was settled. */
  readonly since: string;
}

/** The timer that asks the gateway about a marked request's serial (scoped by that request). */
export interface SerialQueryTimer {
  kind: 'serial-query';
  requestId: string;
  /** This query's number, from 1. */
  attempt: number;
  /** A follow-up waits on the answer: asked urgent, at the fast cadence. */
  urgent?: true;
}

export const SERIAL_QUERY_TIMER = 'serial-query' satisfies SerialQueryTimer['kind'];

/** Status queries about a marked request before the question closes without a serial. */
export const SERIAL_QUERY_ATTEMPTS = 6;

/**
 * The least time from the mark (the operation settled) before the question may close without a
 * serial, whatever the attempts. A query's timer fires at its class's cadence whether or not the
 * query before it was answered, so the attempts alone measure the orchestrator's clock, not the
 * gateway's silence: in the standalone chaos run (session 16) twelve questions closed empty 29 to
 * 114 s after their mark while the adapter took 35-50 s to reach each query (a PostgreSQL
 * failover), their follow-ups went, and the day close could no longer name the sale
 * (`unconfirmed`). Ten minutes outlast any backlog the chaos runs have shown (the adapter's worst,
 * 206 s) and the gateway's fast polling band.
 */
export const SERIAL_QUESTION_MIN_MS = 10 * 60_000;

/**
 * The most time from the mark before the question closes without a serial, whatever the attempts:
 * a query the adapter holds back asks again as attempt 2, so under a status budget that never
 * admits it the attempts alone would never run out and a follow-up held on the answer would wait
 * for good.
 */
export const SERIAL_QUESTION_MAX_MS = 30 * 60_000;

/** The effects this module asks of a flow (a subset of every such flow's effects). */
export type SerialEffect =
  | Extract<OperationEffect, { type: 'send-gateway-request' }>
  | { type: 'schedule-timer'; timer: SerialQueryTimer; at: string }
  | { type: 'cancel-timer'; timer: SerialQueryTimer['kind'] };

/**
 * The mark an operation leaves when it settled as a success with its serial unknown (undefined:
 * its serial is known, or it does not open the order). `named`: what the gateway made of it.
 */
export function pendingSerial<Op extends string>(
  op: Pick<OperationInFlight, 'requestId' | 'commandId' | 'serial'> & { readonly operation: Op },
  opensOrder: boolean,
  since: string,
  named?: Op,
): SerialPending<Op> | undefined {
  if (!opensOrder || op.serial !== undefined) return undefined;
  return {
    requestId: op.requestId,
    operation: op.operation,
    commandId: op.commandId,
    ...(named === undefined || named === op.operation ? {} : { named }),
    since,
  };
}

/** The first query about a newly marked request: after the background class's first interval. */
export function firstSerialQuery(mark: SerialPending, now: string): SerialEffect {
  return {
    type: 'schedule-timer',
    timer: { kind: SERIAL_QUERY_TIMER, requestId: mark.requestId, attempt: 1 },
    at: addMs(now, BACKGROUND_FAST_BAND.min),
  };
}

/** The marked request as an operation a status query can be about (no serial: asked by order). */
function subjectOf(mark: SerialPending): OperationInFlight {
  return {
    operation: (mark.named ?? mark.operation) as OperationInFlight['operation'],
    requestId: mark.requestId,
    commandId: mark.commandId,
    requestedAt: mark.since,
    stage: 'processing',
  };
}

/** One status query by order about the marked request now, and the next one at its cadence. */
function ask(
  mark: SerialPending,
  order: GatewayOrder,
  ctx: OperationContext,
  attempt: number,
  urgent: boolean,
): SerialEffect[] {
  const priority: StatusPriority = urgent ? 'urgent' : 'background';
  return [
    {
      type: 'send-gateway-request',
      request: statusRequest(order, subjectOf(mark), ctx, priority),
    },
    {
      type: 'schedule-timer',
      timer: {
        kind: SERIAL_QUERY_TIMER,
        requestId: mark.requestId,
        attempt: attempt + 1,
        ...(urgent ? { urgent: true as const } : {}),
      },
      // Urgent: the facts' 3-5 s; background: 15-30 s (domain/gateway-operation/polling.ts).
      at: addMs(ctx.now, classPollDelay(priority, attempt, 0)),
    },
  ];
}

/**
 * A follow-up was asked while the mark stands (it is written held): the question is asked now,
 * urgent, and again at the fast cadence (attempts counted afresh: a follow-up comes once, as the
 * next is refused while one is in flight).
 */
export function askNowForFollowUp(
  mark: SerialPending,
  order: GatewayOrder,
  ctx: OperationContext,
): SerialEffect[] {
  return ask(mark, order, ctx, 1, true);
}

/** What a serial query's timer, or an answer about the marked request, comes to. */
export type SerialStep =
  /** Learnt (`serialNumber`), or closed without it: the flow's `accepted-by-gateway`, the mark cleared. */
  | { readonly outcome: 'learnt'; readonly facts: AcceptedFacts; readonly effects: SerialEffect[] }
  | {
      readonly outcome: 'ignored';
      readonly reason: 'TIMER_OBSOLETE' | 'NO_NEWS' | 'NOT_ABOUT_THIS_OPERATION' | 'STALE_REQUEST';
      readonly effects: SerialEffect[];
    };

const cancelQueries: SerialEffect = { type: 'cancel-timer', timer: SERIAL_QUERY_TIMER };

const learnt = (facts: AcceptedFacts): SerialStep => ({
  outcome: 'learnt',
  facts,
  effects: [cancelQueries],
});

/**
 * The serial query's timer fired: obsolete (the mark cleared, or another request's), the question
 * closed after {@link SERIAL_QUERY_ATTEMPTS} queries, or one more query. `followUpWaits`: a
 * follow-up is held on the answer (asked urgent).
 */
export function serialQueryTimer(
  timer: SerialQueryTimer,
  mark: SerialPending | undefined,
  order: GatewayOrder,
  ctx: OperationContext,
  followUpWaits: boolean,
): SerialStep {
  if (mark === undefined || mark.requestId !== timer.requestId)
    return { outcome: 'ignored', reason: 'TIMER_OBSOLETE', effects: [] };
  const open = Date.parse(ctx.now) - Date.parse(mark.since);
  if (
    (timer.attempt > SERIAL_QUERY_ATTEMPTS && open >= SERIAL_QUESTION_MIN_MS) ||
    open >= SERIAL_QUESTION_MAX_MS
  )
    // No usable answer after the attempts and the least time: the question closes, the operation
    // stays as it was.
    return learnt(
      order.gatewayOrderId === undefined ? {} : { gatewayOrderId: order.gatewayOrderId },
    );
  return {
    outcome: 'ignored',
    reason: 'NO_NEWS',
    effects: ask(
      mark,
      order,
      ctx,
      // Past the attempts but not the least time: asked again at the last attempt's cadence.
      Math.min(timer.attempt, SERIAL_QUERY_ATTEMPTS),
      followUpWaits || timer.urgent === true,
    ),
  };
}

/**
 * A gateway result about the marked request (undefined: not about it — the flow decides it as
 * usual): its own send result arriving after the callback settled it (its serial recorded; any
 * other result of the send says nothing now), or the reply to a serial query. A reply counts only
 * when it describes that very request: its serial is none of the order's earlier requests' and its
 * transaction type (when named) names the operation. `followUpWaits`: a held follow-up waits on it
 * (a query held back by the adapter is then asked again urgent at its turn).
 */
export function serialAnswer(
  result: GatewayResult,
  about: readonly string[] | undefined,
  mark: SerialPending | undefined,
  order: GatewayOrder,
  ctx: OperationContext,
  followUpWaits: boolean,
): SerialStep | undefined {
  if (mark === undefined) return undefined;
  if (result.operation !== 'status') {
    if (result.requestId !== mark.requestId) return undefined;
    const r = result.result;
    // Only the serial is taken: the outcome was settled by the callback, never changed here.
    if (r.kind !== 'accepted' || r.serialNumber === undefined)
      return { outcome: 'ignored', reason: 'STALE_REQUEST', effects: [] };
    return learnt({
      ...(r.gatewayOrderId === undefined ? {} : { gatewayOrderId: r.gatewayOrderId }),
      serialNumber: r.serialNumber,
    });
  }
  if (result.subjectRequestId !== mark.requestId) return undefined;
  const reply = result.result;
  if (reply.kind === 'not-sent' && reply.retryAt !== undefined)
    // Held back by the adapter's status budget: asked again at its turn (the timer's upsert).
    return {
      outcome: 'ignored',
      reason: 'NO_NEWS',
      effects: [
        {
          type: 'schedule-timer',
          timer: {
            kind: SERIAL_QUERY_TIMER,
            requestId: mark.requestId,
            attempt: 2,
            ...(followUpWaits ? { urgent: true as const } : {}),
          },
          at: addMs(
            ctx.now,
            heldPollDelay(Date.parse(reply.retryAt), Date.parse(ctx.now), result.requestId),
          ),
        },
      ],
    };
  // A refusal or a failed query: the timer asks again while the attempts last.
  if (reply.kind !== 'accepted' || reply.report === undefined)
    return { outcome: 'ignored', reason: 'NO_NEWS', effects: [] };
  const report = reply.report;
  const op = subjectOf(mark);
  const operations = [mark.operation, ...(mark.named === undefined ? [] : [mark.named])];
  if (
    replySubject(report, about, order, op, () => true) !== 'this' ||
    (about !== undefined && !operations.some((o) => about.includes(o)))
  )
    return { outcome: 'ignored', reason: 'NOT_ABOUT_THIS_OPERATION', effects: [] };
  const gatewayOrderId = report.gatewayOrderId ?? order.gatewayOrderId;
  return learnt({
    ...(gatewayOrderId === undefined ? {} : { gatewayOrderId }),
    // None named: the question closes without it (the gateway's reply will not change).
    ...(report.requestSerial === undefined ? {} : { serialNumber: report.requestSerial }),
  });
}
