/** The payout budget's chaos companion: the orchestrator's own saga, started by no command. */
import { PAYOUT_BUDGET_FAMILY } from '@payments/contracts';
import { chaosCompanion } from './companion';

export const payoutBudgetCompanion = chaosCompanion(PAYOUT_BUDGET_FAMILY, {
  family: PAYOUT_BUDGET_FAMILY.name,
  scenarios: [],
  noScenariosBecause:
    'the orchestrator reserves and releases the daily budget itself for every payout and transfer; the checks bound it by the ledger (money out over the daily limit)',
  commands: {},
  events: {
    'payout-budget-reserved': { role: 'none' },
    'payout-budget-refused': { role: 'none' },
    'payout-budget-released': { role: 'none' },
    'payout-budget-command-rejected': { role: 'none' },
  },
  mayMove: {},
});
