import type { OrchestratorConfig } from '../../config';
import type { SchedulePolicy } from './domain';

/**
 * The schedule decider's policy from SCHEDULE_DUNNING_RETRY_SECONDS,
 * SCHEDULE_GATEWAY_REGISTRATION_ENDPOINTS, SCHEDULE_GATEWAY_CHARGE_GRACE_SECONDS, PAYMENT_LIMITS (the
 * limits its rebills face) and the shared operation rules every gateway flow takes:
 * GATEWAY_MAX_SEND_ATTEMPTS, UNKNOWN_ALERT_SECONDS, NEVER_RECEIVED_RESEND_SECONDS,
 * GATEWAY_REFUSES_REUSED_ORDER_ID_ENDPOINTS, OWN_LIMIT_WAIT_SECONDS. The registration, each charge's
 * confirmation and the search for an expected charge poll at the shared cadence.
 */
export function schedulePolicy(
  config: Pick<OrchestratorConfig, 'schedules' | 'limits'> & {
    policy: Pick<
      OrchestratorConfig['policy'],
      | 'maxSendAttempts'
      | 'unknownAlertSeconds'
      | 'neverReceivedSeconds'
      | 'gatewayRefusesReusedOrderId'
      | 'ownLimitWaitSeconds'
    >;
  },
): SchedulePolicy {
  return {
    retryDelaysMs: config.schedules.dunningRetrySeconds.map((s) => s * 1000),
    gatewayRegistrationEndpoints: config.schedules.gatewayRegistrationEndpoints,
    expectedChargeGraceMs: config.schedules.gatewayChargeGraceSeconds * 1000,
    maxSendAttempts: config.policy.maxSendAttempts,
    unknownAlertAfterMs: config.policy.unknownAlertSeconds * 1000,
    neverReceivedAfterMs: config.policy.neverReceivedSeconds * 1000,
    gatewayRefusesReusedOrderId: config.policy.gatewayRefusesReusedOrderId,
    ownLimitWaitMs: config.policy.ownLimitWaitSeconds * 1000,
    limits: config.limits,
  };
}
