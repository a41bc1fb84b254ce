import type { PaymentEvent } from '@payments/contracts';
import type { DecisionContext } from './decision';
import {
  DEFAULT_POLICY,
  type Decision,
  type IgnoreReason,
  type PaymentPolicy,
  type Rejection,
} from './decision';
import type { Effect } from './effects';
import type { PaymentState } from './state';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An event before the decider stamps payment id, version and time on it. */
export type EventDraft = DistributiveOmit<PaymentEvent, 'paymentId' | 'version' | 'occurredAt'>;

/** Versions continue the state's: state.version + 1, + 2, … in the order given. */
export function stamp(
  state: PaymentState,
  paymentId: string,
  now: string,
  drafts: EventDraft[],
): PaymentEvent[] {
  return drafts.map((d, i) => ({
    ...d,
    paymentId,
    version: state.version + i + 1,
    occurredAt: now,
  }));
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
  return { outcome: 'ignored', reason, events: [], effects };
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

export function policyOf(ctx: DecisionContext): PaymentPolicy {
  return ctx.policy ?? DEFAULT_POLICY;
}

export function addMs(iso: string, ms: number): string {
  return new Date(Date.parse(iso) + ms).toISOString();
}

export function msBetween(fromIso: string, toIso: string): number {
  return Date.parse(toIso) - Date.parse(fromIso);
}
