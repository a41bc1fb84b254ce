import {
  commandTypesOf,
  TRANSFER_FAMILY,
  type TransferEvent,
  type TransferOperation,
} from '@payments/contracts';
import {
  OPERATION_TIMER_KINDS,
  type OperationTimer,
} from '../../domain/gateway-operation/gateway-operation';
import { type RejectionArgs, rejectionFields } from '../../domain/rejection';
import type { Flow } from '../../runtime/flow';
import { gatewayFlow, singleOperationSaga, transactionTypes } from '../../runtime/flow-binding';
import { budgetOrRuntimeEffect } from '../payout-budget/payout-budget.flow';
import {
  decideTransfer,
  evolveTransfer,
  initialTransferState,
  type TransferDomainCommand,
  type TransferEffect,
  type TransferPolicy,
  type TransferState,
} from './domain';

export const TRANSFER_FLOW = 'transfer';

/** The gateway reports both as a `transfer` transaction (callback `type`). */
export const TRANSFER_OPERATIONS = transactionTypes<TransferOperation>({
  transfer: ['transfer', 'transfer-by-ref'],
  'transfer-by-ref': ['transfer-by-ref'],
});

export function transferRejectionEvent(args: RejectionArgs & { sagaId: string }): TransferEvent {
  return { type: 'transfer-command-rejected', transferId: args.sagaId, ...rejectionFields(args) };
}

/** Card-to-card transfers: v4 transfer and transfer-by-ref, one operation each. */
export function transferFlow(policy: TransferPolicy): Flow<TransferState, TransferEvent> {
  return gatewayFlow<
    TransferState,
    TransferEvent,
    TransferDomainCommand,
    OperationTimer,
    TransferOperation,
    TransferEffect
  >({
    name: TRANSFER_FLOW,
    commandTypes: commandTypesOf(TRANSFER_FAMILY),
    // The daily payout budget's answer to the transfer's reservation (budget.ts).
    answerTypes: ['payout-budget-answer'],
    initialState: initialTransferState,
    timerKinds: OPERATION_TIMER_KINDS,
    operations: TRANSFER_OPERATIONS,
    ...(policy.resultDeadlineMs === undefined ? {} : { resultDeadlineMs: policy.resultDeadlineMs }),
    decide: (input, state, ctx) => decideTransfer(input, state, { ...ctx, policy }),
    effect: budgetOrRuntimeEffect,
    evolve: evolveTransfer,
    rejection: transferRejectionEvent,
    ...singleOperationSaga<TransferState>('transfer', 'transferring'),
  });
}
