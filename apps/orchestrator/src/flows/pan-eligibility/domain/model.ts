import type {
  GatewayCallback,
  GatewayPanEligibilityRequest,
  GatewayResult,
  GatewayStatusRequest,
  MerchantRef,
  PanEligibilityCommand,
  PanEligibilityEvent,
  PanEligibilityOperation,
  StatusCheckHint,
} from '@payments/contracts';
import type { Draft, FlowDecision } from '../../../domain/decision';
import type {
  OperationEffect,
  OperationInFlight,
  OperationRules,
  OperationTimer,
} from '../../../domain/gateway-operation';

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

export type CheckInput =
  | { kind: 'command'; command: PanEligibilityCommand }
  | { kind: 'gateway-result'; result: GatewayResult; about?: readonly PanEligibilityOperation[] }
  | { kind: 'callback'; callback: GatewayCallback; about?: readonly PanEligibilityOperation[] }
  | { kind: 'status-check-hint'; hint: StatusCheckHint }
  | { kind: 'timer-fired'; timer: OperationTimer };

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
