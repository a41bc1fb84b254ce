import type { DecidedOperation } from '../../../domain/gateway-operation/decided-operation';
import type {
  AnyTransferCommand,
  GatewayStatusRequest,
  GatewayTransferRequest,
  MerchantRef,
  Money,
  PayoutBudgetAnswerCommand,
  TransferEvent,
  TransferOperation,
} from '@payments/contracts';
import type { Draft, FlowDecision } from '../../../domain/decision';
import type {
  OperationEffect,
  OperationInFlight,
} from '../../../domain/gateway-operation/gateway-operation';
import type { SagaOperationInput } from '../../../domain/gateway-operation/single-operation';
import type { PayoutPolicy } from '../../payout/domain';
import type { BudgetRequest, PublishHeldRequest } from '../../payout-budget/domain';

/**
 * A card-to-card transfer (v4 transfer, v4 transfer-by-ref): one gateway operation, requested
 * after the amount checks and sent once the endpoint's daily payout budget took its amount (same
 * transaction; money out of the endpoint like a payout); transferred / declined / failed on the
 * gateway's answer about it, or refused by the budget before anything was sent.
 *
 *   initial → transferring → transferred | declined | failed
 *                          └► refused (daily limit, nothing sent)
 */
export type TransferStatus =
  'initial' | 'transferring' | 'transferred' | 'declined' | 'failed' | 'refused';

export interface InitialTransfer {
  readonly status: 'initial';
  readonly version: number;
}

/** The transfer's one gateway operation in flight. */
export type TransferOp = OperationInFlight<TransferOperation>;

export interface OpenTransfer {
  readonly status: Exclude<TransferStatus, 'initial'>;
  readonly version: number;
  readonly transferId: string;
  readonly merchant: MerchantRef;
  readonly amount: Money;
  readonly clientOrderId: string;
  readonly gatewayOrderId?: string;
  readonly inFlight?: TransferOp;
  /** The budget reservation is held (from the request until transferred, or released). */
  readonly reserved?: true;
  /** The UTC day whose budget the transfer draws on. */
  readonly budgetDay?: string;
  /** The operation settled by a decision of two people (a case, issue 33). */
  readonly decided?: DecidedOperation;
}

export type TransferState = InitialTransfer | OpenTransfer;

export const initialTransferState: TransferState = { status: 'initial', version: 0 };

export type TransferInput = SagaOperationInput<TransferDomainCommand, TransferOperation>;

/** The transfer commands, and the daily budget's answer to the transfer's reservation. */
export type TransferDomainCommand = AnyTransferCommand | PayoutBudgetAnswerCommand;

export type TransferEffect =
  | OperationEffect
  | {
      type: 'send-gateway-request';
      request: GatewayTransferRequest | GatewayStatusRequest;
      /** Written, published only once the budget granted the reservation. */
      held?: true;
    }
  | PublishHeldRequest
  | BudgetRequest;

export type TransferDecision = FlowDecision<TransferEvent, TransferEffect>;
export type TransferEventDraft = Draft<TransferEvent, 'transferId'>;

/**
 * Amount rules, the daily limit (the endpoint's payout budget), send attempts and the
 * unknown-outcome rules: the payout policy's (PAYOUT_LIMITS).
 */
export type TransferPolicy = PayoutPolicy;

export interface TransferContext {
  readonly now: string;
  readonly ids: { next(): string };
  readonly policy?: TransferPolicy;
}
