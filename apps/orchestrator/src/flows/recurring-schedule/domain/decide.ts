import { unhandled } from '../../../domain/decision';
import type {
  RebillCommand,
  RecordCycleOutcomeCommand,
  RejectionCode,
  ScheduleCommand,
  ScheduleEvent,
} from '@payments/contracts';
import { derivedUuid } from '../../../domain';
import { limitRefusal } from '../../card-payment/domain/guards';
import { cycleDueAt, cycleExists, firstCycleFrom } from './calendar';
import { decideChargeByDecision } from './gateway-charge-decision';
import {
  decideGatewayCharged,
  refreshQueries,
  type GatewayEffect,
  type GatewayIgnoreReason,
  type GatewayInput,
  registrationRequest,
} from './gateway-charged';
import {
  type ChargeTimer,
  DEFAULT_SCHEDULE_POLICY,
  isGatewayCharged,
  registersWithGateway,
  type ScheduleTerms,
  type ScheduleState,
  type SchedulePolicy,
} from './state';

/**
 * The recurring-schedule decider: pure, time and policy as data.
 *
 * One charge per cycle: a cycle's charge is started only by its charge timer, only when no charge
 * is in flight and the timer names the cycle and attempt the state waits for; its rebill payment
 * and command ids derive from (schedule, cycle, attempt), so even a decision taken twice starts
 * the same child saga, which the runtime's command idempotency starts once.
 */

export type ScheduleInput =
  | { kind: 'command'; command: ScheduleCommand }
  | { kind: 'timer'; timer: ChargeTimer }
  /** Gateway results, verified callbacks and status timers: schedules registered with the gateway. */
  | GatewayInput;

export type ScheduleEffect =
  /** Start the cycle's rebill saga (the runtime's start-saga). */
  | { type: 'start-rebill'; command: RebillCommand }
  | { type: 'set-charge-timer'; at: string; timer: ChargeTimer }
  | { type: 'cancel-charge-timer' }
  /** A schedule registered with the gateway: its registration and status queries. */
  | GatewayEffect;

export type ScheduleIgnoreReason = 'TIMER_OBSOLETE' | 'NOT_GATEWAY_CHARGED' | GatewayIgnoreReason;

export type ScheduleDecision =
  | { outcome: 'accepted'; events: ScheduleEvent[]; effects: ScheduleEffect[] }
  | {
      outcome: 'rejected';
      rejection: { code: RejectionCode; message: string };
      events: ScheduleEvent[];
      effects: [];
    }
  | { outcome: 'ignored'; reason: ScheduleIgnoreReason; events: []; effects: [] };

export interface ScheduleContext {
  /** ISO instant. */
  now: string;
  policy?: SchedulePolicy;
  /** Fresh ids (status requests); undefined: derived from the schedule, the time and a count. */
  ids?: { next(): string };
}

type Draft = ScheduleEvent extends infer E
  ? E extends ScheduleEvent
    ? Omit<E, 'version' | 'occurredAt' | 'scheduleId' | 'commandId'>
    : never
  : never;

/** The ids of cycle `cycle`'s attempt `attempt`: the same every time they are asked for. */
export function chargeIds(
  scheduleId: string,
  cycle: number,
  attempt: number,
): { paymentId: string; commandId: string } {
  const name = `recurring-schedule/${scheduleId}/cycle/${cycle}/attempt/${attempt}`;
  return { paymentId: derivedUuid(`${name}/payment`), commandId: derivedUuid(`${name}/command`) };
}

