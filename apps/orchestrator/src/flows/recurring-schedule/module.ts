import { gatewayChargesOf } from '../../domain/reconciliation';
import { refreshActions } from '../../domain/admin-actions';
import { transactionTypes } from '../../runtime/flow-binding';
import type { FlowModule } from '../flow-module';
import type { ScheduleState } from './domain/state';
import { schedulePolicy } from './policy';
import { RECURRING_SCHEDULE_FLOW, recurringScheduleFlow } from './recurring-schedule.flow';

/** A registered schedule's charges: the gateway reports each as a sale on its own order. */
const SCHEDULE_CHARGES = transactionTypes<'sale'>({ sale: ['sale'] });

/**
 * Recurring schedules. One the orchestrator charges moves money only through its rebill
 * payments (card-payment sagas, reconciled and counted as such: its `cycle-charged` is
 * bookkeeping); one registered with the gateway is charged by the gateway, each charge an order
 * of its own, checked by its order id.
 */
export const recurringScheduleModule: FlowModule = {
  name: RECURRING_SCHEDULE_FLOW,
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
  },
  moneyEvents: [],
  actions: {
    ...refreshActions('refresh-schedule-status', 'scheduleId'),
    pause: (saga, _input, base) => ({ type: 'pause-schedule', ...base, scheduleId: saga.id }),
    resume: (saga, _input, base) => ({ type: 'resume-schedule', ...base, scheduleId: saga.id }),
    cancel: (saga, _input, base) => ({ type: 'cancel-schedule', ...base, scheduleId: saga.id }),
  },
};
