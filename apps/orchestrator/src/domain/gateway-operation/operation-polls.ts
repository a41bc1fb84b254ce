/**
 * The status polls of an operation in flight, as every gateway flow makes them: the query now in
 * its class of the adapter's status budget and the next poll at that class's cadence
 * (`statusPoll`), the poll after a query the adapter held back (`heldPoll`), and the facts the one
 * scheduler (polling.ts) reads. Split from gateway-operation.ts, whose timer decisions use them.
 */
import type { GatewayStatusRequest } from '@payments/contracts';
import { addMs, msBetween } from '../decision';
import {
  classPollDelay,
  heldPollDelay,
  hintLive,
  type PollFacts,
  pollPriority,
  POLL_BANDS,
} from './polling';
import {
  type GatewayOrder,
  type OperationContext,
  type OperationEffect,
  type OperationInFlight,
  type OperationVocabulary,
  statusRequest,
} from './operation-model';

/** What the one status-query scheduler (domain/gateway-operation/polling.ts) needs to know about `op` now. */
export function pollFacts(
  op: OperationInFlight,
  extra: { readonly waitingForPayer?: boolean; readonly hinted?: boolean } = {},
): PollFacts {
  return {
    requestedAtMs: Date.parse(op.requestedAt),
    stage: op.stage,
    ...(op.unknownSince === undefined ? {} : { unknownSinceMs: Date.parse(op.unknownSince) }),
    // A reply named this request's serial: the gateway has it (an unknown now is its own report).
    ...(op.serial === undefined ? {} : { acknowledged: true }),
    ...(op.alerted === true ? { alerted: true } : {}),
    ...(extra.waitingForPayer === true ? { waitingForPayer: true } : {}),
    ...(extra.hinted === true ? { hinted: true } : {}),
  };
}

/** Whether the operation waits for a person: a payer action announced, or a hosted form open. */
export function waitingForPayer<O extends OperationInFlight>(
  op: O,
  vocab: Pick<OperationVocabulary<O, unknown, unknown>, 'hostedForm'>,
): boolean {
  return (
    op.stage === 'action-required' || (op.stage === 'processing' && vocab.hostedForm?.(op) === true)
  );
}

/** The time since the request from which the cadence is read (see the alerted case below). */
function cadenceElapsed(op: OperationInFlight, now: string): number {
  // Raised for a person (no trace, nothing safe to send): asked at the slow cadence, which
  // still catches a slow gateway's late answer without crowding out live operations' polls.
  return op.alerted === true && op.concern === 'no-trace'
    ? Math.max(msBetween(op.requestedAt, now), POLL_BANDS[0].until)
    : msBetween(op.requestedAt, now);
}

/**
 * A status poll of the operation in flight: the query now, in its class of the status budget,
 * and the next poll at that class's cadence (domain/gateway-operation/polling.ts; `attempt`: this poll's number,
 * from 1; `extra`: what only the flow knows — a payer being waited for, a hint).
 */