export function decideSchedule(
  input: ScheduleInput,
  state: ScheduleState,
  ctx: ScheduleContext,
): ScheduleDecision {
  const policy = ctx.policy ?? DEFAULT_SCHEDULE_POLICY;
  const events = (scheduleId: string, commandId: string, drafts: Draft[]): ScheduleEvent[] =>
    drafts.map((draft, i) => ({
      ...draft,
      scheduleId,
      commandId,
      version: state.version + 1 + i,
      occurredAt: ctx.now,
    }));
  if (input.kind === 'timer') {
    // A registered schedule has no charge timer: the gateway charges it.
    if (isGatewayCharged(state))
      return { outcome: 'ignored', reason: 'TIMER_OBSOLETE', events: [], effects: [] };
    return chargeDue(input.timer, state, ctx, events);
  }
  if (input.kind !== 'command') {
    if (!isGatewayCharged(state))
      return { outcome: 'ignored', reason: 'NOT_GATEWAY_CHARGED', events: [], effects: [] };
    const outcome = decideGatewayCharged(input, state, policy, {
      now: ctx.now,
      ids: idsOf(state, ctx),
    });
    if (outcome.outcome === 'ignored')
      return { outcome: 'ignored', reason: outcome.reason, events: [], effects: [] };
    return {
      outcome: 'accepted',
      events: events(state.terms.scheduleId, outcome.commandId, outcome.drafts),
      effects: outcome.effects,
    };
  }
  const command = input.command;
  const accept = (drafts: Draft[], effects: ScheduleEffect[]): ScheduleDecision => ({
    outcome: 'accepted',
    events: events(command.scheduleId, command.commandId, drafts),
    effects,
  });
  const reject = (code: RejectionCode, message: string): ScheduleDecision => ({
    outcome: 'rejected',
    rejection: { code, message },
    events: events(command.scheduleId, command.commandId, [
      { type: 'command-rejected', commandType: command.type, reason: code, message },
    ]),
    effects: [],
  });

  if (command.type === 'create-schedule') {
    if (state.status !== 'initial')
      return reject('SCHEDULE_ALREADY_EXISTS', `schedule ${command.scheduleId} exists`);
    // The rebill's own limit check, asked up front: a schedule is never created to charge what
    // every one of its rebills would be refused.
    const overLimit = limitRefusal(policy.limits, command.merchant.endpointId, command.amount);
    if (overLimit) return reject(overLimit.code, overLimit.message);
    const first = firstCycleFrom(command.rule, 0, ctx.now);
    if (first === undefined)
      return reject('INVALID_SCHEDULE', 'the schedule has no cycle from now on (ended already)');
    const { merchant, cardRef, amount, description, rule } = command;
    const created = {
      type: 'schedule-created' as const,
      merchant,
      cardRef,
      amount,
      description,
      rule,
      skippedCycles: first,
    };
    if (registersWithGateway(policy, merchant.endpointId)) {
      // Registered with the gateway, which charges every cycle: no charge timer, ever.
      const registration = registrationRequest(command, first, ctx.now);
      if (!registration.ok) return reject('INVALID_SCHEDULE', registration.message);
      return accept(
        [{ ...created, chargedBy: 'gateway' }],
        [{ type: 'send-gateway-request', request: registration.request }],
      );
    }
    const nextDueAt = dueAt(command.rule, first);
    return accept(
      [{ ...created, nextCycle: first, nextDueAt }],
      [{ type: 'set-charge-timer', at: nextDueAt, timer: { cycle: first, attempt: 1 } }],
    );
  }
  if (state.status === 'initial')
    return reject('SCHEDULE_NOT_FOUND', `no schedule ${command.scheduleId}`);
  if (state.terms.merchant.endpointId !== command.merchant.endpointId)
    return reject('MERCHANT_MISMATCH', 'the schedule belongs to another endpoint');
  const { terms } = state;
  if (command.type === 'refresh-schedule-status') {
    const queries = isGatewayCharged(state)
      ? refreshQueries(state, { now: ctx.now, ids: idsOf(state, ctx) })
      : [];
    if (queries.length > 0) return accept([], queries);
    // A schedule we charge has nothing of its own at the gateway: its cycle is a rebill payment.
    const charge = 'charge' in state ? state.charge : null;
    return reject(
      'NOTHING_TO_REFRESH',
      charge === null
        ? `the schedule is ${state.status} with nothing in flight at the gateway`
        : `cycle ${charge.cycle} is charged by payment ${charge.paymentId}: refresh that payment`,
    );
  }
  if (command.type === 'schedule-charge-settle-by-decision') {
    if (!isGatewayCharged(state))
      return reject(
        'CASE_OPERATION_SETTLED',
        'the schedule charges its cycles by rebill payments: a case decides the payment',
      );
    const outcome = decideChargeByDecision(command, state);
    if (outcome.outcome === 'refused') return reject(outcome.code, outcome.message);
    if (outcome.outcome === 'ignored')
      return { outcome: 'ignored', reason: outcome.reason, events: [], effects: [] };
    return accept(outcome.drafts, outcome.effects);
  }
  if (isGatewayCharged(state)) {
    if (command.type === 'record-cycle-outcome')
      return reject('INVALID_STATE', 'the gateway charges this schedule: it has no rebill');
    if (state.status === 'registration-failed')
      return reject('INVALID_STATE', 'the registration with the gateway failed: nothing to change');
    // The gateway's interface (spec §4) has create-recurring-payment and no operation that
    // changes, pauses or stops a recurring payment: saying yes here would be a lie.
    return reject(
      'NOT_SUPPORTED_BY_GATEWAY',
      `the schedule is registered with the gateway${state.status === 'registered' ? ` (recurring-payment-id ${state.recurringPaymentId})` : ''}, which charges it; the gateway's interface offers no operation to ${command.type.replace('-schedule', '')} a recurring payment (ask the gateway's support)`,
    );
  }

  switch (command.type) {
    case 'update-schedule': {
      if (state.status === 'cancelled' || state.status === 'completed')
        return reject('INVALID_STATE', `the schedule is ${state.status}`);
      if (command.amount.currency !== terms.amount.currency)
        return reject('CURRENCY_MISMATCH', `the schedule charges ${terms.amount.currency}`);
      const overLimit = limitRefusal(policy.limits, command.merchant.endpointId, command.amount);
      if (overLimit) return reject(overLimit.code, overLimit.message);
      return accept([{ type: 'schedule-updated', amount: command.amount }], []);
    }
    case 'pause-schedule':
      if (state.status !== 'active' && state.status !== 'past-due')
        return reject('INVALID_STATE', `the schedule is ${state.status}`);
      if (state.charge !== null)
        return reject('OPERATION_IN_PROGRESS', `cycle ${state.charge.cycle} is being charged`);
      return accept([{ type: 'schedule-paused' }], [{ type: 'cancel-charge-timer' }]);
    case 'resume-schedule': {
      if (state.status !== 'paused' && state.status !== 'suspended')
        return reject('INVALID_STATE', `the schedule is ${state.status}`);
      const next = firstCycleFrom(terms.rule, state.nextCycle, ctx.now);
      if (next === undefined) {
        return accept(
          [
            {
              type: 'schedule-resumed',
              skippedCycles: remainingCycles(terms, state.nextCycle),
            },
            { type: 'schedule-completed' },
          ],
          [],
        );
      }
      const nextDueAt = dueAt(terms.rule, next);
      return accept(
        [
          {
            type: 'schedule-resumed',
            skippedCycles: next - state.nextCycle,
            nextCycle: next,
            nextDueAt,
          },
        ],
        [{ type: 'set-charge-timer', at: nextDueAt, timer: { cycle: next, attempt: 1 } }],
      );
    }
    case 'cancel-schedule':
      if (state.status === 'cancelled' || state.status === 'completed')
        return reject('INVALID_STATE', `the schedule is ${state.status}`);
      return accept([{ type: 'schedule-cancelled' }], [{ type: 'cancel-charge-timer' }]);
    case 'record-cycle-outcome':
      return recordOutcome(command, state, terms, policy, ctx, accept, reject);
    default:
      return unhandled(command, 'command');
  }
}

