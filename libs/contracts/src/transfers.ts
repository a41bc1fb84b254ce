import { z } from 'zod';
import { commandFields, flowFamily, parseWith, unionOf } from './flow-family';
import { operationLifecycle } from './operation-events';
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

const transferBase = commandFields('transferId');

const transferDetails = {
  amount: Money,
  /** The destination card, sealed to the gateway-adapter's key with the transfer id as associated data. */
  sealedDestinationCard: SealedCard,
  order: z.strictObject({ description: z.string().min(1).max(65535).optional() }).optional(),
};

export const TransferCommand = z.strictObject({
  type: z.literal('transfer'),
  ...transferBase,
  ...transferDetails,
  /** The source card (with its CVV), sealed like the destination. */
  sealedCard: SealedCard,
});

export const TransferByRefCommand = z.strictObject({
  type: z.literal('transfer-by-ref'),
  ...transferBase,
  ...transferDetails,
});

/**
 * Asks for a status query of the transfer in flight now, instead of waiting for the next poll; the
 * gateway's answer decides, as for a card payment's `refresh-status`. Moves no money.
 */
export const RefreshTransferStatusCommand = z.strictObject({
  type: z.literal('refresh-transfer-status'),
  ...transferBase,
});

export const TRANSFER_COMMAND_SCHEMAS = {
  transfer: TransferCommand,
  'transfer-by-ref': TransferByRefCommand,
  'refresh-transfer-status': RefreshTransferStatusCommand,
} as const;

export const AnyTransferCommand = unionOf(TRANSFER_COMMAND_SCHEMAS);
export type TransferCommand = z.infer<typeof TransferCommand>;
export type TransferByRefCommand = z.infer<typeof TransferByRefCommand>;
export type RefreshTransferStatusCommand = z.infer<typeof RefreshTransferStatusCommand>;
export type AnyTransferCommand = z.infer<typeof AnyTransferCommand>;

// ---- events -----------------------------------------------------------------------------

const lifecycle = operationLifecycle('transferId', 'transfer-', TransferOperation);
const { event: transferEvent, operationRef } = lifecycle;

/** The transfer was decided and its gateway request issued. */
export const TransferRequested = transferEvent('transfer-requested', {
  ...operationRef,
  amount: Money,
  clientOrderId: z.string().min(1).max(128),
  merchant: MerchantRef,
});

export const TransferAcceptedByGateway = lifecycle.acceptedByGateway;

/** May or may not have reached the gateway; resolved only by a status reply or a verified callback. */
export const TransferOutcomeUnknown = lifecycle.outcomeUnknown;

/** The gateway had no trace of the transfer for the whole safe window: sent once more. */
export const TransferOperationResent = lifecycle.operationResent;

/** The gateway approved the transfer: the money moved. */
export const Transferred = transferEvent('transferred', {
  ...operationRef,
  amount: Money,
  gatewayOrderId: z.string().max(128).optional(),
  approvalCode: z.string().max(64).optional(),
});

export const TransferDeclined = lifecycle.declined();
export const TransferFailed = lifecycle.failed;

/**
 * The endpoint's daily payout budget (transfers count against it like payouts) could not take the
 * transfer: final, its gateway request was never sent and nothing moved.
 */
export const TransferRefused = transferEvent('transfer-refused', dailyLimitRefusal);

export const TransferCommandRejected = lifecycle.commandRejected;

export const TRANSFER_EVENT_SCHEMAS = {
  'transfer-requested': TransferRequested,
  'transfer-accepted-by-gateway': TransferAcceptedByGateway,
  'transfer-outcome-unknown': TransferOutcomeUnknown,
  'transfer-operation-resent': TransferOperationResent,
  transferred: Transferred,
  'transfer-declined': TransferDeclined,
  'transfer-failed': TransferFailed,
  'transfer-refused': TransferRefused,
  'transfer-command-rejected': TransferCommandRejected,
} as const;

export const TransferEvent = unionOf(TRANSFER_EVENT_SCHEMAS);
export type TransferEvent = z.infer<typeof TransferEvent>;

export const TRANSFER_FAMILY = flowFamily({
  name: 'transfer',
  sagaIdField: 'transferId',
  commands: TRANSFER_COMMAND_SCHEMAS,
  events: TRANSFER_EVENT_SCHEMAS,
  internalCommands: [],
});

/** For consumers of `payments.events.v1`: a transfer event. */
export function parseTransferEvent(input: unknown) {
  return parseWith(TransferEvent, input);
}
