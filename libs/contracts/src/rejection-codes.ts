import { z } from 'zod';

/**
 * Stable reasons for refusing a command. Transport-level codes come from `parseCommand`, business
 * codes from the payment decider; both share this one enum so consumers switch over one list.
 * Codes are part of the public contract: add, never rename or reuse.
 */
export const RejectionCode = z.enum([
  // transport / schema
  'MALFORMED',
  'UNKNOWN_TYPE',
  'SCHEMA_INVALID',
  'PLAIN_CARD_DATA',
  // idempotency
  'DUPLICATE_COMMAND_CONFLICT',
  // business rules
  'PAYMENT_ALREADY_EXISTS',
  'PAYMENT_NOT_FOUND',
  'MERCHANT_MISMATCH',
  'OPERATION_IN_PROGRESS',
  'INVALID_STATE',
  'NOT_A_PREAUTH',
  'CURRENCY_MISMATCH',
  'INVALID_AMOUNT',
  'AMOUNT_EXCEEDS_AUTHORIZED',
  'AMOUNT_EXCEEDS_CAPTURED',
  'PARTIAL_VOID_NOT_SUPPORTED',
  'PARTIAL_HOLD_RELEASE_NOT_SUPPORTED',
  'NOTHING_TO_REFRESH',
  // per-endpoint limits, checked before the gateway
  'AMOUNT_BELOW_MINIMUM',
  'AMOUNT_ABOVE_MAXIMUM',
  'CURRENCY_NOT_ALLOWED',
  // payouts
  'PAYOUT_ALREADY_EXISTS',
  'PAYOUT_NOT_FOUND',
  'PAYOUT_NOT_REGISTERED',
  'PAYOUT_ALREADY_APPROVED',
  'PAYOUT_REJECTED',
  'PAYOUT_EXPIRED',
  /** An approval or rejection of a one-step payout (it has no approval step). */
  'PAYOUT_NOT_TWO_STEP',
  /** Four eyes: the second approval of a payout came from the person who gave the first. */
  'PAYOUT_SAME_APPROVER',
  /** Four eyes: the second approval of a payout needs the approver role. */
  'PAYOUT_APPROVER_ROLE_REQUIRED',
  'TRANSFER_ALREADY_EXISTS',
  'TRANSFER_NOT_FOUND',
  'CHECK_ALREADY_EXISTS',
  'DAILY_PAYOUT_LIMIT_EXCEEDED',
  /** A command type only the orchestrator itself issues, received on the commands topic. */
  'INTERNAL_COMMAND',
  // recurring schedules
  'SCHEDULE_ALREADY_EXISTS',
  'SCHEDULE_NOT_FOUND',
  'INVALID_SCHEDULE',
  /**
   * A change (pause, resume, update, cancel) of a schedule registered with the gateway: the
   * gateway's interface offers no operation to change or stop a recurring payment.
   */
  'NOT_SUPPORTED_BY_GATEWAY',
  // 3-D Secure uploads
  /** An upload (method result, CRes, PaRes) for a payment with no sale/preauth awaiting the payer. */
  'NO_PAYER_ACTION_PENDING',
  // cases (issue 33)
  /** A case's decision about a request no longer in flight, or whose outcome is not unknown. */
  'CASE_OPERATION_SETTLED',
  /** A case's decision that does not hold together ("done" without the gateway's amount …). */
  'CASE_DECISION_INVALID',
]);
export type RejectionCode = z.infer<typeof RejectionCode>;
