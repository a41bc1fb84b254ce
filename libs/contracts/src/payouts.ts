import { MerchantSeq } from './day-close';
import { z } from 'zod';
import { byType, flowFamily, parseWith, sagaCommands, unionOf } from './flow-family';
import {
  APPROVAL_FIELDS,
  commandRejectedEvent,
  operationLifecycle,
  settleByDecisionCommand,
  sagaEvents,
} from './operation-events';
import { AdminRole } from './admin';
import { CardSummary, Instant, MerchantRef, Money, SealedCard, Uuid } from './primitives';
import { RejectionCode } from './rejection-codes';

/**
 * The two-step payout: `payout-check` registers the payout at the gateway (v4
 * payout-check, nothing paid), finance approves or rejects it, an approval within the endpoint's
 * daily limit sends `payout-pay` once. Commands and events name their saga by `payoutId` (which is
 * also the gateway `client_orderid`); the per-endpoint daily budget saga by `budgetId`.
 */

/**
 * The payout operations the orchestrator asks the adapter to perform: the two steps of the
 * two-step payout (v4 payout-check, payout-pay), and the one-step payouts (v2 `payout`, OAuth
 * HMAC-SHA1; v4 `payout-v4`, OAuth RSA-SHA256; the hosted `payout-form`, where the payee enters
 * the card).
 */
export const PayoutOperation = z.enum([
  'payout-check',
  'payout-pay',
  'payout',
  'payout-v4',
  'payout-form',
]);
export type PayoutOperation = z.infer<typeof PayoutOperation>;

const payoutCommand = sagaCommands('payoutId');

/** Who decided, for the audit trail (an operator's or a finance system's identity). */
const Actor = z.string().min(1).max(128);

/** The destination and description of a payout (one-step or the check of a two-step one). */
const payoutDestination = {
  amount: Money,
  /**
   * The destination card, sealed to the gateway-adapter's key with the payout id as associated
   * data (top level like a sale's, so a re-sealed resend is the same command for idempotency).
   */
  sealedCard: SealedCard,
  order: z
    .strictObject({
      description: z.string().min(1).max(65535).optional(),
      purpose: z.string().min(1).max(128).optional(),
    })
    .optional(),
};

/** One-step payout (v2 `payout`, OAuth HMAC-SHA1): paid at once, no approval step. */
export const OneStepPayoutCommand = payoutCommand('payout', payoutDestination);
export type OneStepPayoutCommand = z.infer<typeof OneStepPayoutCommand>;

/** One-step payout through the v4 API (`payout`, OAuth RSA-SHA256). */
export const PayoutV4Command = payoutCommand('payout-v4', payoutDestination);
export type PayoutV4Command = z.infer<typeof PayoutV4Command>;

/**
 * A payout through the gateway's hosted form (v2 payout-form): the payee enters the destination
 * card on the form, whose URL is published as `payout-action-required`; no card passes through
 * the orchestrator. Paid when the gateway reports the payout approved.
 */
export const PayoutFormCommand = payoutCommand('payout-form', {
  amount: Money,
  /** Where the gateway sends the payee after the form. */
  redirectUrl: z.url().max(2048),
  order: payoutDestination.order,
});
export type PayoutFormCommand = z.infer<typeof PayoutFormCommand>;

/** The first step of a two-step payout: registered at the gateway, paid on approval. */
export const PayoutCheckCommand = payoutCommand('payout-check', payoutDestination);
export type PayoutCheckCommand = z.infer<typeof PayoutCheckCommand>;

/**
 * An approval of a registered two-step payout. Above the endpoint's four-eyes threshold
 * (`PAYOUT_FOUR_EYES_ABOVE_MINOR`, per endpoint in `PAYOUT_LIMITS`) the first approval is only
 * recorded (`payout-approval-recorded`); payout-pay follows a second approval by a different
 * `approvedBy` whose `approverRole` is `approver`. The admin API fills the role from the token;
 * a producer on the commands topic vouches for it as for `approvedBy`.
 */
export const ApprovePayoutCommand = payoutCommand('approve-payout', {
  approvedBy: Actor,
  approverRole: AdminRole.optional(),
  reason: z.string().min(1).max(1024).optional(),
});
export type ApprovePayoutCommand = z.infer<typeof ApprovePayoutCommand>;

export const RejectPayoutCommand = payoutCommand('reject-payout', {
  rejectedBy: Actor,
  reason: z.string().min(1).max(1024),
});
export type RejectPayoutCommand = z.infer<typeof RejectPayoutCommand>;