/** Fresh ids for status requests: the context's, or derived from the schedule, time and a count. */
function idsOf(state: { terms: ScheduleTerms }, ctx: ScheduleContext): { next(): string } {
  let n = 0;
  return (
    ctx.ids ?? {
      next: () =>
        derivedUuid(`recurring-schedule/${state.terms.scheduleId}/${ctx.now}/${(n += 1)}`),
    }
  );
}

function dueAt(rule: ScheduleTerms['rule'], cycle: number): string {
  const at = cycleDueAt(rule, cycle);
  if (at === undefined) throw new Error(`cycle ${cycle} does not exist`);
  return at;
}

/** Cycles from `from` to the schedule's end (an ended schedule has an end). */
function remainingCycles(terms: ScheduleTerms, from: number): number {
  let n = from;
  while (cycleExists(terms.rule, n)) n += 1;
  return n - from;
}

/** The charge timer fired: start the cycle (or its retry) it names, if that is what is awaited. */
function chargeDue(
  timer: ChargeTimer,
  state: ScheduleState,
  ctx: ScheduleContext,
  events: (scheduleId: string, commandId: string, drafts: Draft[]) => ScheduleEvent[],
): ScheduleDecision {
  const ignored: ScheduleDecision = {
    outcome: 'ignored',
    reason: 'TIMER_OBSOLETE',
    events: [],
    effects: [],
  };
  let amount;
  if (state.status === 'active' && state.charge === null && timer.cycle === state.nextCycle) {
    if (timer.attempt !== 1) return ignored;
    amount = state.terms.amount;
  } else if (
    state.status === 'past-due' &&
    state.charge === null &&
    timer.cycle === state.dunning.cycle &&
    timer.attempt === state.dunning.declines + 1
  ) {
    amount = state.dunning.amount;
  } else {
    return ignored;
  }
  const { terms } = state;
  const { paymentId, commandId } = chargeIds(terms.scheduleId, timer.cycle, timer.attempt);
  const rebill: RebillCommand = {
    type: 'rebill',
    commandId,
    paymentId,
    merchant: terms.merchant,
    occurredAt: ctx.now,
    cardRef: terms.cardRef,
    amount,
    order: { description: terms.description },
    schedule: { scheduleId: terms.scheduleId, cycle: timer.cycle, attempt: timer.attempt },
  };
  return {
    outcome: 'accepted',
    events: events(terms.scheduleId, commandId, [
      {
        type: 'cycle-charge-requested',
        cycle: timer.cycle,
        attempt: timer.attempt,
        paymentId,
        amount,
        dueAt: dueAt(terms.rule, timer.cycle),
      },
    ]),
    effects: [{ type: 'start-rebill', command: rebill }],
  };
}

