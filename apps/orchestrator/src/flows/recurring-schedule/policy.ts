import type { OrchestratorConfig } from '../../config';
import type { SchedulePolicy } from './domain';

/**
 * The schedule decider's policy from SCHEDULE_DUNNING_RETRY_SECONDS,
 * SCHEDULE_GATEWAY_REGISTRATION_ENDPOINTS, SCHEDULE_GATEWAY_STATUS_POLL_SECONDS,
 * SCHEDULE_GATEWAY_CHARGE_GRACE_SECONDS, GATEWAY_MAX_SEND_ATTEMPTS and PAYMENT_LIMITS (the limits its
 * rebills face).
 */
export function schedulePolicy(
  config: Pick<OrchestratorConfig, 'schedules' | 'limits'> & {
    policy: Pick<OrchestratorConfig['policy'], 'maxSendAttempts'>;
  },
): SchedulePolicy {
  return {
    retryDelaysMs: config.schedules.dunningRetrySeconds.map((s) => s * 1000),
    gatewayRegistrationEndpoints: config.schedules.gatewayRegistrationEndpoints,
    statusPollMs: config.schedules.gatewayStatusPollSeconds * 1000,
    expectedChargeGraceMs: config.schedules.gatewayChargeGraceSeconds * 1000,
    maxSendAttempts: config.policy.maxSendAttempts,
    limits: config.limits,
  };
}
