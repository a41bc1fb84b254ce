/**
 * Transfers as the runtime runs them (test support only): each drawing on the daily payout budget
 * its world shares with payouts (held requests, the budget's answers).
 *
 *   transferWorld().given(transfer(id), transferSent({ kind: 'unknown', reason: 'timeout' }))
 */
import type {
  AnyTransferCommand,
  GatewayClassification,
  GatewayStatusReport,
  TransferEvent,
} from '@payments/contracts';
import { PLACEHOLDER_SEALED_CARD } from '@payments/contracts/testing';
import { decideTransfer, evolveTransfer } from '../../src/flows/transfer/domain';
import {
  initialTransferState,
  type TransferContext,
  type TransferEffect,
  type TransferInput,
  type TransferState,
} from '../../src/flows/transfer/domain/model';
import type { PayoutPolicy } from '../../src/flows/payout/domain';
import { T0, uuid } from './base.kit';
import { FlowWorld, sendResult, statusReply } from './flow.kit';
import { BudgetBook, ENDPOINT, MERCHANT, moneyOutEffects, POLICY } from './payout.kit';

export interface TransferTypes {
  input: TransferInput;
  state: TransferState;
  event: TransferEvent;
  effect: TransferEffect;
  context: TransferContext;
  policy: PayoutPolicy;
}

/**
 * Transfers, each drawing on the daily payout budget of `book` (pass a PayoutWorld's book to have
 * payouts and transfers share it).
 */
export function transferWorld(book?: BudgetBook) {
  const world: FlowWorld<TransferTypes> = new FlowWorld<TransferTypes>({
    decide: decideTransfer,
    evolve: evolveTransfer,
    initial: initialTransferState,
    context: (now, ids, policy) => ({ now, ids, policy }),
    policy: POLICY,
    rejected: 'transfer-command-rejected',
    sagaOf: (input) =>
      input.kind !== 'command'
        ? undefined
        : input.command.type === 'payout-budget-answer'
          ? input.command.payoutId
          : input.command.transferId,
    carryOut: moneyOutEffects(
      () => shared,
      (command): TransferInput => ({ kind: 'command', command }),
    ),
  });
  const shared = book ?? new BudgetBook(world.ids, POLICY);
  return Object.assign(world, { book: shared });
}

export function transfer(
  transferId: string,
  type: Extract<AnyTransferCommand['type'], 'transfer' | 'transfer-by-ref'> = 'transfer',
  minor = 1_500,
): TransferInput {
  const base = {
    commandId: uuid(),
    transferId,
    merchant: MERCHANT,
    occurredAt: T0,
    amount: { minor, currency: 'EUR' },
    sealedDestinationCard: PLACEHOLDER_SEALED_CARD,
  };
  return {
    kind: 'command',
    command:
      type === 'transfer'
        ? { type, ...base, sealedCard: PLACEHOLDER_SEALED_CARD }
        : { type, ...base },
  };
}

export const refreshTransfer = (transferId: string, endpointId = ENDPOINT): TransferInput => ({
  kind: 'command',
  command: {
    type: 'refresh-transfer-status',
    commandId: uuid(),
    transferId,
    merchant: { endpointId },
    occurredAt: T0,
  },
});

/** The send result of the transfer in flight. */
export const transferSent =
  (result: GatewayClassification) =>
  (state: TransferState, _now: string, transferId: string): TransferInput =>
    sendResult(state, transferId, 'transfer', result);

/** A status reply about the transfer in flight (the edge names both transfer operations). */
export const transferStatus =
  (status: 'approved' | 'declined', extra: Partial<GatewayStatusReport> = {}) =>
  (state: TransferState, _now: string, transferId: string): TransferInput =>
    statusReply(state, transferId, { status, gatewayOrderId: 'T-1', ...extra }, [
      'transfer',
      'transfer-by-ref',
    ]);
