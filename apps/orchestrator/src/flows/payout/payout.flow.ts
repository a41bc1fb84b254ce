import { type RejectionArgs, rejectionFields } from '../../domain/rejection';
import type { PayoutEvent } from '@payments/contracts';
import type { Flow, RuntimeEffect, SagaInput } from '../../runtime/flow';
import {
  decidePayout,
  evolvePayout,
  FINAL_PAYOUT_STATUSES,
  initialPayoutState,
  payoutBudgetId,
  type PayoutDomainCommand,
  type PayoutEffect,
  type PayoutInput,
  type PayoutPolicy,
  type PayoutState,
  type PayoutTimer,
} from './domain';
import { payoutCallbackInput, payoutResultInput } from './gateway-vocabulary';

export const PAYOUT_FLOW = 'payout';

/** The commands of the two-step payout (the budget answer is internal: start-saga only). */
export const PAYOUT_COMMANDS = [
  'payout-check',
  'approve-payout',
  'reject-payout',
  'payout-budget-answer',
] as const satisfies ReadonlyArray<PayoutDomainCommand['type']>;

const TIMER_KINDS: ReadonlySet<string> = new Set<PayoutTimer['kind']>([
  'status-poll',
  'unknown-alert',
  'approval-expiry',
]);

export function payoutRejectionEvent(args: RejectionArgs & { sagaId: string }): PayoutEvent {
  return { type: 'payout-command-rejected', payoutId: args.sagaId, ...rejectionFields(args) };
}

function toDomainInput(input: SagaInput): PayoutInput | undefined {
  switch (input.kind) {
    case 'command':
      return { kind: 'command', command: input.command.body as PayoutDomainCommand };
    case 'gateway-result':
      return payoutResultInput(input.result);
    case 'callback':
      return payoutCallbackInput(input.callback);
    case 'status-check-hint':
      return { kind: 'status-check-hint', hint: input.hint };
    case 'timer':
      return TIMER_KINDS.has(input.timer.kind)
        ? { kind: 'timer-fired', timer: input.timer.payload as PayoutTimer }
        : undefined;
    default: {
      const never: never = input;
      throw new Error(`unhandled input ${JSON.stringify(never)}`);
    }
  }
}

/** The payout decider's effects in the runtime's vocabulary; budget calls become child commands. */
function toRuntimeEffect(
  effect: PayoutEffect,
  now: string,
  ids: { next(): string },
): RuntimeEffect {
  switch (effect.type) {
    case 'send-gateway-request':
    case 'resend-gateway-request':
      return effect;
    case 'schedule-timer':
      return { type: 'set-timer', kind: effect.timer.kind, at: effect.at, payload: effect.timer };
    case 'cancel-timer':
      return { type: 'cancel-timer', kind: effect.timer };
    case 'reserve-budget':
      return {
        type: 'start-saga',
        command: {
          type: 'reserve-payout-budget',
          commandId: ids.next(),
          budgetId: payoutBudgetId(effect.merchant.endpointId, effect.amount.currency, effect.day),
          merchant: effect.merchant,
          occurredAt: now,
          payoutId: effect.payoutId,
          amount: effect.amount,
          day: effect.day,
        },
      };
    case 'release-budget':
      return {
        type: 'start-saga',
        command: {
          type: 'release-payout-budget',
          commandId: ids.next(),
          budgetId: payoutBudgetId(effect.merchant.endpointId, effect.currency, effect.day),
          merchant: effect.merchant,
          occurredAt: now,
          payoutId: effect.payoutId,
        },
      };
    default: {
      const never: never = effect;
      throw new Error(`unhandled effect ${JSON.stringify(never)}`);
    }
  }
}

/** The two-step payout flow: payout-check → approval → payout-pay (issue #11). */
export function payoutFlow(policy: PayoutPolicy): Flow<PayoutState, PayoutEvent> {
  return {
    name: PAYOUT_FLOW,
    commandTypes: PAYOUT_COMMANDS,
    initialState: initialPayoutState,
    decide(input, state, ctx) {
      const domainInput = toDomainInput(input);
      if (domainInput === undefined)
        return { outcome: 'ignored', reason: 'TIMER_OBSOLETE', events: [], effects: [] };
      const decision = decidePayout(domainInput, state, { ...ctx, policy });
      switch (decision.outcome) {
        case 'accepted':
        case 'ignored':
          return {
            ...decision,
            effects: decision.effects.map((e) => toRuntimeEffect(e, ctx.now, ctx.ids)),
          };
        case 'rejected':
          return decision;
        default: {
          const never: never = decision;
          throw new Error(`unhandled decision ${JSON.stringify(never)}`);
        }
      }
    },
    evolve: evolvePayout,
    project(state) {
      return state.status === 'initial'
        ? { status: state.status, kind: null, settled: false }
        : {
            status: state.status,
            kind: 'two-step-payout',
            endpointId: state.merchant.endpointId,
            clientOrderId: state.clientOrderId,
            // The payout-check's sealed card is needed only until the check has its outcome.
            settled: state.status !== 'checking',
          };
    },
    rejection: payoutRejectionEvent,
    resendWanted: (state, requestId) =>
      state.status !== 'initial' &&
      !FINAL_PAYOUT_STATUSES.has(state.status) &&
      state.inFlight?.requestId === requestId,
  };
}
