import { type RejectionArgs, rejectionFields } from '../../domain/rejection';
import type { PayoutEvent, PayoutOperation } from '@payments/contracts';
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

/** The commands of one-step and two-step payouts (the budget answer is internal: start-saga only). */
export const PAYOUT_COMMANDS = [
  'payout',
  'payout-v4',
  'payout-form',
  'payout-check',
  'approve-payout',
  'reject-payout',
  'refresh-payout-status',
  'payout-budget-answer',
] as const satisfies ReadonlyArray<PayoutDomainCommand['type']>;

const TIMER_KINDS: readonly PayoutTimer['kind'][] = [
  'status-poll',
  'unknown-alert',
  'approval-expiry',
];

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
    commandTypes: PAYOUT_COMMANDS,
    initialState: initialPayoutState,
    timerKinds: TIMER_KINDS,
    operations: PAYOUT_OPERATIONS,
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
