export { findPlainCardData } from './plain-card-data';
export { buildAsyncApiDocument } from './asyncapi';
export { TOPICS } from './topics';
export {
  CardSummary,
  GatewayStatus,
  isFinalGatewayStatus,
  MerchantRef,
  Money,
  PayerAction,
  PaymentOperation,
  GatewayOperation,
  SubjectOperation,
  Uuid,
} from './primitives';
export { RejectionCode } from './rejection-codes';
export {
  ALL_COMMAND_SCHEMAS,
  type AnyCommand,
  CaptureCommand,
  commandSagaId,
  parseCommand,
  PaymentCommand,
  PreauthCommand,
  RefreshStatusCommand,
  ReturnCommand,
  SaleCommand,
  VoidCommand,
} from './commands';
export { parseEvent, PaymentEvent } from './events';
export {
  CallbackMessage,
  GatewayCallback,
  GatewayClassification,
  GatewayFollowUpRequest,
  GatewayPayoutCheckRequest,
  GatewayPayoutPayRequest,
  GatewayRequest,
  GatewayResult,
  GatewaySaleRequest,
  GatewayStatusReport,
  GatewayStatusRequest,
  StatusCheckHint,
} from './gateway';
export { CE_HEADERS, CE_SOURCES, ceType, fromKafkaHeaders, toKafkaHeaders } from './cloudevents';
export {
  childTraceparent,
  isValidTraceparent,
  newTraceparent,
  parseTraceparent,
} from './traceparent';
export { Card } from './card';
export {
  ApprovePayoutCommand,
  INTERNAL_COMMAND_TYPES,
  parsePayoutEvent,
  PAYOUT_BUDGET_EVENT_SCHEMAS,
  PAYOUT_COMMAND_SCHEMAS,
  PAYOUT_EVENT_SCHEMAS,
  PayoutBudgetAnswerCommand,
  PayoutBudgetEvent,
  PayoutCheckCommand,
  PayoutCommand,
  PayoutEvent,
  PayoutOperation,
  RejectPayoutCommand,
  ReleasePayoutBudgetCommand,
  ReservePayoutBudgetCommand,
} from './payouts';
export { open, seal } from './sealing';
export {
  CardRef,
  isCalendarDate,
  isIanaTimeZone,
  CreateScheduleCommand,
  isRecurringCommandType,
  parseRecurringCommand,
  RebillCommand,
  RecordCycleOutcomeCommand,
  RecurringCommand,
  ScheduleCommand,
  UpdateScheduleCommand,
  ScheduleEvent,
  ScheduleRule,
} from './schedules';
