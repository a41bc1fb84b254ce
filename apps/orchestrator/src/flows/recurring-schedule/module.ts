import { SCHEDULE_FAMILY } from '@payments/contracts';
import { gatewayChargesOf } from '../../domain/reconciliation/reconciliation';
import { refreshActions } from '../../domain/admin/admin-actions';
import { transactionTypes } from '../../runtime/flow-binding';
import type { FlowModule } from '../flow-module';
import { AWAITING_STATUSES, expectedChargeChecks } from './domain/reconciliation';
import { CHARGE_TIMER, type ScheduleState, type ScheduleStatus } from './domain/state';
import { schedulePolicy } from './policy';
import { RECURRING_SCHEDULE_FLOW, recurringScheduleFlow } from './recurring-schedule.flow';

/** The queries of the schedules' gauges (the small timers table; the `(flow, status)` index). */
export const SCHEDULE_GAUGE_SQL = {
  chargesDue: `SELECT count(*)::int AS n FROM timers WHERE flow = $1 AND kind = $2 AND due_at <= $3`,
  chargesFailed: `SELECT status, count(*)::int AS n FROM sagas
   WHERE flow = $1 AND status = ANY($2) GROUP BY status`,
} as const;

const FAILED_STATUSES: ReadonlyArray<Extract<ScheduleStatus, 'past-due' | 'suspended'>> = [
  'past-due',
  'suspended',
];

/** A registered schedule's charges: the gateway reports each as a sale on its own order. */
const SCHEDULE_CHARGES = transactionTypes<'sale'>({ sale: ['sale'] });

/**
 * Recurring schedules. One the orchestrator charges moves money only through its rebill
 * payments (card-payment sagas, reconciled and counted as such: its `cycle-charged` is
 * bookkeeping); one registered with the gateway is charged by the gateway, each charge an order
 * of its own, checked by its order id — and each charge it waits for (a cycle due, not seen) by
 * its client order id, the answer handed to the schedule as evidence.
 */
export const recurringScheduleModule: FlowModule = {
  name: RECURRING_SCHEDULE_FLOW,
  family: SCHEDULE_FAMILY,
  flow: (config) => recurringScheduleFlow(schedulePolicy(config)),
  reconciliation: {
    order: (state) => {
      const s = state as ScheduleState;
      return s.status === 'initial'
        ? undefined
        : { status: s.status, clientOrderId: s.terms.scheduleId };
    },
    historyEvents: ['gateway-cycle-charged', 'gateway-cycle-declined'],
    operations: gatewayChargesOf,
    named: (t) => SCHEDULE_CHARGES.named(t),
    // The charges it waits for: cycles due and not seen (callbacks lost, alerted not-found).
    awaited: (state, at, scope) => expectedChargeChecks(state as ScheduleState, at, scope),
    awaitingStatuses: AWAITING_STATUSES,
  },
  moneyEvents: [],
  actions: {
    ...refreshActions('refresh-schedule-status', 'scheduleId'),
    pause: (saga, _input, base) => ({ type: 'pause-schedule', ...base, scheduleId: saga.id }),
    resume: (saga, _input, base) => ({ type: 'resume-schedule', ...base, scheduleId: saga.id }),
    cancel: (saga, _input, base) => ({ type: 'cancel-schedule', ...base, scheduleId: saga.id }),
  },
  gauges: [
    {
      name: 'orchestrator_schedule_charges_due',
      help: 'Recurring-schedule charges due and not started yet (charge timers past their due time)',
      read: async (query, now) => {
        const [row] = await query<{ n: number }>(SCHEDULE_GAUGE_SQL.chargesDue, [
          RECURRING_SCHEDULE_FLOW,
          CHARGE_TIMER,
          now,
        ]);
        return [{ value: row?.n ?? 0 }];
      },
    },
    {
      name: 'orchestrator_schedule_charges_failed',
      help: 'Schedules whose cycle charge failed, by status: past-due (dunning retries ahead) or suspended (retries exhausted)',
      labelNames: ['status'],
      read: async (query) => {
        const rows = await query<{ status: string; n: number }>(SCHEDULE_GAUGE_SQL.chargesFailed, [
          RECURRING_SCHEDULE_FLOW,
          FAILED_STATUSES,
        ]);
        return FAILED_STATUSES.map((status) => ({
          labels: { status },
          value: rows.find((row) => row.status === status)?.n ?? 0,
        }));
      },
    },
  ],
};
