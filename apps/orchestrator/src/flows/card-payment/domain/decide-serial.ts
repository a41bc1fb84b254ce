/**
 * A sale, preauth or rebill settled before any reply named its serial: the card payment's part of
 * the shared rule (domain/gateway-operation/operation-serial.ts) — the serial asked for, recorded
 * as `accepted-by-gateway` of that request, and a follow-up asked meanwhile held until then.
 */
import type { GatewayFollowUpRequest, PaymentEvent } from '@payments/contracts';
import { orderOf } from '../../../domain/gateway-operation/gateway-operation';
import {
  askNowForFollowUp,
  firstSerialQuery,
  type SerialQueryTimer,
  type SerialStep,
  serialAnswer,
  serialQueryTimer,
} from '../../../domain/gateway-operation/operation-serial';
import type { Decision, DecisionContext } from './decision';
import { accepted, ignored } from './drafts';
import type { Effect } from './effects';
import { fold } from './evolve';
import type { PaymentInput } from './inputs';
import type { OpenPayment, PaymentState } from './state';

/** The step as the payment's decision: the serial's `accepted-by-gateway`, the held follow-up sent. */
function decided(step: SerialStep, payment: OpenPayment, ctx: DecisionContext): Decision {
  const mark = payment.serialPending;
  if (step.outcome === 'ignored') return ignored(step.reason, step.effects);
  if (mark === undefined) return ignored('TIMER_OBSOLETE');
  const held = payment.inFlight?.held === true ? payment.inFlight : undefined;
  return accepted(
    payment,
    payment.paymentId,
    ctx,
    [
      {
        type: 'accepted-by-gateway',
        commandId: mark.commandId,
        operation: mark.operation,
        requestId: mark.requestId,
        ...step.facts,
      },
    ],
    [
      ...step.effects,
      ...(held === undefined
        ? []
        : [{ type: 'publish-held-request' as const, requestId: held.requestId }]),
    ],
  );
}

/** A gateway result about the sale whose serial is asked for (undefined: not about it). */
export function decideSerialResult(
  input: Extract<PaymentInput, { kind: 'gateway-result' }>,
  state: PaymentState,
  ctx: DecisionContext,
): Decision | undefined {
  if (state.status === 'initial') return undefined;
  const step = serialAnswer(
    input.result,
    input.about,
    state.serialPending,
    orderOf(state.paymentId, state),
    ctx,
    state.inFlight?.held === true,
  );
  return step === undefined ? undefined : decided(step, state, ctx);
}

/** The serial query's timer: one more query, the question closed, or obsolete. */
export function decideSerialTimer(
  timer: SerialQueryTimer,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  if (state.status === 'initial') return ignored('TIMER_OBSOLETE');
  const step = serialQueryTimer(
    timer,
    state.serialPending,
    orderOf(state.paymentId, state),
    ctx,
    state.inFlight?.held === true,
  );
  return decided(step, state, ctx);
}

/**
 * A follow-up's request as its decision sends it: published now, or — while the sale's serial is
 * asked for — written held, the question asked at once and urgent (the follow-up waits on it).
 */
export function followUpSend(
  payment: OpenPayment,
  request: GatewayFollowUpRequest,
  ctx: DecisionContext,
): Effect[] {
  const mark = payment.serialPending;
  if (mark === undefined) return [{ type: 'send-gateway-request', request }];
  return [
    { type: 'send-gateway-request', request, held: true },
    ...askNowForFollowUp(mark, orderOf(payment.paymentId, payment), ctx),
  ];
}

/** A decision that leaves a newly marked sale also asks about its serial (the first query's timer). */
export function withSerialQuestion(
  decision: Decision,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  if (decision.outcome !== 'accepted') return decision;
  if (state.status !== 'initial' && state.serialPending !== undefined) return decision;
  if (!decision.events.some(settlesMain)) return decision;
  const after = fold(state, decision.events);
  const mark = after.status === 'initial' ? undefined : after.serialPending;
  return mark === undefined
    ? decision
    : { ...decision, effects: [...decision.effects, firstSerialQuery(mark, ctx.now)] };
}

const settlesMain = (event: PaymentEvent): boolean =>
  event.type === 'approved' || event.type === 'authorized';
