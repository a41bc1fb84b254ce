import type {
  GatewayPanEligibilityRequest,
  GatewayStatusRequest,
  MerchantRef,
  PanEligibilityCommand,
  PanEligibilityEvent,
  PanEligibilityOperation,
} from '@payments/contracts';
import type { Draft, FlowDecision } from '../../../domain/decision';
import type {
  OperationEffect,
  OperationInFlight,
  OperationRules,
} from '../../../domain/gateway-operation';
import type { SagaOperationInput } from '../../../domain/single-operation';

/**
 * A PAN-eligibility check (v2 pan-eligibility/send): one gateway operation, no money.
 *
 *   initial → checking → eligible | not-eligible | failed
 */
export type CheckStatus = 'initial' | 'checking' | 'eligible' | 'not-eligible' | 'failed';

export interface OpenCheck {
  readonly status: Exclude<CheckStatus, 'initial'>;
  readonly version: number;
  readonly checkId: string;
  readonly merchant: MerchantRef;
  readonly clientOrderId: string;
  readonly gatewayOrderId?: string;
  readonly inFlight?: OperationInFlight<PanEligibilityOperation>;
}

export type CheckState = { readonly status: 'initial'; readonly version: number } | OpenCheck;

export const initialCheckState: CheckState = { status: 'initial', version: 0 };

export type CheckInput = SagaOperationInput<PanEligibilityCommand, PanEligibilityOperation>;

export type CheckEffect =
  | OperationEffect
  | { type: 'send-gateway-request'; request: GatewayPanEligibilityRequest | GatewayStatusRequest };

export type CheckDecision = FlowDecision<PanEligibilityEvent, CheckEffect>;
export type CheckEventDraft = Draft<PanEligibilityEvent, 'checkId'>;

export interface CheckContext {
  readonly now: string;
  readonly ids: { next(): string };
  readonly policy: OperationRules;
}