export function statusPoll(
  order: GatewayOrder,
  op: OperationInFlight,
  attempt: number,
  ctx: OperationContext,
  extra: {
    readonly waitingForPayer?: boolean;
    readonly hinted?: boolean;
    /** When the hint came (the timer's `hintedAt`): its urgency lasts (polling.ts `hintLive`). */
    readonly hintedAt?: string;
  } = {},
): [
  { type: 'send-gateway-request'; request: GatewayStatusRequest },
  Extract<OperationEffect, { type: 'schedule-timer' }>,
] {
  const nowMs = Date.parse(ctx.now);
  const live = hintLive(extra.hintedAt, nowMs);
  // A hint with its time counts while it is live; one without (an older timer) for this query.
  const hinted = extra.hintedAt === undefined ? extra.hinted === true : live;
  const priority = pollPriority(pollFacts(op, { ...extra, hinted }), nowMs);
  if (live && extra.hintedAt !== undefined) {
    // Money may have moved (a verified callback said so): asked again urgent, at the fast
    // cadence counted from the hint, until the gateway's answer settles it or the hint is old.
    return [
      {
        type: 'send-gateway-request',
        request: statusRequest(order, op, ctx, priority, extra.hintedAt),
      },
      {
        type: 'schedule-timer',
        timer: {
          kind: 'status-poll',
          requestId: op.requestId,
          attempt: attempt + 1,
          hinted: true,
          hintedAt: extra.hintedAt,
        },
        at: addMs(ctx.now, classPollDelay('urgent', attempt, msBetween(extra.hintedAt, ctx.now))),
      },
    ];
  }
  // The next poll's class is judged without the hint: a hint without its time brings one query
  // forward.
  const next = pollPriority(pollFacts(op, { ...extra, hinted: false }), nowMs);
  // Urgent by a hint without its time: since now. Urgent by its age (the reply lost): none — held,
  // it is asked again in the class its age gives then (urgent for URGENT_FOR_MS from the loss).
  const urgentSince = hinted ? ctx.now : undefined;
  return [
    {
      type: 'send-gateway-request',
      request: statusRequest(order, op, ctx, priority, urgentSince),
    },
    {
      type: 'schedule-timer',
      timer: { kind: 'status-poll', requestId: op.requestId, attempt: attempt + 1 },
      at: addMs(ctx.now, classPollDelay(next, attempt, cadenceElapsed(op, ctx.now))),
    },
  ];
}

/**
 * The poll after a status query the adapter held back (its status budget spent, or a query for
 * the same payment sent moments ago: `retryAt`): at `retryAt` plus a jitter
 * (domain/gateway-operation/polling.ts `heldPollDelay`), never sooner unless urgent; the class's
 * cadence resumes once a query is sent. `urgent`: the held query was urgent (the result's
 * `priority`): the poll is at `retryAt` or `URGENT_HELD_MAX_MS` from now, whichever comes first,
 * and urgent again, as a hint's (a verified callback's query held because another query of the
 * payment was sent moments ago, or the budget was spent, used to come back in the class its
 * operation's age gave it — background past a minute — and wait at the end of that line), until
 * its hint's urgency ends (`urgentSince` + HINT_URGENT_FOR_MS); urgent by its age alone, it is
 * asked again in the class its age gives. A hint's poll due sooner is never put off by it
 * (`keepSooner: 'hinted'`).
 */
export function heldPoll(
  op: Pick<OperationInFlight, 'requestId'>,
  queryId: string,
  retryAt: string,
  now: string,
  urgent = false,
  /**
   * When the held query's hint began (its result's `urgentSince`); absent (urgent by its age, or
   * an adapter that does not echo it): no hint, the class its age gives when asked again.
   */
  urgentSince?: string,
): Extract<OperationEffect, { type: 'schedule-timer' }> {
  return {
    type: 'schedule-timer',
    timer: {
      kind: 'status-poll',
      requestId: op.requestId,
      attempt: 2,
      // Urgent for as long after its urgency began as any urgent poll (polling.ts `hintLive`),
      // never longer: a hold does not start it again. Session 16's standalone chaos run: with
      // the hold's own time here, ≈ 150 sales unknown or alerted for minutes were asked urgent
      // every ≈ 6 s for good (a hold every time), 1,100-1,500 urgent queries a minute against a
      // budget of 240, and callbacks' captures waited behind them.
      ...(urgent && urgentSince !== undefined
        ? { hinted: true as const, hintedAt: urgentSince }
        : {}),
    },
    at: addMs(
      now,
      heldPollDelay(
        Date.parse(retryAt),
        Date.parse(now),
        queryId,
        urgent,
        hintLive(urgentSince, Date.parse(now)),
      ),
    ),
    // A hint's poll due sooner stays (a verified callback that came while this query waited in
    // the adapter); the class's cadence poll armed when this query was sent does not.
    keepSooner: 'hinted',
  };
}
