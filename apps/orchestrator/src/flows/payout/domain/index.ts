export { decidePayout } from './decide';
export { evolvePayout, foldPayout } from './evolve';
export { approvalStep, needsFourEyes, type ApprovalStep } from './four-eyes';
export {
  amountRefusal,
  limitsOf,
  DEFAULT_PAYOUT_POLICY,
  FINAL_PAYOUT_STATUSES,
  initialPayoutState,
  type PayoutDomainCommand,
  type PayoutEffect,
  type PayoutInput,
  type PayoutLimits,
  type PayoutPolicy,
  type PayoutState,
  type PayoutTimer,
} from './model';
