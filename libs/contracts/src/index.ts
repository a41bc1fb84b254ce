export { findPlainCardData } from './plain-card-data';
export { buildAsyncApiDocument } from './asyncapi';
export { TOPICS } from './topics';
export {
  ADMIN_ACTIONS,
  AdminAction,
  AdminActionAudited,
  AdminRole,
  type LiveEvent,
  type LiveMinute,
  type LiveMinutes,
  type MoneyFigures,
  type ReconciliationMismatchRow,
  type ReconciliationRunDetail,
  type ReconciliationRunSummary,
  type SagaDetail,
  type SagaPage,
  type SagaSummary,
} from './admin';
export {
  MISMATCH_KINDS,
  MismatchKind,
  ReconcileCommand,
  ReconciliationCompleted,
  ReconciliationEvent,
  ReconciliationMismatch,
} from './reconciliation';
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
  AccountVerificationCommand,
  AccountVerificationFormCommand,
  PaymentFormCommand,
  PreauthFormCommand,
  SaleFormCommand,
  UploadCresResultCommand,
  UploadMethodUrlResultCommand,
  UploadParesResultCommand,
} from './commands';
export {
  ALL_COMMAND_SCHEMAS,
  ALL_EVENT_SCHEMAS,
  type AllCommandSchemas,
  type AllEventSchemas,
  type AnyCommand,
  type AnyCommandType,
  type AnyEvent,
  commandSagaId,
  disjoint,
  FLOW_FAMILIES,
  INTERNAL_COMMAND_TYPES,
  type InternalCommandType,
  SAGA_ID_FIELDS,
  sagaIdOf,
} from './flow-families';
export { type FlowFamily, flowFamily } from './flow-family';
export {
  isRecurringCommandType,
  parseCommand,
  type ParseCommandResult,
  parseRecurringCommand,
} from './parse-command';
export {
  CaptureCommand,
  PaymentCommand,
  PreauthCommand,
  RefreshStatusCommand,
  ReturnCommand,
  SaleCommand,
  VoidCommand,
} from './commands';
export { type CardReferenceEvent, EVENT_SCHEMAS, parseEvent, PaymentEvent } from './events';
export {
  CallbackMessage,
  GatewayCallback,
  GatewayClassification,
  GatewayAccountVerificationFormRequest,
  GatewayAccountVerificationRequest,
  GatewayFollowUpRequest,
  GatewayHostedFormRequest,
  GatewayUploadCresResultRequest,
  GatewayUploadMethodUrlResultRequest,
  GatewayUploadParesResultRequest,
  GatewayPayoutCheckRequest,
  GatewayPayoutPayRequest,
  GatewayCardInfoRequest,
  GatewayCardRefRequest,
  GatewayRebillRequest,
  GatewayCreateRecurringPaymentRequest,
  GatewayPayoutRequest,
  GatewayPayoutFormRequest,
  GatewayTransferRequest,
  GatewayPanEligibilityRequest,
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
  OneStepPayoutCommand,
  PayoutV4Command,
  PayoutFormCommand,
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
  RefreshPayoutStatusCommand,
  ReleasePayoutBudgetCommand,
  ReservePayoutBudgetCommand,
} from './payouts';
export {
  AnyTransferCommand,
  parseTransferEvent,
  TRANSFER_COMMAND_SCHEMAS,
  TRANSFER_EVENT_SCHEMAS,
  TransferByRefCommand,
  RefreshTransferStatusCommand,
  TransferCommand,
  TransferEvent,
  TransferOperation,
} from './transfers';
export {
  GatewayCardRefId,
  PAN_ELIGIBILITY_COMMAND_SCHEMAS,
  PAN_ELIGIBILITY_EVENT_SCHEMAS,
  PanEligibilityCommand,
  PanEligibilityEvent,
  PanEligibilityOperation,
  parsePanEligibilityEvent,
} from './pan-eligibility';
export { open, seal, SEALED_CARD_FIELDS } from './sealing';
export {
  CardRef,
  type CardReferenceCommand,
  CreateCardRefCommand,
  GetCardInfoCommand,
  isPaymentAddressed,
  isCalendarDate,
  isIanaTimeZone,
  CreateScheduleCommand,
  RebillCommand,
  RecordCycleOutcomeCommand,
  RECURRING_COMMAND_SCHEMAS,
  RecurringCommand,
  ScheduleCommand,
  ScheduleOnNewCardRef,
  UpdateScheduleCommand,
  ScheduleEvent,
  SCHEDULE_EVENT_SCHEMAS,
  ScheduleRule,
} from './schedules';
export { GatewaySerial, OPERATION_EVENT_FIELDS, UnknownConcern } from './operation-events';
