export { decide } from './decide';
export { evolve, fold } from './evolve';
export { initialState, isSettled, FINAL_STATUSES } from './state';
export type {
  PaymentState,
  PaymentStatus,
  InFlightOperation,
  OperationStage,
  PaymentKind,
} from './state';
export type { PaymentInput, Timer, TimerKind, HoldExpiryAction } from './inputs';
export type { Effect } from './effects';
export { DEFAULT_POLICY } from './decision';
export type { Decision, DecisionContext, PaymentPolicy, Rejection, IgnoreReason } from './decision';
