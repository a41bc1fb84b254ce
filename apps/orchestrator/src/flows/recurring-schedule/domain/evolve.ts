import { unhandled } from '../../../domain/decision';
import type { ScheduleEvent } from '@payments/contracts';
import { decidedOf, reopenedOf } from '../../../domain/gateway-operation/decided-operation';
import { inFlight } from '../../../domain/gateway-operation/gateway-operation';
import { chargeOp, newChargeOp, registrationOp, registrationRequestId } from './gateway-charged';
import {
  type ChargeOp as ChargeOpOf,
  isGatewayCharged,
  type GatewayCharge,
  type ScheduleState,
} from './state';

/** Folds one event into the state. Events only ever follow decisions, so a misfit is a bug. */
export function evolve(state: ScheduleState, event: ScheduleEvent): ScheduleState {
  const version = event.version;
  if (event.type === 'command-rejected') return { ...state, version };
  if (event.type === 'schedule-created') {
    const { scheduleId, merchant, cardRef, amount, description, rule } = event;
    const terms = { scheduleId, merchant, cardRef, amount, description, rule };
    if (event.chargedBy === 'gateway') {
      return {
        status: 'registering',
        version,
        terms,
        registration: inFlight.requested({
          operation: 'create-recurring-payment' as const,
          requestId: registrationRequestId(scheduleId),
          commandId: registrationRequestId(scheduleId),
          occurredAt: event.occurredAt,
        }),
        charges: [],
        firstCycle: event.skippedCycles,
      };
    }
    return event.nextCycle === undefined
      ? { status: 'completed', version, terms }
      : { status: 'active', version, terms, nextCycle: event.nextCycle, charge: null };
  }
  if (state.status === 'initial') throw new Error(`${event.type} before schedule-created`);
  if (isGatewayCharged(state)) return evolveGatewayCharged(state, event);
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
    case 'schedule-registration-unknown':
    case 'schedule-registration-accepted':
    case 'schedule-registration-resent':
    case 'schedule-registered':
    case 'schedule-registration-failed':
    case 'gateway-charge-reported':
    case 'gateway-charge-accepted':
    case 'gateway-charge-outcome-unknown':
    case 'gateway-cycle-charged':
    case 'gateway-cycle-declined':
    case 'gateway-charge-alert':
    case 'schedule-charge-settled-by-decision':
    case 'schedule-charge-case-reopened':
      throw new Error(`${event.type} for a schedule the gateway does not charge`);
    default:
      return unhandled(event, 'event');
  }
}

export function fold(state: ScheduleState, events: readonly ScheduleEvent[]): ScheduleState {
  return events.reduce(evolve, state);
}

const firstCycleOf = (state: { readonly firstCycle?: number }) =>
  state.firstCycle === undefined ? {} : { firstCycle: state.firstCycle };

