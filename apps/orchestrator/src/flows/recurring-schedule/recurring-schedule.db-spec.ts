/**
 * The recurring-schedule flow on the saga runtime against PostgreSQL alone (no broker): the
 * schedule saga, its charge timer and the child rebill sagas it starts, with a stand-in rebill
 * flow whose outcome the test decides (`settle-rebill`). Proves one charge per cycle when the
 * timer fires twice, when the firing transaction dies half-way, and when a command is redelivered.
 */
import { randomUUID } from 'node:crypto';
import type { RebillCommand } from '@payments/contracts';
import { createScheduleCommand, MERCHANT } from '@payments/contracts/testing';
import { canonicalJson, derivedUuid } from '../../domain';
import { SagaRepository } from '../../persistence/saga.repository';
import { TimerRepository } from '../../persistence/timer.repository';
import type { CommandCatalogue, Flow, SagaEvent } from '../../runtime/flow';
import { cardPaymentFlow } from '../card-payment/card-payment.flow';
import { DEFAULT_POLICY } from '../card-payment/domain';
import { contractCommands } from '../command-catalogue';
import { chargeIds, cycleDueAt } from './domain';
import { RECURRING_SCHEDULE_FLOW, recurringScheduleFlow } from './recurring-schedule.flow';
import { orchestratorFixture } from '../../../test/kits/orchestrator.fixture';

// ---- a stand-in rebill flow: takes the rebill, settles when the test says so ----------------------

interface RebillState {
  status: 'initial' | 'pending' | 'approved' | 'declined';
  version: number;
  command?: RebillCommand;
}
type RebillEvent = SagaEvent & { type: string; command?: RebillCommand };
interface Settle {
  type: 'settle-rebill';
  commandId: string;
  paymentId: string;
  outcome: 'approved' | 'declined';
}

/** Set to make the next rebill command throw (the worker dies in the middle of the cycle). */
const crash = { next: false };

const rebillStandIn: Flow<RebillState, RebillEvent> = {
  name: 'rebill-stand-in',
  commandTypes: ['rebill', 'settle-rebill'],
  initialState: { status: 'initial', version: 0 },
  decide(input, state, ctx) {
    if (input.kind !== 'command')
      return { outcome: 'ignored', reason: 'NO_NEWS', events: [], effects: [] };
    const event = (type: string, extra: object = {}): RebillEvent => ({
      type,
      commandId: input.command.commandId,
      version: state.version + 1,
      occurredAt: ctx.now,
      ...extra,
    });
    const body = input.command.body as RebillCommand | Settle;
    if (body.type === 'rebill') {
      if (crash.next) {
        crash.next = false;
        throw new Error('killed in the middle of the cycle');
      }
      return {
        outcome: 'accepted',
        events: [event('rebill-requested', { command: body })],
        effects: [],
      };
    }
    const schedule = state.command?.schedule;
    if (state.status !== 'pending' || !schedule || !state.command)
      return { outcome: 'ignored', reason: 'NOT_PENDING', events: [], effects: [] };
    const report = {
      type: 'record-cycle-outcome',
      commandId: derivedUuid(`${body.commandId}/report`),
      scheduleId: schedule.scheduleId,
      merchant: state.command.merchant,
      occurredAt: ctx.now,
      cycle: schedule.cycle,
      attempt: schedule.attempt,
      paymentId: state.command.paymentId,
      outcome: body.outcome,
    };
    return {
      outcome: 'accepted',
      events: [event(body.outcome)],
      effects: [{ type: 'start-saga', command: report }],
    };
  },
  evolve(state, event) {
    if (event.type === 'rebill-requested' && event.command)
      return { status: 'pending', version: event.version, command: event.command };
    if (event.type === 'approved' || event.type === 'declined')
      return { ...state, status: event.type, version: event.version };
    return { ...state, version: event.version };
  },
  project: (state) => ({ status: state.status, kind: 'rebill', settled: false }),
  rejection: (args) => ({
    type: 'command-rejected',
    commandId: args.commandId,
    version: args.version,
    occurredAt: args.now,
  }),
  resendWanted: () => false,
};

/** The contracts' commands, plus the test's settle-rebill. */
const catalogue: CommandCatalogue = {
  parse(raw, origin) {
    const settle = raw as Settle;
    // The origin travels on: a child's record-cycle-outcome is accepted, one from the topic not.
    if (settle.type !== 'settle-rebill') return contractCommands.parse(raw, origin);
    return {
      ok: true,
      command: {
        type: settle.type,
        commandId: settle.commandId,
        sagaId: settle.paymentId,
        endpointId: '1234',
        body: settle,
      },
      fingerprint: canonicalJson(raw),
    };
  },
};

