import { z } from 'zod';
import { CardSummary, Instant, MerchantRef, Money, PaymentOperation, Uuid } from './primitives';
import { byType, parseWith, unionOf } from './flow-family';
import { APPROVAL_FIELDS, GATEWAY_ERROR_FIELDS, operationLifecycle } from './operation-events';
import { CardRef, ScheduleLink, ScheduleOnNewCardRef } from './schedules';
import { MerchantSeq } from './day-close';

/**
 * Events on `payments.events.v1`, the authoritative lifecycle of a payment. Every event carries the
 * payment id, the command that caused it, a per-payment version (1, 2, 3, … with no gaps) and the
 * time. Amounts are Money; card data is at most BIN, last four and brand.
 */
const lifecycle = operationLifecycle('paymentId', '', PaymentOperation);
const { event, operationRef } = lifecycle;

const CardReferenceOperation = z.enum(['create-card-ref', 'get-card-info']);

/**
 * What a case can settle on a payment (issue 33): its operation in flight, or its create-card-ref
 * whose outcome the gateway never cleared ("not done" only: the reference was not made).
 */
const DecidedPaymentOperation = z.enum([...PaymentOperation.options, 'create-card-ref']);

/** What the gateway's approval of an operation names, and what is kept of the card. */
const approval = { ...APPROVAL_FIELDS, card: CardSummary.optional() };

/**
 * A payment's card-reference events (create-card-ref, get-card-info). Neither operation moves
 * money; what is kept of the card is the reference id, BIN, last four and brand, never the number,
 * CVV or expiry.
 */
const CARD_REFERENCE_EVENTS = [
  /** create-card-ref was sent for this (successful) payment's order. */
  event('card-ref-requested', {
    requestId: Uuid,
    /** The schedule create-card-ref was asked to start on the new reference. */
    schedule: ScheduleOnNewCardRef.optional(),
  }),
  /** The gateway made a card reference of this payment's card. */
  event('card-ref-created', {
    requestId: Uuid,
    cardRef: CardRef,
    card: CardSummary.optional(),
    /** The schedule started on this reference (its create-schedule, started by the payment saga). */
    schedule: ScheduleOnNewCardRef.optional(),
  }),
  /** get-card-info was sent for the payment's card reference. */
  event('card-info-requested', { requestId: Uuid, cardRef: CardRef }),
  /** The gateway's card info of the reference: BIN, last four and brand only. */
  event('card-info-reported', { requestId: Uuid, cardRef: CardRef, card: CardSummary }),
  /**
   * The reply to a create-card-ref or get-card-info was lost. It is not a failure: the same request
   * is asked again until it is answered (the gateway keeps one reference per order, so a repeated
   * create-card-ref answers with the same reference; get-card-info only reads). `alert` is set once it
   * has lasted as long as an unknown payment outcome may (the unknown-outcome alert).
   */
  event('card-reference-unknown', {
    requestId: Uuid,
    operation: CardReferenceOperation,
    since: Instant,
    alert: z.boolean(),
  }),
  /**
   * create-card-ref or get-card-info did not succeed. Neither moves money; the same command with a
   * new id may be sent again (the gateway keeps one reference per order). `unknown` appears only in
   * histories from before a lost reply was asked again (card-reference-unknown).
   */
  event('card-reference-failed', {
    requestId: Uuid,
    operation: CardReferenceOperation,
    reason: z.enum(['rejected', 'not-sent', 'unknown']),
    ...GATEWAY_ERROR_FIELDS,
  }),
] as const;
export type CardReferenceEvent = z.infer<(typeof CARD_REFERENCE_EVENTS)[number]>;

export const EVENT_SCHEMAS = byType(
  /** A sale, preauth, capture, void or return was decided and its gateway request issued. */
  event('operation-requested', {
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
  }),
  lifecycle.acceptedByGateway,
  lifecycle.actionRequired,
  lifecycle.outcomeUnknown,
  lifecycle.operationResent,
  /** A sale was approved: the money is taken. */
  event('approved', {
    requestId: Uuid,
    amount: Money,
    ...approval,
    merchantSeq: MerchantSeq.optional(),
  }),
  /** A preauth was approved: the amount is on hold. */
  event('authorized', { requestId: Uuid, amount: Money, ...approval }),
  /** An account verification was approved: the card account is in good standing, nothing charged. */
  event('account-verified', { requestId: Uuid, ...approval }),
  /** Declined: for a capture, void or return the payment keeps its earlier state. */
  lifecycle.declined({ card: CardSummary.optional() }),
  lifecycle.failed,
  /**
   * The gateway captures an authorization once: `amount` is settled and the rest of the hold is
   * let go at the same time (`released`; zero for a full capture). `remainingAuthorized` is what is
   * still authorized afterwards, always zero (kept for consumers that read it).
   */
  event('captured', {
    requestId: Uuid,
    amount: Money,
    totalCaptured: Money,
    remainingAuthorized: Money,
    released: Money,
    merchantSeq: MerchantSeq.optional(),
  }),
  /** A void: of an authorization (the hold released) or of a sale or capture before settlement. */
  event('voided', {
    requestId: Uuid,
    /** The hold released, or the charge cancelled. */
    amount: Money,
  }),
  event('returned', {
    requestId: Uuid,
    amount: Money,
    totalReturned: Money,
    /** What is still returnable (captured minus returned). */
    remainingBalance: Money,
    /** True when the return cancelled an uncaptured preauth (released the hold). */
    holdReleased: z.boolean(),
    merchantSeq: MerchantSeq.optional(),
  }),
  /** An authorization reached its hold expiry uncaptured; `action` says what the saga does about it. */
  event('hold-expired', { action: z.enum(['void', 'report']), amount: Money }),
  lifecycle.settledByDecision.extend({ operation: DecidedPaymentOperation }),
  lifecycle.caseReopened.extend({ operation: DecidedPaymentOperation }),
  lifecycle.commandRejected,
  ...CARD_REFERENCE_EVENTS,
);

export const PaymentEvent = unionOf(EVENT_SCHEMAS);
export type PaymentEvent = z.infer<typeof PaymentEvent>;

/** For consumers of `payments.events.v1`. */
export function parseEvent(input: unknown) {
  return parseWith(PaymentEvent, input);
}
