import { z } from 'zod';
import { CardSummary, Instant, MerchantRef, Money, PaymentOperation, Uuid } from './primitives';
import { unionOf, parseWith } from './flow-family';
import { GATEWAY_ERROR_FIELDS, operationLifecycle } from './operation-events';
import { CardRef, ScheduleLink, ScheduleOnNewCardRef } from './schedules';

/**
 * Events on `payments.events.v1`, the authoritative lifecycle of a payment. Every event carries the
 * payment id, the command that caused it, a per-payment version (1, 2, 3, … with no gaps) and the
 * time. Amounts are Money; card data is at most BIN, last four and brand.
 */
const lifecycle = operationLifecycle('paymentId', '', PaymentOperation);
const { event, operationRef } = lifecycle;

/** A sale, preauth, capture, void or return was decided and its gateway request issued. */
export const OperationRequested = event('operation-requested', {
  ...operationRef,
  amount: Money,
  clientOrderId: z.string().min(1).max(128),
  /** Present on the first event of a payment (sale, preauth or rebill). */
  merchant: MerchantRef.optional(),
  /** A rebill: the card reference charged (its id only). */
  cardRef: CardRef.optional(),
  /** A rebill a recurring schedule started: the cycle and dunning attempt it charges. */
  schedule: ScheduleLink.optional(),
  /** The payer enters the card on the gateway's hosted page (sale-form, preauth-form, …). */
  via: z.literal('hosted-form').optional(),
  /**
   * The gateway decides which transaction this is (the universal payment-form: a sale or a
   * preauth, as the merchant's endpoint is set up). `operation` is only the assumption; the
   * outcome names what the gateway's answer says it was (`approved`, or `authorized` to capture).
   */
  transactionByGateway: z.literal(true).optional(),
});

/** The gateway took the request; the outcome follows through status or callback. */
export const AcceptedByGateway = lifecycle.acceptedByGateway;

/** The payer must act: 3-D Secure challenge or hosted form. */
export const ActionRequired = lifecycle.actionRequired;

/** See OPERATION_EVENT_FIELDS.outcomeUnknown. */
export const OutcomeUnknown = lifecycle.outcomeUnknown;

/** See OPERATION_EVENT_FIELDS.operationResent. */
export const OperationResent = lifecycle.operationResent;

/** A sale was approved: the money is taken. */
export const Approved = event('approved', {
  requestId: Uuid,
  amount: Money,
  gatewayOrderId: z.string().max(128).optional(),
  approvalCode: z.string().max(64).optional(),
  card: CardSummary.optional(),
});

/** An account verification was approved: the card account is in good standing, nothing charged. */
export const AccountVerified = event('account-verified', {
  requestId: Uuid,
  gatewayOrderId: z.string().max(128).optional(),
  approvalCode: z.string().max(64).optional(),
  card: CardSummary.optional(),
});

/** A preauth was approved: the amount is on hold. */
export const Authorized = event('authorized', {
  requestId: Uuid,
  amount: Money,
  gatewayOrderId: z.string().max(128).optional(),
  approvalCode: z.string().max(64).optional(),
  card: CardSummary.optional(),
});

/** The issuer or the gateway declined the operation. For capture/void/return the payment keeps its earlier state. */
export const Declined = lifecycle.declined({ card: CardSummary.optional() });

/** See `operationLifecycle`: gateway `error` or `filtered`, `rejected`, or `not-sent`. */
export const Failed = lifecycle.failed;

/**
 * The gateway captures an authorization once: `amount` is settled and the rest of the hold is
 * let go at the same time (`released`; zero for a full capture). `remainingAuthorized` is what is
 * still authorized afterwards, always zero (kept for consumers that read it).
 */
export const Captured = event('captured', {
  requestId: Uuid,
  amount: Money,
  totalCaptured: Money,
  remainingAuthorized: Money,
  released: Money,
});

/** A void: of an authorization (the hold released) or of a sale or capture before settlement. */
export const Voided = event('voided', {
  requestId: Uuid,
  /** The hold released, or the charge cancelled. */
  amount: Money,
});

export const Returned = event('returned', {
  requestId: Uuid,
  amount: Money,
  totalReturned: Money,
  /** What is still returnable (captured minus returned). */
  remainingBalance: Money,
  /** True when the return cancelled an uncaptured preauth (released the hold). */
  holdReleased: z.boolean(),
});

/** An authorization reached its hold expiry uncaptured; `action` says what the saga does about it. */
export const HoldExpired = event('hold-expired', {
  action: z.enum(['void', 'report']),
  amount: Money,
});

export const CommandRejected = lifecycle.commandRejected;

