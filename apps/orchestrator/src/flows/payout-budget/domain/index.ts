/**
 * The money-out kit: the per-endpoint daily budget every money-out flow (payouts, transfers)
 * reserves from before it sends, and the rules for its answers and refusals.
 */
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
export { type BudgetRequest, type PublishHeldRequest, utcDay } from './requests';
