import { type RejectionArgs, rejectionFields } from '../../domain/rejection';
import { OPERATION_TIMER_KINDS } from '../../domain/gateway-operation/gateway-operation';
import {
  commandTypesOf,
  PAYOUT_FAMILY,
  type PayoutEvent,
  type PayoutOperation,
} from '@payments/contracts';
import type { Flow } from '../../runtime/flow';
import { gatewayFlow } from '../../runtime/flow-binding';
import {
  decidePayout,
  evolvePayout,
  FINAL_PAYOUT_STATUSES,
  initialPayoutState,
  type PayoutDomainCommand,
  type PayoutEffect,
  type PayoutPolicy,
  type PayoutState,
  type PayoutTimer,
} from './domain';
import { budgetOrRuntimeEffect } from '../payout-budget/payout-budget.flow';
import { PAYOUT_OPERATIONS } from './gateway-vocabulary';

export const PAYOUT_FLOW = 'payout';

export function payoutRejectionEvent(args: RejectionArgs & { sagaId: string }): PayoutEvent {
  return { type: 'payout-command-rejected', payoutId: args.sagaId, ...rejectionFields(args) };
}

/** Payouts: one-step (v2 payout, v4 payout) and two-step (payout-check → approval → payout-pay). */
export function payoutFlow(policy: PayoutPolicy): Flow<PayoutState, PayoutEvent> {
  return gatewayFlow<
    PayoutState,
    PayoutEvent,
    PayoutDomainCommand,
    PayoutTimer,
    PayoutOperation,
    PayoutEffect
  >({
    name: PAYOUT_FLOW,
    // One-step and two-step payouts (the budget answer is internal: start-saga only).
    commandTypes: commandTypesOf(PAYOUT_FAMILY),
    initialState: initialPayoutState,
    timerKinds: [...OPERATION_TIMER_KINDS, 'approval-expiry'],
    operations: PAYOUT_OPERATIONS,
    ...(policy.resultDeadlineMs === undefined ? {} : { resultDeadlineMs: policy.resultDeadlineMs }),
    decide: (input, state, ctx) => decidePayout(input, state, { ...ctx, policy }),
    effect: budgetOrRuntimeEffect,
    evolve: evolvePayout,
    project(state) {
      return state.status === 'initial'
        ? { status: state.status, kind: null, settled: false }
        : {
            status: state.status,
            kind: `${state.mode}-payout`,
            endpointId: state.merchant.endpointId,
            clientOrderId: state.clientOrderId,
            // The sealed card of payout-check or a one-step payout is needed only until that
            // operation has its outcome (payout-pay carries none).
            settled:
              state.status !== 'checking' &&
              !(state.mode === 'one-step' && !FINAL_PAYOUT_STATUSES.has(state.status)),
          };
    },
    rejection: payoutRejectionEvent,
    resendWanted: (state, requestId) =>
      state.status !== 'initial' &&
      !FINAL_PAYOUT_STATUSES.has(state.status) &&
      state.inFlight?.requestId === requestId,
  });
}