const DAY = 86_400_000;

/** An operator's command about schedule `scheduleId` (of MERCHANT, as every schedule here). */
const scheduleCommand = (
  type: 'pause-schedule' | 'resume-schedule' | 'cancel-schedule',
  scheduleId: string,
  occurredAt: Date,
) => ({
  type,
  commandId: randomUUID(),
  scheduleId,
  merchant: MERCHANT,
  occurredAt: occurredAt.toISOString(),
});

describe('recurring-schedule flow on the saga runtime (real PostgreSQL, no broker)', () => {
  const timers = new TimerRepository();
  const orch = orchestratorFixture({
    name: 'schedules',
    start: '2026-01-01T00:00:00.000Z',
    timers,
    flows: [recurringScheduleFlow({ retryDelaysMs: [DAY, 3 * DAY] }), rebillStandIn],
    catalogue,
  });
  const { clock, send, fireAt } = orch;

  const row = async (id: string) =>
    (
      await orch.dataSource.query<Array<{ flow: string; status: string; version: number }>>(
        `SELECT flow, status, version FROM sagas WHERE id = $1`,
        [id],
      )
    )[0];
  const events = (id: string) =>
    orch.dataSource.query<Array<{ type: string; cycle: number | null }>>(
      `SELECT event_type AS type, (event->>'cycle')::int AS cycle
         FROM saga_history WHERE saga_id = $1 ORDER BY version`,
      [id],
    );
  const timer = async (id: string) =>
    (
      await orch.dataSource.query<
        Array<{ due: Date; payload: { cycle: number; attempt: number } }>
      >(`SELECT due_at AS due, payload FROM timers WHERE saga_id = $1 AND flow = $2`, [
        id,
        RECURRING_SCHEDULE_FLOW,
      ])
    )[0];
  /** Rebill sagas of a schedule (their ids derive from schedule, cycle and attempt). */
  const rebills = async (scheduleId: string, cycles: number, attempts = 3) => {
    const ids = [];
    for (let c = 0; c < cycles; c++)
      for (let a = 1; a <= attempts; a++) ids.push(chargeIds(scheduleId, c, a).paymentId);
    return orch.dataSource.query<Array<{ id: string; status: string }>>(
      `SELECT id, status FROM sagas WHERE id = ANY($1::uuid[])`,
      [ids],
    );
  };
  const settle = (paymentId: string, outcome: 'approved' | 'declined') =>
    send({ type: 'settle-rebill', commandId: randomUUID(), paymentId, outcome });

  const newSchedule = async (over: Parameters<typeof createScheduleCommand>[0] = {}) => {
    clock.at = new Date('2026-01-01T00:00:00.000Z');
    const command = createScheduleCommand({
      scheduleId: randomUUID(),
      commandId: randomUUID(),
      ...over,
    });
    await send(command);
    const due = (n: number) => cycleDueAt(command.rule, n) ?? '';
    return { id: command.scheduleId, due };
  };

  it('creates the schedule and arms the first cycle; the due timer starts one rebill saga', async () => {
    const { id, due } = await newSchedule();
    expect(await row(id)).toMatchObject({ flow: RECURRING_SCHEDULE_FLOW, status: 'active' });
    const armed = await timer(id);
    expect(armed?.due.toISOString()).toBe(due(0));
    expect(armed?.payload).toEqual({ cycle: 0, attempt: 1 });
    await fireAt(due(0));
    const { paymentId } = chargeIds(id, 0, 1);
    expect(await row(paymentId)).toMatchObject({ flow: 'rebill-stand-in', status: 'pending' });
    expect((await events(id)).map((e) => e.type)).toEqual([
      'schedule-created',
      'cycle-charge-requested',
    ]);
    // Approved: the cycle is charged in the rebill's transaction and the next cycle armed.
    await settle(paymentId, 'approved');
    expect((await events(id)).map((e) => e.type).slice(-1)).toEqual(['cycle-charged']);
    expect((await timer(id))?.due.toISOString()).toBe(due(1));
  });

  it('a timer that fires twice charges the cycle once', async () => {
    const { id, due } = await newSchedule();
    await fireAt(due(0));
    // The same timer again (a second worker's late firing, a re-armed duplicate).
    const again = {
      op: 'set' as const,
      kind: 'charge',
      at: new Date(due(0)),
      payload: { cycle: 0, attempt: 1 },
    };
    await orch.dataSource.transaction((tx) =>
      new SagaRepository().writeDecision(
        tx,
        {
          sagaId: id,
          flow: RECURRING_SCHEDULE_FLOW,
          saga: { op: 'none' },
          history: [],
          gatewayRequests: [],
        },
        [timers.changesPart(RECURRING_SCHEDULE_FLOW, id, [again])],
        new Date(),
      ),
    );
    await fireAt(due(0));
    expect(await rebills(id, 2)).toHaveLength(1);
    expect((await events(id)).filter((e) => e.type === 'cycle-charge-requested')).toHaveLength(1);
  });

  it('a worker killed in the middle of the cycle: rolled back, fired again, one charge', async () => {
    const { id, due } = await newSchedule();
    crash.next = true;
    await fireAt(due(0)); // the firing throws after the schedule decided: all of it rolls back
    expect(await rebills(id, 1)).toHaveLength(0);
    expect((await events(id)).map((e) => e.type)).toEqual(['schedule-created']);
    const postponed = await timer(id);
    expect(postponed?.payload).toEqual({ cycle: 0, attempt: 1 });
    await fireAt(postponed?.due.toISOString() ?? '');
    expect(await rebills(id, 1)).toHaveLength(1);
    expect((await events(id)).filter((e) => e.type === 'cycle-charge-requested')).toHaveLength(1);
  });

  it('a redelivered rebill command or outcome changes nothing', async () => {
    const { id, due } = await newSchedule();
    await fireAt(due(0));
    const { paymentId, commandId } = chargeIds(id, 0, 1);
    const [requested] = await orch.dataSource.query<Array<{ event: { command: RebillCommand } }>>(
      `SELECT event FROM saga_history WHERE saga_id = $1 AND version = 1`,
      [paymentId],
    );
    expect(requested?.event.command.commandId).toBe(commandId);
    await send(requested?.event.command ?? {});
    const settleCommand = {
      type: 'settle-rebill',
      commandId: randomUUID(),
      paymentId,
      outcome: 'approved',
    };
    await send(settleCommand);
    await send(settleCommand);
    expect((await events(id)).filter((e) => e.type === 'cycle-charged')).toHaveLength(1);
    expect(await row(paymentId)).toMatchObject({ version: 2 });
  });

  it('declines go through dunning to suspended; resume skips the missed cycles', async () => {
    const { id, due } = await newSchedule();
    await fireAt(due(0));
    await settle(chargeIds(id, 0, 1).paymentId, 'declined');
    expect(await row(id)).toMatchObject({ status: 'past-due' });
    const retry = await timer(id);
    expect(retry?.payload).toEqual({ cycle: 0, attempt: 2 });
    await fireAt(retry?.due.toISOString() ?? '');
    await settle(chargeIds(id, 0, 2).paymentId, 'declined');
    const last = await timer(id);
    await fireAt(last?.due.toISOString() ?? '');
    await settle(chargeIds(id, 0, 3).paymentId, 'declined');
    expect(await row(id)).toMatchObject({ status: 'suspended' });
    expect(await timer(id)).toBeUndefined();

    clock.at = new Date(Date.parse(due(2)) + DAY);
    await send(scheduleCommand('resume-schedule', id, clock.at));
    expect((await timer(id))?.payload).toEqual({ cycle: 3, attempt: 1 });
    expect(await rebills(id, 4)).toHaveLength(3);
  });

  it('cancel stops future charges', async () => {
    const { id, due } = await newSchedule();
    await send(scheduleCommand('cancel-schedule', id, clock.at));
    expect(await row(id)).toMatchObject({ status: 'cancelled' });
    expect(await timer(id)).toBeUndefined();
    await fireAt(due(3));
    expect(await rebills(id, 4)).toHaveLength(0);
  });
});

