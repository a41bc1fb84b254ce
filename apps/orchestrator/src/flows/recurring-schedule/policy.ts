import type { OrchestratorConfig } from '../../config';
import type { SchedulePolicy } from './domain';

/** The schedule decider's policy from SCHEDULE_DUNNING_RETRY_SECONDS. */
export function schedulePolicy(config: Pick<OrchestratorConfig, 'schedules'>): SchedulePolicy {
  return { retryDelaysMs: config.schedules.dunningRetrySeconds.map((s) => s * 1000) };
}