/**
 * Asks for a status query of the payout's operation in flight now (payout-check, payout-pay or a
 * one-step payout), instead of waiting for the next poll; the gateway's answer decides, as for a
 * card payment's `refresh-status`. Moves no money: open to producers as well as to operators.
 */
export const RefreshPayoutStatusCommand = payoutCommand('refresh-payout-status', {});
export type RefreshPayoutStatusCommand = z.infer<typeof RefreshPayoutStatusCommand>;

/**
 * Internal: the case service's settlement of the payout's operation by an approved decision of two
 * people (issue 33); "not done" releases the day's reservation.
 */
export const SettlePayoutByDecisionCommand = settleByDecisionCommand('payoutId', 'payout-');
export type SettlePayoutByDecisionCommand = z.infer<typeof SettlePayoutByDecisionCommand>;

/** Internal: the budget's answer to a reservation, addressed to the saga that asked (`payoutId`). */
export const PayoutBudgetAnswerCommand = payoutCommand('payout-budget-answer', {
  budgetId: Uuid,
  granted: z.boolean(),
  /** What the day's budget had reserved before this payout, and its limit. */
  reservedMinor: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  limit: Money,
});
export type PayoutBudgetAnswerCommand = z.infer<typeof PayoutBudgetAnswerCommand>;

/** A UTC calendar day, `YYYY-MM-DD`. */
const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a UTC day (YYYY-MM-DD)');

const budgetCommand = sagaCommands('budgetId');

/**
 * Internal: a money-out operation asks its endpoint's budget of the day for its amount before its
 * gateway request goes out (a two-step payout on approval, a one-step payout, a payout form, a
 * transfer). `payoutId` names the asking saga: the payout id, or a transfer's `transferId`. Only
 * ever started by a saga inside the orchestrator (start-saga); refused on the commands topic.
 */
export const ReservePayoutBudgetCommand = budgetCommand('reserve-payout-budget', {
  payoutId: Uuid,
  amount: Money,
  day: Day,
});
export type ReservePayoutBudgetCommand = z.infer<typeof ReservePayoutBudgetCommand>;

/** Internal: an operation that paid nothing (declined, failed) gives its reservation back. */
export const ReleasePayoutBudgetCommand = budgetCommand('release-payout-budget', {
  payoutId: Uuid,
});
export type ReleasePayoutBudgetCommand = z.infer<typeof ReleasePayoutBudgetCommand>;

// ---- the payout family ------------------------------------------------------------------

const lifecycle = operationLifecycle('payoutId', 'payout-', PayoutOperation);
const { event: payoutEvent, operationRef: payoutOperationRef } = lifecycle;

/** The recipient as events may show it: a card's BIN, last four and brand at most. */
export const RecipientSummary = z.strictObject({
  kind: z.literal('card'),
  card: CardSummary.optional(),
});

/**
 * Why the endpoint's daily budget refused a money-out operation (a payout or a transfer): the
 * reason code, a message, what the day had reserved before it, and the day's limit.
 */
export const dailyLimitRefusal = {
  reason: RejectionCode,
  message: z.string().max(1024),
  /** Reserved today before this operation, and the day's limit. */
  reservedToday: Money,
  dailyLimit: Money,
};

/**
 * The payout family: the payout saga's commands, its budget's answer among them (issued by the
 * orchestrator only), and its events (its gateway operation's lifecycle is `operationLifecycle`'s).
 */
