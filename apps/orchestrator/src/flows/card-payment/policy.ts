import type { PaymentPolicy } from './domain';
import type { OrchestratorConfig } from '../../config';

/** Injection token of the PaymentPolicy built from the configuration. */
export const PAYMENT_POLICY = Symbol('PAYMENT_POLICY');

/** The decider's policy from HOLD_EXPIRY_*, UNKNOWN_ALERT_SECONDS and GATEWAY_MAX_SEND_ATTEMPTS. */
export function policyFromConfig(policy: OrchestratorConfig['policy']): PaymentPolicy {
  return {
    maxSendAttempts: policy.maxSendAttempts,
    unknownAlertAfterMs: policy.unknownAlertSeconds * 1000,
    ...(policy.holdExpirySeconds > 0
      ? {
          holdExpiry: { afterMs: policy.holdExpirySeconds * 1000, action: policy.holdExpiryAction },
        }
      : {}),
  };
}

/** The card-payment decider's whole policy: behaviour from `policy`, limits from `limits`. */
export function cardPaymentPolicy(
  config: Pick<OrchestratorConfig, 'policy' | 'limits'>,
): PaymentPolicy {
  return {
    ...policyFromConfig(config.policy),
    limits: config.limits,
    neverReceivedAfterMs: config.policy.neverReceivedSeconds * 1000,
    gatewayRefusesReusedOrderId: config.policy.gatewayRefusesReusedOrderId,
    ownLimitWaitMs: config.policy.ownLimitWaitSeconds * 1000,
    resultDeadlineMs: config.policy.resultDeadlineSeconds * 1000,
  };
}
