import type {
  AnyPanEligibilityCommand,
  GatewayPanEligibilityRequest,
  GatewayStatusRequest,
  PanEligibilityEvent,
  PanEligibilityOperation,
} from '@payments/contracts';
import type { Draft, FlowDecision } from '../../../domain/decision';
import type { OperationSagaState } from '../../../domain/gateway-operation/single-operation';
import type {
  OperationEffect,
  OperationInFlight,
  OperationRules,
} from '../../../domain/gateway-operation/gateway-operation';
import type { SagaOperationInput } from '../../../domain/gateway-operation/single-operation';

/**
 * A PAN-eligibility check (v2 pan-eligibility/send): one gateway operation, no money.
 *
 *   initial → checking → eligible | not-eligible | failed
 *
 * An outcome the gateway never cleared is decided in a case (issue 33): "not done" only, settled
 * as `failed` with `pan-eligibility-settled-by-decision` (the saga keeps `decided`).
 */
export type CheckStatus = 'initial' | 'checking' | 'eligible' | 'not-eligible' | 'failed';

/** The check's one gateway operation in flight. */
export type CheckOp = OperationInFlight<PanEligibilityOperation>;

/** A check once requested: its order, its operation in flight, where it stands. */
export interface OpenCheck extends OperationSagaState<CheckOp, 'checkId'> {
  readonly status: Exclude<CheckStatus, 'initial'>;
}

export type CheckState = { readonly status: 'initial'; readonly version: number } | OpenCheck;

export const initialCheckState: CheckState = { status: 'initial', version: 0 };

export type CheckInput = SagaOperationInput<AnyPanEligibilityCommand, PanEligibilityOperation>;

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
