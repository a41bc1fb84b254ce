import { ignoredWith, type Rejection, unhandled } from '../../domain/decision';
import { type RejectionArgs, rejectionFields } from '../../domain/rejection';
import {
  commandTypesOf,
  type RebillCommand,
  type RecordCycleOutcomeCommand,
  type ScheduleCommand,
  SCHEDULE_FAMILY,
  type ScheduleEvent,
} from '@payments/contracts';
import { derivedUuid } from '../../domain';
import type { Flow, RuntimeEffect, SagaInput } from '../../runtime/flow';
import { inRuntimeTerms } from '../flow-decision';
import {
  CHARGE_ALERT_TIMER_PREFIX,
  MISSING_CHARGE_TIMER_PREFIX,
  CHARGE_STATUS_TIMER_PREFIX,
  CHARGE_TIMER,
  type ChargeTimer,
  EXPECTED_CHARGE_ALERT_TIMER,
  EXPECTED_CHARGE_TIMER,
  REGISTRATION_ALERT_TIMER,
  REGISTRATION_STATUS_TIMER,
  type StatusTimer,
  decideSchedule,
  evolve,
  initialScheduleState,
  type ScheduleEffect,
  type ScheduleInput,
  type SchedulePolicy,
  type ScheduleState,
} from './domain';

export const RECURRING_SCHEDULE_FLOW = 'recurring-schedule';

/** A runtime input as the schedule decider's input (undefined: nothing a schedule hears). */
function toDomainInput(input: SagaInput): ScheduleInput | undefined {
  switch (input.kind) {
    case 'command':
      return { kind: 'command', command: input.command.body as ScheduleCommand };
    case 'timer':
      if (input.timer.kind === CHARGE_TIMER)
        return { kind: 'timer', timer: input.timer.payload as ChargeTimer };
      if (
        input.timer.kind === REGISTRATION_STATUS_TIMER ||
        input.timer.kind === REGISTRATION_ALERT_TIMER ||
        input.timer.kind === EXPECTED_CHARGE_TIMER ||
        input.timer.kind === EXPECTED_CHARGE_ALERT_TIMER ||
        input.timer.kind.startsWith(CHARGE_STATUS_TIMER_PREFIX) ||
        input.timer.kind.startsWith(CHARGE_ALERT_TIMER_PREFIX) ||
        input.timer.kind.startsWith(MISSING_CHARGE_TIMER_PREFIX)
      )
        return {
          kind: 'status-timer',
          timerKind: input.timer.kind,
          timer: input.timer.payload as StatusTimer,
        };
      return undefined;
    // A schedule the orchestrator charges sends no gateway request (its charges are rebill sagas
    // of their own); one registered with the gateway hears its results and verified callbacks.
    case 'gateway-result':
      return { kind: 'gateway-result', result: input.result };
    case 'callback':
      return { kind: 'callback', callback: input.callback };
    case 'status-check-hint':
      // Unverified and naming no order: a registered schedule's charges wait for verified callbacks.
      return undefined;
    default:
      return unhandled(input, 'input');
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
    case 'send-gateway-request':
      return { type: 'send-gateway-request', request: effect.request };
    case 'resend-registration':
      return { ...effect, type: 'resend-gateway-request' };
    case 'set-status-timer':
      return {
        type: 'set-timer',
        kind: effect.kind,
        at: effect.at,
        payload: effect.timer,
        ...(effect.keepSooner === undefined ? {} : { keepSooner: effect.keepSooner }),
      };
    case 'cancel-status-timer':
      return { type: 'cancel-timer', kind: effect.kind };
    case 'advance-status-timer':
      return { type: 'advance-timer', kind: effect.kind, at: effect.at };
    default:
      return unhandled(effect, 'effect');
  }
}

export function scheduleRejectionEvent(
  args: RejectionArgs & { scheduleId: string },
): ScheduleEvent {
  return { type: 'command-rejected', scheduleId: args.scheduleId, ...rejectionFields(args) };
}

/**
 * A cycle's rebill the runtime refused before any decider saw it (its schema, a command id another
 * body took): no payment saga exists to report the cycle, so the refusal is its outcome, `failed`
 * with the refusal's code, under the command id a settled rebill reports with (one report per
 * rebill). The schedule then follows its dunning rules as for any failed charge.
 */
export function refusedRebillOutcome(
  child: object,
  rejection: Rejection,
  now: string,
): RecordCycleOutcomeCommand | undefined {
  // The schedule built it (chargeDue): a rebill naming its schedule has these fields.
  const rebill = child as Partial<RebillCommand>;
  const { schedule, paymentId, merchant } = rebill;
  if (rebill.type !== 'rebill' || !schedule || !paymentId || !merchant) return undefined;
  return {
    type: 'record-cycle-outcome',
    commandId: derivedUuid(`${paymentId}/record-cycle-outcome`),
    scheduleId: schedule.scheduleId,
    merchant,
    occurredAt: now,
    cycle: schedule.cycle,
    attempt: schedule.attempt,
    paymentId,
    outcome: 'failed',
    code: rejection.code.slice(0, 64),
  };
}

/** The recurring-schedule flow: a schedule saga whose cycles are rebill sagas. */
export function recurringScheduleFlow(policy: SchedulePolicy): Flow<ScheduleState, ScheduleEvent> {
  return {
    name: RECURRING_SCHEDULE_FLOW,
    // record-cycle-outcome comes from its rebill sagas.
    commandTypes: commandTypesOf(SCHEDULE_FAMILY),
    initialState: initialScheduleState,
    decide(input, state, ctx) {
      const domainInput = toDomainInput(input);
      if (domainInput === undefined) return ignoredWith('NOT_FOR_A_SCHEDULE');
      return inRuntimeTerms(
        decideSchedule(domainInput, state, { now: ctx.now, policy, ids: ctx.ids }),
        toRuntimeEffect,
      );
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
    // Only the registration is ever resent (not sent, or once after no trace at the gateway).
    childRefusalEffects(child, rejection, now) {
      const outcome = refusedRebillOutcome(child, rejection, now);
      return outcome === undefined ? [] : [{ type: 'start-saga', command: outcome }];
    },
    resendWanted: (state, requestId) =>
      state.status === 'registering' && state.registration.requestId === requestId,
  };
}
