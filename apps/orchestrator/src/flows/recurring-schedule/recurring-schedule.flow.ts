import { type RejectionArgs, rejectionFields } from '../../domain/rejection';
import { type ScheduleCommand, type ScheduleEvent } from '@payments/contracts';
import type { Flow, RuntimeEffect, SagaInput } from '../../runtime/flow';
import {
  CHARGE_TIMER,
  type ChargeTimer,
  decideSchedule,
  evolve,
  initialScheduleState,
  type ScheduleEffect,
  type ScheduleInput,
  type SchedulePolicy,
  type ScheduleState,
} from './domain';

export const RECURRING_SCHEDULE_FLOW = 'recurring-schedule';

/** The commands a schedule saga owns (record-cycle-outcome comes from its rebill sagas). */
export const RECURRING_SCHEDULE_COMMANDS = [
  'create-schedule',
  'update-schedule',
  'pause-schedule',
  'resume-schedule',
  'cancel-schedule',
  'record-cycle-outcome',
] as const satisfies ReadonlyArray<ScheduleCommand['type']>;

/** A runtime input as the schedule decider's input (undefined: nothing a schedule hears). */
function toDomainInput(input: SagaInput): ScheduleInput | undefined {
  switch (input.kind) {
    case 'command':
      return { kind: 'command', command: input.command.body as ScheduleCommand };
    case 'timer':
      return input.timer.kind === CHARGE_TIMER
        ? { kind: 'timer', timer: input.timer.payload as ChargeTimer }
        : undefined;
    case 'gateway-result':
    case 'callback':
    case 'status-check-hint':
      // A schedule sends no gateway request: its charges are rebill sagas of their own.
      return undefined;
    default: {
      const never: never = input;
      throw new Error(`unhandled input ${JSON.stringify(never)}`);
    }
  }
}

function toRuntimeEffect(effect: ScheduleEffect): RuntimeEffect {
  switch (effect.type) {
    case 'start-rebill':
      return { type: 'start-saga', command: effect.command };
    case 'set-charge-timer':
      return { type: 'set-timer', kind: CHARGE_TIMER, at: effect.at, payload: effect.timer };
    case 'cancel-charge-timer':
      return { type: 'cancel-timer', kind: CHARGE_TIMER };
    default: {
      const never: never = effect;
      throw new Error(`unhandled effect ${JSON.stringify(never)}`);
    }
  }
}

export function scheduleRejectionEvent(
  args: RejectionArgs & { scheduleId: string },
): ScheduleEvent {
  return { type: 'command-rejected', scheduleId: args.scheduleId, ...rejectionFields(args) };
}

/** The recurring-schedule flow: a schedule saga whose cycles are rebill sagas (issue #12). */
export function recurringScheduleFlow(policy: SchedulePolicy): Flow<ScheduleState, ScheduleEvent> {
  return {
    name: RECURRING_SCHEDULE_FLOW,
    commandTypes: RECURRING_SCHEDULE_COMMANDS,
    initialState: initialScheduleState,
    decide(input, state, ctx) {
      const domainInput = toDomainInput(input);
      if (domainInput === undefined)
        return { outcome: 'ignored', reason: 'NOT_FOR_A_SCHEDULE', events: [], effects: [] };
      const decision = decideSchedule(domainInput, state, { now: ctx.now, policy });
      switch (decision.outcome) {
        case 'accepted':
          return { ...decision, effects: decision.effects.map(toRuntimeEffect) };
        case 'ignored':
        case 'rejected':
          return decision;
        default: {
          const never: never = decision;
          throw new Error(`unhandled decision ${JSON.stringify(never)}`);
        }
      }
    },
    evolve,
    project(state) {
      return state.status === 'initial'
        ? { status: state.status, kind: null, settled: false }
        : {
            status: state.status,
            kind: 'schedule',
            endpointId: state.terms.merchant.endpointId,
            // A schedule stores no gateway request and no sealed card.
            settled: state.status === 'cancelled' || state.status === 'completed',
          };
    },
    rejection: ({ sagaId, ...rest }) => scheduleRejectionEvent({ scheduleId: sagaId, ...rest }),
    resendWanted: () => false,
  };
}