function recordOutcome(
  command: RecordCycleOutcomeCommand,
  state: Exclude<ScheduleState, { status: 'initial' }>,
  terms: ScheduleTerms,
  policy: SchedulePolicy,
  ctx: ScheduleContext,
  accept: (drafts: Draft[], effects: ScheduleEffect[]) => ScheduleDecision,
  reject: (code: RejectionCode, message: string) => ScheduleDecision,
): ScheduleDecision {
  const charge = 'charge' in state ? state.charge : null;
  if (
    charge === null ||
    charge.cycle !== command.cycle ||
    charge.attempt !== command.attempt ||
    charge.paymentId !== command.paymentId
  ) {
    return reject(
      'INVALID_STATE',
      `no charge of cycle ${command.cycle} attempt ${command.attempt} (${command.paymentId}) is in flight`,
    );
  }
  const ref = { cycle: charge.cycle, attempt: charge.attempt, paymentId: charge.paymentId };
  const code = command.code === undefined ? {} : { code: command.code };
  if (state.status === 'cancelled') {
    return accept(
      [
        command.outcome === 'approved'
          ? { type: 'cycle-charged', ...ref, amount: charge.amount }
          : { type: 'cycle-charge-declined', ...ref, outcome: command.outcome, ...code },
      ],
      [],
    );
  }
  if (command.outcome === 'approved') {
    const next = charge.cycle + 1;
    const recovered: Draft[] =
      state.status === 'past-due' ? [{ type: 'schedule-recovered', cycle: charge.cycle }] : [];
    if (!cycleExists(terms.rule, next)) {
      return accept(
        [
          { type: 'cycle-charged', ...ref, amount: charge.amount },
          ...recovered,
          { type: 'schedule-completed' },
        ],
        [],
      );
    }
    // Due in the past (the worker was down, a dunning retry ran long): the timer fires at once,
    // so no cycle is skipped unless the schedule was paused.
    const nextDueAt = dueAt(terms.rule, next);
    return accept(
      [
        { type: 'cycle-charged', ...ref, amount: charge.amount, nextCycle: next, nextDueAt },
        ...recovered,
      ],
      [{ type: 'set-charge-timer', at: nextDueAt, timer: { cycle: next, attempt: 1 } }],
    );
  }
  const delay = policy.retryDelaysMs[charge.attempt - 1];
  if (delay === undefined) {
    return accept(
      [
        { type: 'cycle-charge-declined', ...ref, outcome: command.outcome, ...code },
        { type: 'schedule-suspended', cycle: charge.cycle },
      ],
      [],
    );
  }
  const retryAt = new Date(Date.parse(ctx.now) + delay).toISOString();
  const pastDue: Draft[] =
    state.status === 'active' ? [{ type: 'schedule-past-due', cycle: charge.cycle, retryAt }] : [];
  return accept(
    [
      { type: 'cycle-charge-declined', ...ref, outcome: command.outcome, ...code, retryAt },
      ...pastDue,
    ],
    [
      {
        type: 'set-charge-timer',
        at: retryAt,
        timer: { cycle: charge.cycle, attempt: charge.attempt + 1 },
      },
    ],
  );
}
