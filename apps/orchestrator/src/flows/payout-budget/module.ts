import { PAYOUT_BUDGET_FAMILY } from '@payments/contracts';
import type { FlowModule } from '../flow-module';
import { payoutPolicy } from '../payout/policy';
import { PAYOUT_BUDGET_FLOW, payoutBudgetFlow } from './payout-budget.flow';

/** The per-endpoint daily payout budget (one saga per endpoint, currency, UTC day). */
export const payoutBudgetModule: FlowModule = {
  name: PAYOUT_BUDGET_FLOW,
  family: PAYOUT_BUDGET_FAMILY,
  flow: (config) => payoutBudgetFlow(payoutPolicy(config)),
  // Bookkeeping of reservations: no gateway request.
  reconciliation: 'moves-no-money',
  moneyEvents: [],
};
