import { commandTypesOf, PAYOUT_BUDGET_FAMILY, type PayoutBudgetEvent } from '@payments/contracts';
import { ignoredWith, unhandled } from '../../domain/decision';
import type { Flow, RuntimeEffect } from '../../runtime/flow';
import { runtimeEffectOf } from '../../runtime/flow-binding';
import { inRuntimeTerms } from '../flow-decision';
import { type PayoutPolicy } from '../payout/domain';
import {
  budgetRejection,
  type BudgetCommand,
  type BudgetRequest,
  type BudgetState,
  decideBudget,
  evolveBudget,
  initialBudgetState,
  payoutBudgetId,
} from './domain';

export const PAYOUT_BUDGET_FLOW = 'payout-budget';

/**
 * The per-endpoint daily payout budget as a saga (one per endpoint, currency and UTC day): the
 * row lock of this saga is what makes the daily limit hold under concurrent approvals.
 */
export function payoutBudgetFlow(policy: PayoutPolicy): Flow<BudgetState, PayoutBudgetEvent> {
  return {
    name: PAYOUT_BUDGET_FLOW,
    // Internal commands only (start-saga from the payout and transfer flows).
    commandTypes: commandTypesOf(PAYOUT_BUDGET_FAMILY),
    initialState: initialBudgetState,
    decide(input, state, ctx) {
      if (input.kind !== 'command') return ignoredWith('NOT_A_COMMAND');
      return inRuntimeTerms(
        decideBudget(input.command.body as BudgetCommand, state, { ...ctx, policy }),
        (e) => ({ type: 'start-saga', command: e.command }),
      );
    },
    evolve: evolveBudget,
    project(state) {
      return state.status === 'initial'
        ? { status: state.status, kind: null, settled: true }
        : {
            status: state.status,
            kind: 'payout-budget',
            endpointId: state.merchant.endpointId,
            settled: true,
          };
    },
    rejection: ({ sagaId, ...rest }) => budgetRejection({ budgetId: sagaId, ...rest }),
    resendWanted: () => false,
  };
}

/**
 * A money-out saga's call on the budget (budget.ts `BudgetRequest`, from a payout or a transfer)
 * as the child command that reaches the budget saga of (endpoint, currency, day).
 */
export function budgetCommand(
  effect: BudgetRequest,
  now: string,
  ids: { next(): string },
): RuntimeEffect {
  switch (effect.type) {
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
    default:
      return unhandled(effect, 'effect');
  }
}

/**
 * A money-out decider's effects (a payout's, a transfer's) in the runtime's vocabulary: its
 * budget calls as child commands, the rest as every gateway flow's.
 */
export function budgetOrRuntimeEffect(
  effect: BudgetRequest | Parameters<typeof runtimeEffectOf>[0],
  ctx: { readonly now: string; readonly ids: { next(): string } },
): RuntimeEffect {
  return effect.type === 'reserve-budget' || effect.type === 'release-budget'
    ? budgetCommand(effect, ctx.now, ctx.ids)
    : runtimeEffectOf(effect);
}
