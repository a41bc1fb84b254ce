import type { OrchestratorConfig } from '../config';
import type { Flow } from '../runtime/flow';
import { cardPaymentFlow } from './card-payment/card-payment.flow';
import { cardPaymentPolicy } from './card-payment/policy';
import { panEligibilityFlow } from './pan-eligibility/pan-eligibility.flow';
import { payoutBudgetFlow } from './payout-budget/payout-budget.flow';
import { payoutFlow } from './payout/payout.flow';
import { payoutPolicy } from './payout/policy';
import { schedulePolicy } from './recurring-schedule/policy';
import { recurringScheduleFlow } from './recurring-schedule/recurring-schedule.flow';
import { transferFlow } from './transfer/transfer.flow';

/**
 * The flows the saga runtime hosts (app.module.ts provides them as `FLOWS`). Every one of them
 * is named in reconciliation/reconciled-flows.ts, which a test checks against this list.
 */
export function registeredFlows(config: OrchestratorConfig): Flow[] {
  return [
    cardPaymentFlow(cardPaymentPolicy(config)),
    payoutFlow(payoutPolicy(config)),
    payoutBudgetFlow(payoutPolicy(config)),
    recurringScheduleFlow(schedulePolicy(config)),
    transferFlow(payoutPolicy(config)),
    panEligibilityFlow(payoutPolicy(config)),
  ];
}
