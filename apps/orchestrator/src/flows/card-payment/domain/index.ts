export { decide } from './decide';
export { cardRefResendWanted } from './card-reference';
export { evolve, fold } from './evolve';
export { initialState, isOpen, isSettled, resendStillWanted, FINAL_STATUSES } from './state';
export type {
  PaymentState,
  PaymentStatus,
  InFlightOperation,
  OperationStage,
  PaymentKind,
  InitialPayment,
  PendingPayment,
  SucceededPayment,
  FailedPayment,
  OpenPayment,
} from './state';
export type { PaymentInput, Timer, TimerKind, HoldExpiryAction } from './inputs';
export type { Effect } from './effects';
export { DEFAULT_POLICY } from './decision';
export type { Decision, DecisionContext, PaymentPolicy, Rejection, IgnoreReason } from './decision';
