/**
 * Recurring schedules' chaos companion. Their sagas run in a phase of their own after the main
 * workload (`schedules.ts`, verdict in `schedule-checks.ts`): moving both clocks would judge the
 * clock, not the service, in the main checks. A schedule's charges are card-payment sagas (own
 * schedules' rebills) or the gateway's (registered ones), checked there against the ledger.
 */
import { SCHEDULE_FAMILY } from '@payments/contracts';
import { chaosCompanion } from './companion';

export const recurringScheduleCompanion = chaosCompanion(SCHEDULE_FAMILY, {
  family: SCHEDULE_FAMILY.name,
  scenarios: [],
  noScenariosBecause:
    'schedules run in the schedule phase after the main workload (schedules.ts, schedule-checks.ts)',
  commands: {},
  events: {
    'schedule-created': { role: 'none' },
    'schedule-updated': { role: 'none' },
    'schedule-paused': { role: 'none' },
    'schedule-resumed': { role: 'none' },
    'schedule-cancelled': { role: 'none' },
    'schedule-completed': { role: 'none' },
    'cycle-charge-requested': { role: 'none' },
    'cycle-charged': { role: 'none' },
    'cycle-charge-declined': { role: 'none' },
    'schedule-past-due': { role: 'none' },
    'schedule-recovered': { role: 'none' },
    'schedule-suspended': { role: 'none' },
    'schedule-registration-unknown': { role: 'none' },
    'schedule-registration-accepted': { role: 'none' },
    'schedule-registration-resent': { role: 'none' },
    'schedule-registered': { role: 'none' },
    'schedule-registration-failed': { role: 'none' },
    'gateway-charge-reported': { role: 'none' },
    'gateway-charge-accepted': { role: 'none' },
    'gateway-charge-outcome-unknown': { role: 'none' },
    'gateway-cycle-charged': { role: 'none' },
    'gateway-cycle-declined': { role: 'none' },
    'gateway-charge-alert': { role: 'none' },
    'schedule-charge-settled-by-decision': { role: 'none' },
    'schedule-charge-case-reopened': { role: 'none' },
  },
  mayMove: {},
});
