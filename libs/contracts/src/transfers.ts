import { MerchantSeq } from './day-close';
import { z } from 'zod';
import { byType, flowFamily, parseWith, sagaCommands, unionOf } from './flow-family';
import { APPROVAL_FIELDS, operationLifecycle, settleByDecisionCommand } from './operation-events';
import { MerchantRef, Money, SealedCard } from './primitives';
import { dailyLimitRefusal } from './payouts';

/**
 * Card-to-card transfers: v4 `transfer` (OAuth RSA-SHA256) from a sealed source card
 * to a sealed destination card, and v4 `transfer-by-ref` to a sealed destination card (the spec's
 * fields: client-order-id, amount, currency, order_desc, destination-card-no). Commands and events
 * name their saga by `transferId`, which is also the gateway `client_orderid`.
 */

export const TransferOperation = z.enum(['transfer', 'transfer-by-ref']);
export type TransferOperation = z.infer<typeof TransferOperation>;

const transferCommand = sagaCommands('transferId');

const transferDetails = {
  amount: Money,
  /** The destination card, sealed to the gateway-adapter's key with the transfer id as associated data. */
  sealedDestinationCard: SealedCard,
  order: z.strictObject({ description: z.string().min(1).max(65535).optional() }).optional(),
};

export const TransferCommand = transferCommand('transfer', {
  ...transferDetails,
  /** The source card (with its CVV), sealed like the destination. */
  sealedCard: SealedCard,
});
export type TransferCommand = z.infer<typeof TransferCommand>;

export const TransferByRefCommand = transferCommand('transfer-by-ref', transferDetails);
export type TransferByRefCommand = z.infer<typeof TransferByRefCommand>;

/**
 * Asks for a status query of the transfer in flight now, instead of waiting for the next poll; the
 * gateway's answer decides, as for a card payment's `refresh-status`. Moves no money.
 */
export const RefreshTransferStatusCommand = transferCommand('refresh-transfer-status', {});
export type RefreshTransferStatusCommand = z.infer<typeof RefreshTransferStatusCommand>;

/**
 * Internal: the case service's settlement of the transfer's operation by an approved decision of
 * two people (issue 33); "not done" releases the day's reservation.
 */
export const SettleTransferByDecisionCommand = settleByDecisionCommand('transferId', 'transfer-');
export type SettleTransferByDecisionCommand = z.infer<typeof SettleTransferByDecisionCommand>;

// ---- the transfer family ----------------------------------------------------------------

const lifecycle = operationLifecycle('transferId', 'transfer-', TransferOperation);
const { event: transferEvent, operationRef } = lifecycle;

/**
 * The transfer family: the commands above, and the transfer saga's events (its gateway operation's
 * lifecycle is `operationLifecycle`'s).
 */
export const TRANSFER_FAMILY = flowFamily({
  name: 'transfer',
  sagaIdField: 'transferId',
  commands: byType(
    TransferCommand,
    TransferByRefCommand,
    RefreshTransferStatusCommand,
    SettleTransferByDecisionCommand,
  ),
  events: byType(
    /** The transfer was decided and its gateway request issued. */
    transferEvent('transfer-requested', {
      ...operationRef,
      amount: Money,
      clientOrderId: z.string().min(1).max(128),
      merchant: MerchantRef,
    }),
    lifecycle.acceptedByGateway,
    lifecycle.outcomeUnknown,
    lifecycle.operationResent,
    /** The gateway approved the transfer: the money moved. */
    transferEvent('transferred', {
      ...operationRef,
      amount: Money,
      ...APPROVAL_FIELDS,
      /** The merchant's money-event sequence number (day-close.ts). */
      merchantSeq: MerchantSeq.optional(),
    }),
    lifecycle.declined(),
    lifecycle.failed,
    /**
     * The endpoint's daily payout budget (transfers count against it like payouts) could not take the
     * transfer: final, its gateway request was never sent and nothing moved.
     */
    transferEvent('transfer-refused', dailyLimitRefusal),
    lifecycle.settledByDecision,
    lifecycle.caseReopened,
    lifecycle.commandRejected,
  ),
  internalCommands: ['transfer-settle-by-decision'],
});
export const TRANSFER_COMMAND_SCHEMAS = TRANSFER_FAMILY.commands;
export const TRANSFER_EVENT_SCHEMAS = TRANSFER_FAMILY.events;

export const AnyTransferCommand = unionOf(TRANSFER_COMMAND_SCHEMAS);
export type AnyTransferCommand = z.infer<typeof AnyTransferCommand>;
export const TransferEvent = unionOf(TRANSFER_EVENT_SCHEMAS);
export type TransferEvent = z.infer<typeof TransferEvent>;

/** For consumers of `payments.events.v1`: a transfer event. */
export function parseTransferEvent(input: unknown) {
  return parseWith(TransferEvent, input);
}
