export { decidePayout } from './decide';
export { evolvePayout, foldPayout } from './evolve';
export { approvalStep, needsFourEyes, type ApprovalStep } from './four-eyes';
export {
  answerOfBudget,
  budgetRejection,
  dailyAmountRefusal,
  decideBudget,
  keepLargerReserved,
  oneStepBudgetAnswer,
  releaseOnNoPayment,
  sendWhenReserved,
  type BudgetHold,
  evolveBudget,
  initialBudgetState,
  payoutBudgetId,
  type BudgetCommand,
  type BudgetState,
} from './budget';
export {
  amountRefusal,
  limitsOf,
  utcDay,
  DEFAULT_PAYOUT_POLICY,
  FINAL_PAYOUT_STATUSES,
  initialPayoutState,
  type BudgetRequest,
  type PublishHeldRequest,
  type PayoutDomainCommand,
  type PayoutEffect,
  type PayoutInput,
  type PayoutLimits,
  type PayoutPolicy,
  type PayoutState,
  type PayoutTimer,
} from './model';
