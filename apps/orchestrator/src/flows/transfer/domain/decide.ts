import type { PayoutBudgetAnswerCommand, RejectionCode, TransferEvent } from '@payments/contracts';
import {
  orderOf,
  refreshQuery,
  type OperationVocabulary,
} from '../../../domain/gateway-operation/gateway-operation';
import {
  lifecycleVocabulary,
  operationRef,
  operationSagaDecider,
  sagaDecisions,
  settlementDecision,
} from '../../../domain/gateway-operation/single-operation';
import { amountRefusal, DEFAULT_PAYOUT_POLICY, limitsOf } from '../../payout/domain';
import {
  dailyAmountRefusal,
  keepLargerReserved,
  oneStepBudgetAnswer,
  releaseOnNoPayment,
  sendWhenReserved,
} from '../../payout-budget/domain';
import type {
  OpenTransfer,
  TransferContext,
  TransferDecision,
  TransferDomainCommand,
  TransferEffect,
  TransferEventDraft,
  TransferOp,
  TransferState,
} from './model';

/**
 * The transfer decider (pure). A transfer command is checked (amount, currency, the endpoint's
 * limits) and its request written held while the endpoint's daily payout budget reserves the
 * amount (budget.ts, same transaction): granted → sent; refused → `transfer-refused`, nothing
 * sent. Everything after the send — the reply, status polls, callbacks, the never-received rule,
 * the unknown-outcome alert — is the shared gateway-operation module's, named here as transfer
 * events; declined and failed release the reservation. `transferred` only on a gateway answer
 * about this transfer.
 */
export const decideTransfer = operationSagaDecider({
  idField: 'transferId',
  command: decideCommand,
  vocabulary: transferVocabulary,
  rules: (ctx) => ctx.policy ?? DEFAULT_PAYOUT_POLICY,
});

const decisions = sagaDecisions<TransferEvent, 'transferId'>('transferId', 'transfer-');

function decideCommand(
  command: TransferDomainCommand,
  state: TransferState,
  ctx: TransferContext,
): TransferDecision {
  const refuse = (code: RejectionCode, message: string): TransferDecision =>
    // The budget's answer names the transfer as the saga that asked (`payoutId`).
    decisions.rejected(state, sagaIdOf(command), ctx.now, command, { code, message });
  if (command.type === 'payout-budget-answer') {
    const outcome = state.status === 'initial' ? undefined : budgetAnswer(command, state, ctx.now);
    return outcome ?? refuse('INVALID_STATE', `no budget reservation is awaited (${state.status})`);
  }
  // A decision of two people (a case) about the operation in flight: the one shared rule.
  if (command.type === 'transfer-settle-by-decision') {
    if (state.status === 'initial') return refuse('TRANSFER_NOT_FOUND', 'no such transfer');
    if (command.merchant.endpointId !== state.merchant.endpointId)
      return refuse('MERCHANT_MISMATCH', 'the transfer belongs to another endpoint');
    return settlementDecision(
      command,
      state,
      state.transferId,
      transferVocabulary(state),
      decisions,
      ctx.now,
    );
  }
  if (command.type === 'refresh-transfer-status') {
    if (state.status === 'initial') return refuse('TRANSFER_NOT_FOUND', 'no such transfer');
    if (command.merchant.endpointId !== state.merchant.endpointId)
      return refuse('MERCHANT_MISMATCH', 'the transfer belongs to another endpoint');
    const query = refreshQuery(orderOf(state.transferId, state), state.inFlight, ctx);
    if (query === undefined)
      return refuse('NOTHING_TO_REFRESH', `the transfer is ${state.status} with nothing in flight`);
    return { outcome: 'accepted', events: [], effects: [query] };
  }
  if (state.status !== 'initial') return refuse('TRANSFER_ALREADY_EXISTS', 'transfer exists');
  const policy = ctx.policy ?? DEFAULT_PAYOUT_POLICY;
  const refusal =
    amountRefusal(command.amount, limitsOf(policy, command.merchant.endpointId), 'transfer') ??
    dailyAmountRefusal(ctx, command.merchant.endpointId, command.amount);
  if (refusal) return refuse(...refusal);
  const requestId = ctx.ids.next();
  const { transferId, merchant, amount } = command;
  return decisions.accepted(
    state,
    transferId,
    ctx.now,
    [
      {
        type: 'transfer-requested',
        commandId: command.commandId,
        operation: command.type,
        requestId,
        amount,
        clientOrderId: transferId,
        merchant,
      },
    ],
    sendWhenReserved(
      {
        operation: command.type,
        requestId,
        paymentId: transferId,
        merchant,
        clientOrderId: transferId,
        attempt: 1,
        requestedAt: ctx.now,
        amount,
        sealedDestinationCard: command.sealedDestinationCard,
        ...(command.type === 'transfer' ? { sealedCard: command.sealedCard } : {}),
        ...(command.order?.description === undefined
          ? {}
          : { orderDescription: command.order.description }),
      },
      transferId,
      merchant,
      amount,
      ctx.now,
    ),
  );
}

function sagaIdOf(command: TransferDomainCommand): string {
  return command.type === 'payout-budget-answer' ? command.payoutId : command.transferId;
}

/** The budget's answer to the transfer's reservation (undefined: none is awaited). */
function budgetAnswer(
  answer: PayoutBudgetAnswerCommand,
  state: OpenTransfer,
  now: string,
): TransferDecision | undefined {
  const outcome = oneStepBudgetAnswer<TransferEventDraft>(answer, state, (refusal, op) => ({
    type: 'transfer-refused',
    commandId: op.commandId,
    ...refusal,
  }));
  return (
    outcome && decisions.accepted(state, state.transferId, now, outcome.drafts, outcome.effects)
  );
}

/** How a transfer names what happens to its operation (every transfer operation opens its order). */
function transferVocabulary(
  state: OpenTransfer,
): OperationVocabulary<TransferOp, TransferEventDraft, TransferEffect> {
  return {
    ...lifecycleVocabulary<TransferOp, TransferEventDraft, TransferEffect>('transfer-', {
      ended: releaseOnNoPayment(state.transferId, state),
    }),
    opensOrder: () => true,
    expectedAmount: () => state.amount,
    amountMismatch: (_op, reported) => keepLargerReserved(state.transferId, state, reported),
    succeeded: (report, op) => ({
      drafts: [
        {
          type: 'transferred',
          ...operationRef(op),
          amount: state.amount,
          ...(report.gatewayOrderId === undefined ? {} : { gatewayOrderId: report.gatewayOrderId }),
          ...(report.approvalCode === undefined ? {} : { approvalCode: report.approvalCode }),
        },
      ],
      effects: [],
    }),
  };
}