describe('a schedule whose rebill is refused at the command stage (real card-payment flow, real PostgreSQL)', () => {
  const orch = orchestratorFixture({
    name: 'schedules_refused',
    poolSize: 2,
    start: '2026-01-01T00:00:00.000Z',
    flows: [
      // The endpoint's maximum was lowered below the schedule's amount after it was created.
      cardPaymentFlow({ ...DEFAULT_POLICY, limits: { default: { maxMinor: 500 } } }),
      recurringScheduleFlow({ retryDelaysMs: [DAY] }),
    ],
  });
  const { clock, send, fireAt } = orch;

  const history = (id: string) =>
    orch.dataSource.query<Array<{ type: string; event: Record<string, unknown> }>>(
      `SELECT event_type AS type, event FROM saga_history WHERE saga_id = $1 ORDER BY version`,
      [id],
    );

  const FIRST_CHARGE_REFUSED = [
    'schedule-created',
    'cycle-charge-requested',
    'cycle-charge-declined',
    'schedule-past-due',
  ];
  /**
   * The schedule's first charge refused before any payment saga started: declined with `declined`
   * (its outcome and code), and the schedule past due.
   */
  const expectRefusedFirstCharge = async (id: string, paymentId: string, declined: object) => {
    expect(
      await orch.dataSource.query(`SELECT id FROM sagas WHERE id = $1`, [paymentId]),
    ).toHaveLength(0);
    const events = await history(id);
    expect(events.map((e) => e.type)).toEqual(FIRST_CHARGE_REFUSED);
    expect(events[2]?.event).toMatchObject(declined);
  };

  it('the refusal is the cycle outcome (failed, its code): past due, retried by dunning, and pause is taken', async () => {
    clock.at = new Date('2026-01-01T00:00:00.000Z');
    const command = createScheduleCommand({ scheduleId: randomUUID(), commandId: randomUUID() });
    const id = command.scheduleId;
    const due = (n: number) => cycleDueAt(command.rule, n) ?? '';
    await send(command);
    await fireAt(due(0));
    const { paymentId } = chargeIds(id, 0, 1);
    // No payment saga: the rebill was refused before it started.
    await expectRefusedFirstCharge(id, paymentId, {
      paymentId,
      outcome: 'failed',
      code: 'AMOUNT_ABOVE_MAXIMUM',
    });
    // The dunning retry is refused the same way and reported once.
    await fireAt(new Date(Date.parse(due(0)) + DAY).toISOString());
    expect((await history(id)).map((e) => e.type).slice(4)).toEqual([
      'cycle-charge-requested',
      'cycle-charge-declined',
      'schedule-suspended',
    ]);
    await send(scheduleCommand('resume-schedule', id, clock.at));
    await send(scheduleCommand('pause-schedule', id, clock.at));
    expect((await history(id)).map((e) => e.type).slice(-2)).toEqual([
      'schedule-resumed',
      'schedule-paused',
    ]);
  });

  const newSchedule = async () => {
    clock.at = new Date('2026-01-01T00:00:00.000Z');
    const command = createScheduleCommand({
      scheduleId: randomUUID(),
      commandId: randomUUID(),
      // Within the endpoint's maximum: only the runtime refuses these rebills.
      amount: { minor: 400, currency: 'EUR' },
    });
    await send(command);
    return {
      command,
      id: command.scheduleId,
      due: (n: number) => cycleDueAt(command.rule, n) ?? '',
    };
  };

  it('a rebill refused by the runtime for a command id another body took ends the cycle (failed, its code) and dunning goes on', async () => {
    const { command, id, due } = await newSchedule();
    const { paymentId, commandId } = chargeIds(id, 0, 1);
    // Another body under the rebill's command id (refused, yet its id is recorded): the schedule's
    // rebill will conflict with it before any decider sees it.
    await send({ type: 'rebill', commandId, paymentId, merchant: command.merchant });
    await fireAt(due(0));
    await expectRefusedFirstCharge(id, paymentId, {
      cycle: 0,
      attempt: 1,
      paymentId,
      outcome: 'failed',
      code: 'DUPLICATE_COMMAND_CONFLICT',
    });
    const [retry] = await orch.dataSource.query<Array<{ payload: unknown }>>(
      `SELECT payload FROM timers WHERE saga_id = $1 AND kind = 'charge'`,
      [id],
    );
    expect(retry?.payload).toEqual({ cycle: 0, attempt: 2 });
  });

  it('a rebill that fails its schema ends each attempt (failed): the schedule is suspended per its dunning policy', async () => {
    const { id, due } = await newSchedule();
    // A schedule stored before the rebill's description got its bound: every rebill it builds
    // fails the schema at the runtime, before the card-payment decider.
    await orch.dataSource.query(
      `UPDATE sagas SET state = jsonb_set(state, '{terms,description}', to_jsonb(repeat('x', 300)))
        WHERE id = $1`,
      [id],
    );
    await fireAt(due(0));
    await fireAt(new Date(Date.parse(due(0)) + DAY).toISOString());
    const events = await history(id);
    expect(events.map((e) => e.type)).toEqual([
      ...FIRST_CHARGE_REFUSED,
      'cycle-charge-requested',
      'cycle-charge-declined',
      'schedule-suspended',
    ]);
    expect(events[2]?.event).toMatchObject({
      attempt: 1,
      outcome: 'failed',
      code: 'SCHEMA_INVALID',
    });
    expect(events[5]?.event).toMatchObject({
      attempt: 2,
      outcome: 'failed',
      code: 'SCHEMA_INVALID',
    });
    expect(await row(id)).toMatchObject({ status: 'suspended' });
  });

  const row = async (id: string) =>
    (
      await orch.dataSource.query<Array<{ status: string }>>(
        `SELECT status FROM sagas WHERE id = $1`,
        [id],
      )
    )[0];
});