/** create-card-ref was sent for this (successful) payment's order. */
export const CardRefRequested = event('card-ref-requested', {
  requestId: Uuid,
  /** The schedule create-card-ref was asked to start on the new reference. */
  schedule: ScheduleOnNewCardRef.optional(),
});

/**
 * The gateway made a card reference of this payment's card. What is kept of the card: the
 * reference id, BIN, last four and brand; never the number, CVV or expiry.
 */
export const CardRefCreated = event('card-ref-created', {
  requestId: Uuid,
  cardRef: CardRef,
  card: CardSummary.optional(),
  /** The schedule started on this reference (its create-schedule, started by the payment saga). */
  schedule: ScheduleOnNewCardRef.optional(),
});

/** get-card-info was sent for the payment's card reference. */
export const CardInfoRequested = event('card-info-requested', {
  requestId: Uuid,
  cardRef: CardRef,
});

/** The gateway's card info of the reference: BIN, last four and brand only. */
export const CardInfoReported = event('card-info-reported', {
  requestId: Uuid,
  cardRef: CardRef,
  card: CardSummary,
});

/**
 * The reply to a create-card-ref or get-card-info was lost. It is not a failure: the same request
 * is asked again until it is answered (the gateway keeps one reference per order, so a repeated
 * create-card-ref answers with the same reference; get-card-info only reads). `alert` is set once it
 * has lasted as long as an unknown payment outcome may (the unknown-outcome alert).
 */
export const CardReferenceUnknown = event('card-reference-unknown', {
  requestId: Uuid,
  operation: z.enum(['create-card-ref', 'get-card-info']),
  since: Instant,
  alert: z.boolean(),
});

/**
 * create-card-ref or get-card-info did not succeed. Neither moves money; the same command with a
 * new id may be sent again (the gateway keeps one reference per order). `unknown` appears only in
 * histories from before a lost reply was asked again (card-reference-unknown).
 */
export const CardReferenceFailed = event('card-reference-failed', {
  requestId: Uuid,
  operation: z.enum(['create-card-ref', 'get-card-info']),
  reason: z.enum(['rejected', 'not-sent', 'unknown']),
  ...GATEWAY_ERROR_FIELDS,
});

export type OperationRequested = z.infer<typeof OperationRequested>;
export type AcceptedByGateway = z.infer<typeof AcceptedByGateway>;
export type ActionRequired = z.infer<typeof ActionRequired>;
export type OutcomeUnknown = z.infer<typeof OutcomeUnknown>;
export type OperationResent = z.infer<typeof OperationResent>;
export type Approved = z.infer<typeof Approved>;
export type Authorized = z.infer<typeof Authorized>;
export type AccountVerified = z.infer<typeof AccountVerified>;
export type Declined = z.infer<typeof Declined>;
export type Failed = z.infer<typeof Failed>;
export type Captured = z.infer<typeof Captured>;
export type Voided = z.infer<typeof Voided>;
export type Returned = z.infer<typeof Returned>;
export type HoldExpired = z.infer<typeof HoldExpired>;
export type CommandRejected = z.infer<typeof CommandRejected>;
export type CardReferenceEvent = z.infer<
  | typeof CardRefRequested
  | typeof CardRefCreated
  | typeof CardInfoRequested
  | typeof CardInfoReported
  | typeof CardReferenceUnknown
  | typeof CardReferenceFailed
>;

export const EVENT_SCHEMAS = {
  'operation-requested': OperationRequested,
  'accepted-by-gateway': AcceptedByGateway,
  'action-required': ActionRequired,
  'outcome-unknown': OutcomeUnknown,
  'operation-resent': OperationResent,
  approved: Approved,
  authorized: Authorized,
  'account-verified': AccountVerified,
  declined: Declined,
  failed: Failed,
  captured: Captured,
  voided: Voided,
  returned: Returned,
  'hold-expired': HoldExpired,
  'command-rejected': CommandRejected,
  'card-ref-requested': CardRefRequested,
  'card-ref-created': CardRefCreated,
  'card-info-requested': CardInfoRequested,
  'card-info-reported': CardInfoReported,
  'card-reference-unknown': CardReferenceUnknown,
  'card-reference-failed': CardReferenceFailed,
} as const;

export const PaymentEvent = unionOf(EVENT_SCHEMAS);
export type PaymentEvent = z.infer<typeof PaymentEvent>;
export type PaymentEventType = PaymentEvent['type'];

export type ParseEventResult = ReturnType<typeof parseEvent>;

/** For consumers of `payments.events.v1`. */
export function parseEvent(input: unknown) {
  return parseWith(PaymentEvent, input);
}
