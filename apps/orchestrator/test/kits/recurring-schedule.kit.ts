/**
 * The recurring schedule on the flow kit (test support only): its contract, its history and its
 * inputs.
 *
 *   givenInputs([create(), T0]).when(timer(0), at(...)).then([{ type: 'cycle-charge-requested' }])
 *
 * Every input comes with the time it is decided at (schedules are all about time).
 */
import type {
  GatewayCallback,
  GatewayResult,
  GatewayStatusReport,
  Money,
  ScheduleCommand,
  ScheduleEvent,
} from '@payments/contracts';
import fc from 'fast-check';
import {
  createScheduleCommand,
  MERCHANT,
  SCHEDULE_ID,
  testUuid,
} from '@payments/contracts/testing';
import {
  type ChargeTimer,
  chargeSubjectId,
  expectedChargeSubjectId,
  chargeTimerKinds,
  EXPECTED_CHARGE_ALERT_TIMER,
  EXPECTED_CHARGE_TIMER,
  REGISTRATION_ALERT_TIMER,
  REGISTRATION_STATUS_TIMER,
  registrationRequestId,
  decideSchedule,
  DEFAULT_SCHEDULE_POLICY,
  evolve,
  initialScheduleState,
  type ScheduleEffect,
  type ScheduleInput,
  type SchedulePolicy,
  type ScheduleState,
} from '../../src/flows/recurring-schedule/domain';
import { type FlowContract, FlowHistory, type FlowOutcome, type InputOrFn } from './flow.kit';

/** Before the first cycle of `createScheduleCommand()` (31 January 2026, 09:00 Berlin). */
export const T0 = '2026-01-01T00:00:00.000Z';

export interface ScheduleTypes {
  input: ScheduleInput;
  state: ScheduleState;
  event: ScheduleEvent;
  effect: ScheduleEffect;
  context: { now: string; policy: SchedulePolicy };
  policy: SchedulePolicy;
}

export const schedule: FlowContract<ScheduleTypes> = {
  decide: decideSchedule,
  evolve,
  initial: initialScheduleState,
  context: (now, _ids, policy) => ({ now, policy }),
  now: T0,
  policy: DEFAULT_SCHEDULE_POLICY,
  rejected: 'command-rejected',
  quietWhenIgnored: true,
};

/** A schedule's history under a policy: `.and(input, now)` appends, `.when(...)` decides on it. */
export type Scenario = FlowHistory<ScheduleTypes>;
export type Outcome = FlowOutcome<ScheduleTypes>;

/** The history of these events, decided on under `policy`. */
export const history = (
  events: ScheduleEvent[] = [],
  policy: SchedulePolicy = DEFAULT_SCHEDULE_POLICY,
): Scenario => new FlowHistory(schedule, events, undefined, policy);

/** Every input comes with the time it is decided at. */
type Timed = [InputOrFn<ScheduleTypes>, string];

export function givenInputs(...inputs: Timed[]): Scenario {
  return withPolicy(DEFAULT_SCHEDULE_POLICY, ...inputs);
}

export function withPolicy(policy: SchedulePolicy, ...inputs: Timed[]): Scenario {
  return inputs.reduce((s, [input, now]) => s.and(input, now), history([], policy));
}

// ---- input builders -------------------------------------------------------------------------------

const base = () => ({
  commandId: testUuid(),
  scheduleId: SCHEDULE_ID,
  merchant: { ...MERCHANT },
  occurredAt: T0,
});

export const command = (c: ScheduleCommand): ScheduleInput => ({ kind: 'command', command: c });

export const create = (over: Partial<Parameters<typeof createScheduleCommand>[0]> = {}) =>
  command(createScheduleCommand({ commandId: testUuid(), ...over }));
export const update = (amount: Money) => command({ type: 'update-schedule', ...base(), amount });
export const pause = () => command({ type: 'pause-schedule', ...base() });
export const resume = () => command({ type: 'resume-schedule', ...base() });
export const cancel = () => command({ type: 'cancel-schedule', ...base() });
export const refresh = () => command({ type: 'refresh-schedule-status', ...base() });

export const timer = (cycle: number, attempt = 1): ScheduleInput => ({
  kind: 'timer',
  timer: { cycle, attempt } satisfies ChargeTimer,
});

/** The timer of whatever the state waits for (the next cycle, or the dunning retry). */
export const dueTimer = (state: ScheduleState): ScheduleInput => {
  if (state.status === 'active') return timer(state.nextCycle);
  if (state.status === 'past-due') return timer(state.dunning.cycle, state.dunning.declines + 1);
  throw new Error(`no charge timer in ${state.status}`);
};

/** The final outcome of the charge in flight, as its rebill saga reports it. */
export const outcome =
  (result: 'approved' | 'declined' | 'failed', code?: string) =>
  (state: ScheduleState): ScheduleInput => {
    const charge = 'charge' in state ? state.charge : null;
    if (charge === null) throw new Error(`no charge in flight in ${state.status}`);
    return command({
      type: 'record-cycle-outcome',
      ...base(),
      cycle: charge.cycle,
      attempt: charge.attempt,
      paymentId: charge.paymentId,
      outcome: result,
      ...(code === undefined ? {} : { code }),
    });
  };

// ---- schedules registered with the gateway ---------------------------------------------------------

/**
 * The policy that registers MERCHANT's schedules with the gateway (the registration, the charges
 * and the expected cycles' search on the shared rules' defaults: polled at the shared cadence,
 * alerted after an hour unknown).
 */