/** A schedule registered with the gateway: its registration and the gateway's charges. */
function evolveGatewayCharged(
  state: Extract<ScheduleState, { status: 'registering' | 'registered' | 'registration-failed' }>,
  event: Exclude<ScheduleEvent, { type: 'schedule-created' | 'command-rejected' }>,
): ScheduleState {
  const { version } = event;
  const { terms } = state;
  // A settled charge keeps no operation in flight.
  const settle = (gatewayOrderId: string, outcome: GatewayCharge['outcome']) =>
    state.charges.map((c) => {
      if (c.gatewayOrderId !== gatewayOrderId) return c;
      const { op: _op, ...charge } = c;
      return { ...charge, outcome };
    });
  const changeOp = (gatewayOrderId: string, change: (op: ChargeOpOf) => ChargeOpOf) =>
    state.charges.map((c) =>
      c.gatewayOrderId === gatewayOrderId ? { ...c, op: change(chargeOp(terms.scheduleId, c)) } : c,
    );
  switch (event.type) {
    case 'schedule-registration-unknown':
    case 'schedule-registration-accepted':
    case 'schedule-registration-resent': {
      if (state.status !== 'registering') throw new Error(`${event.type} in ${state.status}`);
      const op = registrationOp(state.registration);
      const registration =
        event.type === 'schedule-registration-unknown'
          ? inFlight.unknown(
              op,
              event.since ?? event.occurredAt,
              event.alert === true,
              event.concern,
            )
          : event.type === 'schedule-registration-accepted'
            ? inFlight.accepted(op, event.serialNumber)
            : inFlight.resent(op, event.occurredAt);
      return { ...state, version, registration };
    }
    case 'schedule-registered':
      return {
        status: 'registered',
        version,
        terms,
        recurringPaymentId: event.recurringPaymentId,
        charges: state.charges,
        ...firstCycleOf(state),
      };
    case 'schedule-registration-failed':
      return {
        status: 'registration-failed',
        version,
        terms,
        charges: state.charges,
        ...firstCycleOf(state),
      };
    case 'gateway-charge-alert':
      return event.reason === 'not-found'
        ? {
            ...state,
            version,
            missingCycles: [
              ...(state.missingCycles ?? []).filter((c) => c !== event.cycle),
              event.cycle,
            ],
          }
        : { ...state, version };
    case 'gateway-charge-reported':
      return {
        ...withoutMissing(state, event.cycle),
        version,
        charges: [
          ...state.charges,
          {
            gatewayOrderId: event.gatewayOrderId,
            clientOrderId: event.clientOrderId,
            cycle: event.cycle,
            outcome: 'confirming',
            op: newChargeOp(terms.scheduleId, event.gatewayOrderId, event.occurredAt),
          },
        ],
      };
    case 'gateway-charge-accepted':
      return {
        ...state,
        version,
        charges: changeOp(event.gatewayOrderId, (op) => inFlight.accepted(op, event.serialNumber)),
      };
    case 'gateway-charge-outcome-unknown':
      return {
        ...state,
        version,
        charges: changeOp(event.gatewayOrderId, (op) =>
          inFlight.unknown(op, event.since, event.alert, event.concern),
        ),
      };
    case 'gateway-cycle-charged':
      return { ...state, version, charges: settle(event.gatewayOrderId, 'charged') };
    case 'gateway-cycle-declined':
      return { ...state, version, charges: settle(event.gatewayOrderId, 'declined') };
    case 'schedule-charge-settled-by-decision': {
      // "done": the cycle counts as charged; "not done": as not charged. Kept as decided, so a
      // later gateway answer about that very charge that contradicts it reopens the case.
      const charge = state.charges.find((c) => c.gatewayOrderId === event.gatewayOrderId);
      if (charge?.outcome !== 'confirming')
        throw new Error(`${event.type} of no charge confirming`);
      const decided = decidedOf(chargeOp(terms.scheduleId, charge), event);
      return {
        ...state,
        version,
        decided,
        charges: settle(
          event.gatewayOrderId,
          event.decision === 'done' ? 'charged' : 'declined',
        ).map((c) => (c.gatewayOrderId === event.gatewayOrderId ? { ...c, decided } : c)),
      };
    }
    case 'schedule-charge-case-reopened': {
      // The reopened decision becomes the schedule's last (`decided`): the case sweep reopens the
      // case it names, whichever charge was decided since.
      const charges = state.charges.map((c) =>
        c.gatewayOrderId === event.gatewayOrderId ? reopenedOf(c) : c,
      );
      const reopened = charges.find((c) => c.gatewayOrderId === event.gatewayOrderId)?.decided;
      return {
        ...state,
        version,
        charges,
        ...(reopened === undefined ? {} : { decided: reopened }),
      };
    }
    case 'schedule-updated':
    case 'schedule-paused':
    case 'schedule-resumed':
    case 'schedule-cancelled':
    case 'schedule-completed':
    case 'cycle-charge-requested':
    case 'cycle-charged':
    case 'cycle-charge-declined':
    case 'schedule-past-due':
    case 'schedule-recovered':
    case 'schedule-suspended':
      throw new Error(`${event.type} for a schedule the gateway charges`);
    default:
      return unhandled(event, 'event');
  }
}

/** The state without `cycle` among its missing cycles (its charge has been seen). */
function withoutMissing<S extends { readonly missingCycles?: readonly number[] }>(
  state: S,
  cycle: number,
): S {
  if (state.missingCycles?.includes(cycle) !== true) return state;
  const rest = state.missingCycles.filter((c) => c !== cycle);
  if (rest.length > 0) return { ...state, missingCycles: rest };
  const { missingCycles: _gone, ...others } = state;
  return others as S;
}
