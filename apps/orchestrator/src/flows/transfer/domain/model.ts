import type {
  AnyTransferCommand,
  GatewayCallback,
  GatewayResult,
  GatewayStatusRequest,
  GatewayTransferRequest,
  MerchantRef,
  Money,
  StatusCheckHint,
  TransferEvent,
  TransferOperation,
} from '@payments/contracts';
import type { Draft, FlowDecision } from '../../../domain/decision';
import type {
  OperationEffect,
  OperationInFlight,
  OperationTimer,
} from '../../../domain/gateway-operation';
import type { PayoutPolicy } from '../../payout/domain';

/**
 * A card-to-card transfer (v4 transfer, v4 transfer-by-ref): one gateway operation, sent at once
 * after the amount checks; transferred / declined / failed on the gateway's answer about it.
 *
 *   initial → transferring → transferred | declined | failed
 */
export type TransferStatus = 'initial' | 'transferring' | 'transferred' | 'declined' | 'failed';

export interface InitialTransfer {
  readonly status: 'initial';
  readonly version: number;
}

export interface OpenTransfer {
  readonly status: Exclude<TransferStatus, 'initial'>;
  readonly version: number;
  readonly transferId: string;
  readonly merchant: MerchantRef;
  readonly amount: Money;
  readonly clientOrderId: string;
  readonly gatewayOrderId?: string;
  readonly inFlight?: OperationInFlight<TransferOperation>;
}

export type TransferState = InitialTransfer | OpenTransfer;

export const initialTransferState: TransferState = { status: 'initial', version: 0 };

export type TransferInput =
  | { kind: 'command'; command: AnyTransferCommand }
  | { kind: 'gateway-result'; result: GatewayResult; about?: readonly TransferOperation[] }
  | { kind: 'callback'; callback: GatewayCallback; about?: readonly TransferOperation[] }
  | { kind: 'status-check-hint'; hint: StatusCheckHint }
  | { kind: 'timer-fired'; timer: OperationTimer };

export type TransferEffect =
  | OperationEffect
  | { type: 'send-gateway-request'; request: GatewayTransferRequest | GatewayStatusRequest };

export type TransferDecision = FlowDecision<TransferEvent, TransferEffect>;
export type TransferEventDraft = Draft<TransferEvent, 'transferId'>;

/** Amount rules, send attempts and the unknown-outcome rules: the payout policy's (PAYOUT_LIMITS). */
export type TransferPolicy = PayoutPolicy;

export interface TransferContext {
  readonly now: string;
  readonly ids: { next(): string };
  readonly policy?: TransferPolicy;
}
