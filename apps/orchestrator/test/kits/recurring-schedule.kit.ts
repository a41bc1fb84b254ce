/**
 * given/when/then for the recurring-schedule decider (test support only).
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
  RejectionCode,
  ScheduleCommand,
  ScheduleEvent,
} from '@payments/contracts';
import {
  createScheduleCommand,
  MERCHANT,
  SCHEDULE_ID,
  testUuid,
} from '@payments/contracts/testing';
import {
  type ChargeTimer,
  chargeSubjectId,
  chargeTimerKind,
  chargeTimerKinds,
  EXPECTED_CHARGE_TIMER,
  REGISTRATION_ALERT_TIMER,
  REGISTRATION_STATUS_TIMER,
  registrationRequestId,
  decideSchedule,
  DEFAULT_SCHEDULE_POLICY,
  fold,
  initialScheduleState,
  type ScheduleDecision,
  type ScheduleEffect,
  type ScheduleIgnoreReason,
  type ScheduleInput,
  type SchedulePolicy,
  type ScheduleState,
} from '../../src/flows/recurring-schedule/domain';

/** Before the first cycle of `createScheduleCommand()` (31 January 2026, 09:00 Berlin). */
export const T0 = '2026-01-01T00:00:00.000Z';

type InputOrFn = ScheduleInput | ((state: ScheduleState) => ScheduleInput);
const resolve = (input: InputOrFn, state: ScheduleState) =>
  typeof input === 'function' ? input(state) : input;

export class Scenario {
  constructor(
    readonly events: ScheduleEvent[] = [],
    readonly policy: SchedulePolicy = DEFAULT_SCHEDULE_POLICY,
  ) {}

  get state(): ScheduleState {
    return fold(initialScheduleState, this.events);
  }

  and(input: InputOrFn, now = T0): Scenario {
    const state = this.state;
    const decision = decideSchedule(resolve(input, state), state, { now, policy: this.policy });
    return new Scenario([...this.events, ...decision.events], this.policy);
  }

  when(input: InputOrFn, now = T0): Outcome {
    const before = this.state;
    return new Outcome(
      before,
      decideSchedule(resolve(input, before), before, { now, policy: this.policy }),
    );
  }
}

export class Outcome {
  readonly after: ScheduleState;

  constructor(
    readonly before: ScheduleState,
    readonly decision: ScheduleDecision,
  ) {
    this.after = fold(before, decision.events);
  }

  /** The emitted events match these (partially), in this order, and nothing else. */
  then(expected: ReadonlyArray<Partial<ScheduleEvent> & { type: ScheduleEvent['type'] }>): this {
    expect(this.decision.outcome).toBe('accepted');
    expect(this.decision.events).toHaveLength(expected.length);
    this.decision.events.forEach((event, i) => expect(event).toMatchObject(expected[i] ?? {}));
    return this;
  }

  thenRejected(code: RejectionCode): this {
    expect(this.decision.outcome).toBe('rejected');
    if (this.decision.outcome === 'rejected') expect(this.decision.rejection.code).toBe(code);
    expect(this.decision.events).toEqual([
      expect.objectContaining({
        type: 'command-rejected',
        reason: code,
        version: this.before.version + 1,
      }),
    ]);
    expect(this.decision.effects).toEqual([]);
    return this;
  }

  thenIgnored(reason: ScheduleIgnoreReason): this {
    expect(this.decision).toEqual({ outcome: 'ignored', reason, events: [], effects: [] });
    return this;
  }

  thenEffects(
    expected: ReadonlyArray<{ type: ScheduleEffect['type'] } & Record<string, unknown>>,
  ): this {
    expect(this.decision.effects).toHaveLength(expected.length);
    this.decision.effects.forEach((effect, i) => expect(effect).toMatchObject(expected[i] ?? {}));
    return this;
  }

  thenStatus(status: ScheduleState['status']): this {
    expect(this.after.status).toBe(status);
    return this;
  }
}

export function givenInputs(...inputs: Array<[InputOrFn, string]>): Scenario {
  return inputs.reduce((s, [input, now]) => s.and(input, now), new Scenario());
}

export function withPolicy(
  policy: SchedulePolicy,
  ...inputs: Array<[InputOrFn, string]>
): Scenario {
  return inputs.reduce((s, [input, now]) => s.and(input, now), new Scenario([], policy));
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
 * The policy that registers MERCHANT's schedules with the gateway (an expected cycle asked every
 * 5 s, 3 times at most; the registration and charges on the shared rules' defaults).
 */
export const GATEWAY_POLICY: SchedulePolicy = {
  ...DEFAULT_SCHEDULE_POLICY,
  gatewayRegistrationEndpoints: [MERCHANT.endpointId],
  statusPollMs: 5_000,
  maxStatusPolls: 3,
  maxSendAttempts: 3,
};

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
    gatewayOrderId === undefined ? REGISTRATION_STATUS_TIMER : chargeTimerKind(gatewayOrderId),
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

/** The timer asking for an expected cycle's charge (`poll`-th query). */
export const expectedTimer = (cycle: number, poll: number): ScheduleInput => ({
  kind: 'status-timer',
  timerKind: EXPECTED_CHARGE_TIMER,
  timer: { poll, expectedCycle: cycle },
});
