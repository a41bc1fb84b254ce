import type { PaymentEvent } from '@payments/contracts';
import type { FlowDecision, IgnoreReason as SharedIgnoreReason } from '../../../domain/decision';
import type { ReusedOrderIdRefusal } from '../../../domain/gateway-operation/gateway-operation';
import type { Effect } from './effects';
import type { HoldExpiryAction } from './inputs';

/** Amount rules of an endpoint, checked before anything reaches the gateway (minor units). */
export interface AmountLimits {
  readonly minMinor?: number;
  readonly maxMinor?: number;
  /** ISO 4217 codes accepted; undefined: any. */
  readonly currencies?: readonly string[];
}

/** `default` for every endpoint; an endpoint's own entry overrides it field by field. */
export interface PaymentLimits {
  readonly default: AmountLimits;
  readonly endpoints?: Readonly<Record<string, AmountLimits>>;
}

/** Without configuration: at most 100,000,000 minor units per sale or preauth. */
export const DEFAULT_LIMITS: PaymentLimits = { default: { maxMinor: 100_000_000 } };

export { DEFAULT_NEVER_RECEIVED_AFTER_MS } from '../../../domain/gateway-operation/gateway-operation';

export {
  DEFAULT_OWN_LIMIT_WAIT_MS,
  NEVER_RECEIVED_ATTEMPT,
} from '../../../domain/gateway-operation/send-rules';

export interface PaymentPolicy {
  /**
   * A request our own breaker, rate limit or concurrency limit held back (not-sent with retryAt)
   * is resent at retryAt until this long after it was first requested, then fails as not-sent.
   * Undefined: DEFAULT_OWN_LIMIT_WAIT_MS.
   */
  ownLimitWaitMs?: number;
  /**
   * How long after an outcome became unknown the gateway's "no trace" answer counts (the order
   * does not exist, or the order's latest request is an earlier one): see the no-trace rule in
   * domain/gateway-operation/gateway-operation.ts. Undefined: DEFAULT_NEVER_RECEIVED_AFTER_MS.
   */
  neverReceivedAfterMs?: number;
  /** See OperationRules.gatewayRefusesReusedOrderId (undefined: no endpoint does). */
  gatewayRefusesReusedOrderId?: ReusedOrderIdRefusal;
  /** See OperationRules.resultDeadlineMs (undefined: DEFAULT_RESULT_DEADLINE_MS). */
  resultDeadlineMs?: number;
  /** Per-endpoint amount and currency limits; undefined: DEFAULT_LIMITS. */
  limits?: PaymentLimits;
  /** Sends of one request before a persistent not-sent result fails it (nothing reached the gateway). */
  maxSendAttempts: number;
  /** An authorization not captured within this time is voided or reported; undefined: no timer. */
  holdExpiry?: { afterMs: number; action: HoldExpiryAction };
  /** An outcome unknown this long raises the alert (facts §4: one hour). */
  unknownAlertAfterMs: number;
}

export const DEFAULT_POLICY: PaymentPolicy = {
  maxSendAttempts: 5,
  holdExpiry: { afterMs: 7 * 24 * 60 * 60 * 1000, action: 'void' },
  unknownAlertAfterMs: 60 * 60 * 1000,
};

/** Time and ids enter as data, so decisions are reproducible. */
export interface DecisionContext {
  /** ISO instant. */
  now: string;
  ids: { next(): string };
  policy?: PaymentPolicy;
}

export type { Rejection } from '../../../domain/decision';

/** Why an input changed nothing: the gateway flows' reasons, and a refused 3-D Secure upload. */
export type IgnoreReason =
  | SharedIgnoreReason
  /** The gateway refused a 3-D Secure upload; the sale/preauth goes on without it. */
  | 'UPLOAD_REFUSED';

export type Decision = FlowDecision<PaymentEvent, Effect, IgnoreReason>;