export const GATEWAY_POLICY: SchedulePolicy = {
  ...DEFAULT_SCHEDULE_POLICY,
  gatewayRegistrationEndpoints: [MERCHANT.endpointId],
  maxSendAttempts: 3,
};

/** A schedule MERCHANT registers with the gateway, created at T0: its registration in flight. */
export const registering = () => withPolicy(GATEWAY_POLICY, [create(), T0]);

export const registrationReply =
  (result: GatewayResult['result'], attempt = 1) =>
  (state: ScheduleState): ScheduleInput => {
    if (state.status !== 'registering') throw new Error(`not registering: ${state.status}`);
    return {
      kind: 'gateway-result',
      result: {
        requestId: registrationRequestId(SCHEDULE_ID),
        paymentId: SCHEDULE_ID,
        operation: 'create-recurring-payment',
        attempt,
        result,
        completedAt: T0,
      },
    };
  };

/** The gateway's reply registering the schedule: recurring payment 77. */
export const registeredReply = registrationReply({ kind: 'accepted', recurringPaymentId: '77' });

/** A schedule MERCHANT registered with the gateway at T0 by its reply (recurring payment 77). */
export const registered = (): Scenario => registering().and(registeredReply, T0);

/** A verified server callback about the gateway's n-th charge of the schedule. */
export const chargeCallback = (
  n: number,
  gatewayOrderId: string,
  status: GatewayStatusReport['status'] = 'approved',
  over: Partial<GatewayCallback> = {},
): ScheduleInput => ({
  kind: 'callback',
  callback: {
    kind: 'callback',
    notificationId: `notification-${gatewayOrderId}-${status}-${testUuid()}`,
    paymentId: SCHEDULE_ID,
    clientOrderId: `${SCHEDULE_ID}-${n}`,
    source: 'server-callback',
    report: { status, gatewayOrderId, amount: { minor: 999, currency: 'EUR' } },
    receivedAt: T0,
    ...over,
  },
});

/** The answer to the last status request the decision before sent (`request`). */
export const statusAnswer = (
  request: { requestId: string; subjectRequestId: string },
  result: GatewayResult['result'],
  completedAt = T0,
): ScheduleInput => ({
  kind: 'gateway-result',
  result: {
    requestId: request.requestId,
    paymentId: SCHEDULE_ID,
    operation: 'status',
    subjectRequestId: request.subjectRequestId,
    attempt: 1,
    result,
    completedAt,
  },
});

/** A status poll as timers written before the shared rules carry it (`{ poll }`). */
export const statusTimer = (poll: number, gatewayOrderId?: string): ScheduleInput => ({
  kind: 'status-timer',
  timerKind:
    gatewayOrderId === undefined
      ? REGISTRATION_STATUS_TIMER
      : chargeTimerKinds(gatewayOrderId).poll,
  timer: { poll, ...(gatewayOrderId === undefined ? {} : { gatewayOrderId }) },
});

/** The registration's shared status poll (`attempt`) or unknown-outcome alert. */
export const registrationTimer = (
  kind: 'status-poll' | 'unknown-alert',
  attempt = 1,
): ScheduleInput =>
  operationTimer(
    kind === 'status-poll' ? REGISTRATION_STATUS_TIMER : REGISTRATION_ALERT_TIMER,
    kind,
    registrationRequestId(SCHEDULE_ID),
    attempt,
  );

/** A charge's shared status poll (`attempt`) or unknown-outcome alert. */
export const chargeTimer = (
  gatewayOrderId: string,
  kind: 'status-poll' | 'unknown-alert',
  attempt = 1,
): ScheduleInput => {
  const kinds = chargeTimerKinds(gatewayOrderId);
  return operationTimer(
    kind === 'status-poll' ? kinds.poll : kinds.alert,
    kind,
    chargeSubjectId(SCHEDULE_ID, gatewayOrderId),
    attempt,
  );
};

const operationTimer = (
  timerKind: string,
  kind: 'status-poll' | 'unknown-alert',
  requestId: string,
  attempt: number,
): ScheduleInput => ({
  kind: 'status-timer',
  timerKind,
  timer: kind === 'status-poll' ? { kind, requestId, attempt } : { kind, requestId },
});

/** The timer asking for an expected cycle's charge (`poll`-th query; first asked at `askedSince`). */
export const expectedTimer = (cycle: number, poll: number, askedSince?: string): ScheduleInput => ({
  kind: 'status-timer',
  timerKind: EXPECTED_CHARGE_TIMER,
  timer: { poll, expectedCycle: cycle, ...(askedSince === undefined ? {} : { askedSince }) },
});

/** The shared unknown-outcome alert of the search for `cycle`'s charge. */
export const expectedAlertTimer = (cycle: number): ScheduleInput =>
  operationTimer(
    EXPECTED_CHARGE_ALERT_TIMER,
    'unknown-alert',
    expectedChargeSubjectId(SCHEDULE_ID, cycle),
    1,
  );

/** A property test's step of kind `kind`, its other fields drawn from `fields`. */
export const stepOf = <K extends string, T extends object>(
  kind: K,
  fields: { [P in keyof T]: fc.Arbitrary<T[P]> },
): fc.Arbitrary<{ kind: K } & T> => fc.record(fields).map((drawn) => ({ kind, ...drawn }));
