import type { ScheduleEvent } from '@payments/contracts';
import type { ScheduleState } from './state';

/** Folds one event into the state. Events only ever follow decisions, so a misfit is a bug. */
export function evolve(state: ScheduleState, event: ScheduleEvent): ScheduleState {
  const version = event.version;
  if (event.type === 'command-rejected') return { ...state, version };
  if (event.type === 'schedule-created') {
    const { scheduleId, merchant, cardRef, amount, description, rule } = event;
    const terms = { scheduleId, merchant, cardRef, amount, description, rule };
    return event.nextCycle === undefined
      ? { status: 'completed', version, terms }
      : { status: 'active', version, terms, nextCycle: event.nextCycle, charge: null };
  }
  if (state.status === 'initial') throw new Error(`${event.type} before schedule-created`);
  const { terms } = state;
  switch (event.type) {
    case 'schedule-updated':
      return { ...state, version, terms: { ...terms, amount: event.amount } };
    case 'schedule-paused':
      if (state.status === 'active')
        return { status: 'paused', version, terms, nextCycle: state.nextCycle };
      if (state.status === 'past-due')
        return { status: 'paused', version, terms, nextCycle: state.dunning.cycle };
      throw new Error(`schedule-paused in ${state.status}`);
    case 'schedule-resumed':
      return event.nextCycle === undefined
        ? { ...state, version }
        : { status: 'active', version, terms, nextCycle: event.nextCycle, charge: null };
    case 'schedule-cancelled':
      return {
        status: 'cancelled',
        version,
        terms,
        charge: 'charge' in state ? state.charge : null,
      };
    case 'schedule-completed':
      return { status: 'completed', version, terms };
    case 'cycle-charge-requested': {
      const charge = {
        cycle: event.cycle,
        attempt: event.attempt,
        paymentId: event.paymentId,
        amount: event.amount,
      };
      if (state.status === 'active' || state.status === 'past-due')
        return { ...state, version, charge };
      throw new Error(`cycle-charge-requested in ${state.status}`);
    }
    case 'cycle-charged':
      if (state.status === 'cancelled') return { ...state, version, charge: null };
      return { status: 'active', version, terms, nextCycle: event.cycle + 1, charge: null };
    case 'cycle-charge-declined': {
      if (state.status === 'cancelled') return { ...state, version, charge: null };
      if ((state.status !== 'active' && state.status !== 'past-due') || state.charge === null)
        throw new Error(`cycle-charge-declined in ${state.status} without a charge`);
      const dunning = { cycle: event.cycle, amount: state.charge.amount, declines: event.attempt };
      return { status: 'past-due', version, terms, dunning, charge: null };
    }
    case 'schedule-past-due':
    case 'schedule-recovered':
      return { ...state, version };
    case 'schedule-suspended':
      return { status: 'suspended', version, terms, nextCycle: event.cycle + 1 };
    default: {
      const never: never = event;
      throw new Error(`unhandled event ${JSON.stringify(never)}`);
    }
  }
}

export function fold(state: ScheduleState, events: readonly ScheduleEvent[]): ScheduleState {
  return events.reduce(evolve, state);
}
