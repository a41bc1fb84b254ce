import type { OrchestratorConfig } from '../../config';
import type { PayoutLimits, PayoutPolicy } from './domain';

type ConfiguredLimits = OrchestratorConfig['payoutLimits']['default'];

function limits({ approvalWindowSeconds, ...rest }: ConfiguredLimits): PayoutLimits {
  return {
    ...rest,
    ...(approvalWindowSeconds === undefined
      ? {}
      : { approvalWindowMs: approvalWindowSeconds * 1000 }),
  };
}

/** The payout deciders' policy from PAYOUT_LIMITS and the shared gateway settings. */
export function payoutPolicy(
  config: Pick<OrchestratorConfig, 'policy' | 'payoutLimits'> &
    Partial<Pick<OrchestratorConfig, 'payoutFourEyesAboveMinor'>>,
): PayoutPolicy {
  const endpoints = config.payoutLimits.endpoints ?? {};
  // PAYOUT_FOUR_EYES_ABOVE_MINOR is the default's threshold unless PAYOUT_LIMITS' default sets one;
  // an endpoint's own entry overrides both (limitsOf).
  const fourEyes = config.payoutFourEyesAboveMinor;
  return {
    limits: {
      default: {
        ...(fourEyes === undefined ? {} : { fourEyesAboveMinor: fourEyes }),
        ...limits(config.payoutLimits.default),
      },
      endpoints: Object.fromEntries(Object.entries(endpoints).map(([id, l]) => [id, limits(l)])),
    },
    maxSendAttempts: config.policy.maxSendAttempts,
    unknownAlertAfterMs: config.policy.unknownAlertSeconds * 1000,
    neverReceivedAfterMs: config.policy.neverReceivedSeconds * 1000,
    gatewayRefusesReusedOrderId: config.policy.gatewayRefusesReusedOrderId,
    ownLimitWaitMs: config.policy.ownLimitWaitSeconds * 1000,
    resultDeadlineMs: config.policy.resultDeadlineSeconds * 1000,
  };
}
