import { z } from 'zod';
import { OPERATION_EVENT_FIELDS } from './operation-events';
import { Instant, MerchantRef, Money, SealedCard, Uuid } from './primitives';
import { dailyLimitRefusal } from './payouts';
import { RejectionCode } from './rejection-codes';

/**
 * Card-to-card transfers: v4 `transfer` (OAuth RSA-SHA256) from a sealed source card
 * to a sealed destination card, and v4 `transfer-by-ref` to a sealed destination card (the spec's
 * fields: client-order-id, amount, currency, order_desc, destination-card-no). Commands and events
 * name their saga by `transferId`, which is also the gateway `client_orderid`.
 */

export const TransferOperation = z.enum(['transfer', 'transfer-by-ref']);
export type TransferOperation = z.infer<typeof TransferOperation>;

const transferBase = {
  commandId: Uuid,
  transferId: Uuid,
  merchant: MerchantRef,
  occurredAt: Instant,
};

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

export const AnyTransferCommand = z.discriminatedUnion('type', [
  TransferCommand,
  TransferByRefCommand,
  RefreshTransferStatusCommand,
]);
export type TransferCommand = z.infer<typeof TransferCommand>;
export type TransferByRefCommand = z.infer<typeof TransferByRefCommand>;
export type RefreshTransferStatusCommand = z.infer<typeof RefreshTransferStatusCommand>;
export type AnyTransferCommand = z.infer<typeof AnyTransferCommand>;

// ---- events -----------------------------------------------------------------------------

const transferEventBase = {
  transferId: Uuid,
  commandId: Uuid,
  version: z.number().int().min(1),
  occurredAt: Instant,
};
const transferEvent = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.strictObject({ type: z.literal(type), ...transferEventBase, ...shape });

const operationRef = { operation: TransferOperation, requestId: Uuid };
const gatewayError = {
  code: z.string().max(64).optional(),
  message: z.string().max(1024).optional(),
};

/** The transfer was decided and its gateway request issued. */
export const TransferRequested = transferEvent('transfer-requested', {
  ...operationRef,
  amount: Money,
  clientOrderId: z.string().min(1).max(128),
  merchant: MerchantRef,
});

export const TransferAcceptedByGateway = transferEvent('transfer-accepted-by-gateway', {
  ...operationRef,
  ...OPERATION_EVENT_FIELDS.acceptedByGateway,
});

/** May or may not have reached the gateway; resolved only by a status reply or a verified callback. */
export const TransferOutcomeUnknown = transferEvent('transfer-outcome-unknown', {
  ...operationRef,
  ...OPERATION_EVENT_FIELDS.outcomeUnknown,
});

/** The gateway had no trace of the transfer for the whole safe window: sent once more. */
export const TransferOperationResent = transferEvent('transfer-operation-resent', {
  ...operationRef,
  ...OPERATION_EVENT_FIELDS.operationResent,
});

/** The gateway approved the transfer: the money moved. */
export const Transferred = transferEvent('transferred', {
  ...operationRef,
  amount: Money,
  gatewayOrderId: z.string().max(128).optional(),
  approvalCode: z.string().max(64).optional(),
});

export const TransferDeclined = transferEvent('transfer-declined', {
  ...operationRef,
  ...gatewayError,
});

export const TransferFailed = transferEvent('transfer-failed', {
  ...operationRef,
  reason: z.enum(['error', 'filtered', 'rejected', 'not-sent']),
  ...gatewayError,
});

/**
 * The endpoint's daily payout budget (transfers count against it like payouts) could not take the
 * transfer: final, its gateway request was never sent and nothing moved.
 */
export const TransferRefused = transferEvent('transfer-refused', dailyLimitRefusal);

export const TransferCommandRejected = transferEvent('transfer-command-rejected', {
  /** 0 when the command names a transfer that does not exist. */
  version: z.number().int().min(0),
  commandType: z.string().min(1).max(64),
  reason: RejectionCode,
  message: z.string().max(1024),
});

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

export const TransferEvent = z.discriminatedUnion('type', [
  TransferRequested,
  TransferAcceptedByGateway,
  TransferOutcomeUnknown,
  TransferOperationResent,
  Transferred,
  TransferDeclined,
  TransferFailed,
  TransferRefused,
  TransferCommandRejected,
]);
export type TransferEvent = z.infer<typeof TransferEvent>;

TRANSFER_EVENT_SCHEMAS satisfies Record<TransferEvent['type'], z.ZodType>;
TRANSFER_COMMAND_SCHEMAS satisfies Record<AnyTransferCommand['type'], z.ZodType>;

/** For consumers of `payments.events.v1`: a transfer event. */
export function parseTransferEvent(
  input: unknown,
): { ok: true; event: TransferEvent } | { ok: false; reason: 'SCHEMA_INVALID'; details: string[] } {
  const parsed = TransferEvent.safeParse(input);
  return parsed.success
    ? { ok: true, event: parsed.data }
    : {
        ok: false,
        reason: 'SCHEMA_INVALID',
        details: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
      };
}
