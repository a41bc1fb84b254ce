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
  config: Pick<OrchestratorConfig, 'policy' | 'payoutLimits'>,
): PayoutPolicy {
  const endpoints = config.payoutLimits.endpoints ?? {};
  return {
    limits: {
      default: limits(config.payoutLimits.default),
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