export const PAYOUT_FAMILY = flowFamily({
  name: 'payout',
  sagaIdField: 'payoutId',
  commands: byType(
    OneStepPayoutCommand,
    PayoutV4Command,
    PayoutFormCommand,
    PayoutCheckCommand,
    ApprovePayoutCommand,
    RejectPayoutCommand,
    RefreshPayoutStatusCommand,
    PayoutBudgetAnswerCommand,
    SettlePayoutByDecisionCommand,
  ),
  events: byType(
    /** payout-check or payout-pay decided and its gateway request issued. */
    payoutEvent('payout-requested', {
      ...payoutOperationRef,
      amount: Money,
      clientOrderId: z.string().min(1).max(128),
      /** On the first event of a payout. */
      merchant: MerchantRef.optional(),
    }),
    lifecycle.acceptedByGateway,
    /** The payee must act: the hosted payout form's URL (payout-form). */
    lifecycle.actionRequired,
    lifecycle.outcomeUnknown,
    lifecycle.operationResent,
    /** The gateway registered the payout (payout-check approved): awaiting approval until `approvalDeadline`. */
    payoutEvent('payout-registered', {
      requestId: Uuid,
      amount: Money,
      recipient: RecipientSummary,
      gatewayOrderId: z.string().min(1).max(128).optional(),
      approvalDeadline: Instant,
    }),
    /**
     * The first of the two approvals a payout above the four-eyes threshold needs: recorded, nothing
     * reserved or sent; still awaiting the second approval (a different person, approver role).
     */
    payoutEvent('payout-approval-recorded', {
      approvedBy: Actor,
      approverRole: AdminRole.optional(),
      reason: z.string().max(1024).optional(),
      /** Minor units: the approvals of a payout above this need two people. */
      fourEyesAboveMinor: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    }),
    payoutEvent('payout-approved', {
      approvedBy: Actor,
      reason: z.string().max(1024).optional(),
      /** Four eyes: who gave the first approval (`approvedBy` gave the second). */
      firstApprovedBy: Actor.optional(),
    }),
    /** The approval could not be carried out (the endpoint's daily limit): still awaiting approval. */
    payoutEvent('payout-approval-refused', dailyLimitRefusal),
    /**
     * A one-step payout or payout form the endpoint's daily budget could not take: final, its
     * gateway request was never sent and nothing was paid.
     */
    payoutEvent('payout-refused', dailyLimitRefusal),
    payoutEvent('payout-rejected', {
      rejectedBy: Actor,
      reason: z.string().max(1024),
    }),
    /** The approval window passed without approval: nothing is paid, later approvals are refused. */
    payoutEvent('payout-expired', { approvalDeadline: Instant }),
    /** The gateway paid the payout out (payout-pay or a one-step payout approved): the money left. */
    payoutEvent('paid-out', {
      requestId: Uuid,
      amount: Money,
      ...APPROVAL_FIELDS,
      /** The merchant's money-event sequence number (day-close.ts). */
      merchantSeq: MerchantSeq.optional(),
    }),
    lifecycle.declined(),
    lifecycle.failed,
    lifecycle.settledByDecision,
    lifecycle.caseReopened,
    lifecycle.commandRejected,
  ),
  internalCommands: ['payout-budget-answer', 'payout-settle-by-decision'],
});

// ---- the daily budget family (one saga per endpoint, currency and UTC day) ---------------
const budgetEvent = sagaEvents('budgetId', 0);

/** What the budget's reservations and refusals say about the day. */
const budgetDay = { merchant: MerchantRef, day: Day, payoutId: Uuid, amount: Money };

/** The daily budget family: its commands are only ever started by another saga. */
export const PAYOUT_BUDGET_FAMILY = flowFamily({
  name: 'payout-budget',
  sagaIdField: 'budgetId',
  commands: byType(ReservePayoutBudgetCommand, ReleasePayoutBudgetCommand),
  events: byType(
    budgetEvent('payout-budget-reserved', {
      ...budgetDay,
      /** Reserved for the day after this reservation, and the limit. */
      reserved: Money,
      limit: Money,
    }),
    budgetEvent('payout-budget-refused', { ...budgetDay, reserved: Money, limit: Money }),
    budgetEvent('payout-budget-released', { payoutId: Uuid, amount: Money, reserved: Money }),
    commandRejectedEvent('budgetId', 'payout-budget-'),
  ),
  internalCommands: ['reserve-payout-budget', 'release-payout-budget'],
});

// ---- for consumers -------------------------------------------------------------------------

export const PAYOUT_EVENT_SCHEMAS = PAYOUT_FAMILY.events;
export const PAYOUT_BUDGET_EVENT_SCHEMAS = PAYOUT_BUDGET_FAMILY.events;
/** Every command of this module: payouts and their budgets. */
export const PAYOUT_COMMAND_SCHEMAS = {
  ...PAYOUT_FAMILY.commands,
  ...PAYOUT_BUDGET_FAMILY.commands,
} as const;

export const PayoutCommand = unionOf(PAYOUT_COMMAND_SCHEMAS);
export type PayoutCommand = z.infer<typeof PayoutCommand>;
export const PayoutEvent = unionOf(PAYOUT_EVENT_SCHEMAS);
export type PayoutEvent = z.infer<typeof PayoutEvent>;
export const PayoutBudgetEvent = unionOf(PAYOUT_BUDGET_EVENT_SCHEMAS);
export type PayoutBudgetEvent = z.infer<typeof PayoutBudgetEvent>;

/** For consumers of `payments.events.v1`: a payout or payout-budget event. */
export function parsePayoutEvent(input: unknown) {
  return parseWith(z.union([PayoutEvent, PayoutBudgetEvent]), input);
}
