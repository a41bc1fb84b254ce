import type { PaymentEvent } from '@payments/contracts';
import { type Draft, ignoredWith, stampDrafts } from '../../../domain/decision';
import type { DecisionContext } from './decision';
import {
  DEFAULT_POLICY,
  type Decision,
  type IgnoreReason,
  type PaymentPolicy,
  type Rejection,
} from './decision';
import type { Effect } from './effects';
import type { OpenPayment, PaymentState } from './state';

/** An event before the decider stamps payment id, version and time on it. */
export type EventDraft = Draft<PaymentEvent, 'paymentId'>;

/** Versions continue the state's: state.version + 1, + 2, … in the order given. */
export function stamp(
  state: PaymentState,
  paymentId: string,
  now: string,
  drafts: EventDraft[],
): PaymentEvent[] {
  return stampDrafts<PaymentEvent, 'paymentId'>(state.version, { paymentId }, now, drafts);
}

export function accepted(
  state: PaymentState,
  paymentId: string,
  ctx: DecisionContext,
  drafts: EventDraft[],
  effects: Effect[],
): Decision {
  return { outcome: 'accepted', events: stamp(state, paymentId, ctx.now, drafts), effects };
}

export function ignored(reason: IgnoreReason, effects: Effect[] = []): Decision {
  return ignoredWith(reason, effects);
}

export function rejected(
  state: PaymentState,
  command: { commandId: string; paymentId: string; type: string },
  ctx: DecisionContext,
  rejection: Rejection,
): Decision {
  const events = stamp(state, command.paymentId, ctx.now, [
    {
      type: 'command-rejected',
      commandId: command.commandId,
      commandType: command.type,
      reason: rejection.code,
      message: rejection.message,
    },
  ]);
  return { outcome: 'rejected', rejection, events, effects: [] };
}

/** The fields of a payment's request on its first send (resends keep them, the attempt bumped). */
export function firstSend(payment: OpenPayment, requestId: string, ctx: DecisionContext) {
  return {
    requestId,
    paymentId: payment.paymentId,
    merchant: payment.merchant,
    clientOrderId: payment.clientOrderId,
    attempt: 1,
    requestedAt: ctx.now,
  };
}

export function policyOf(ctx: DecisionContext): PaymentPolicy {
  return ctx.policy ?? DEFAULT_POLICY;
}

export { addMs, msBetween } from '../../../domain/decision';
