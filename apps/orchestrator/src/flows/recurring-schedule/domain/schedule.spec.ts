import { createScheduleCommand, SCHEDULE_ID } from '@payments/contracts/testing';
import * as schedules from '../../../../test/kits/recurring-schedule.kit';
import { cycleDueAt } from './calendar';
import { chargeIds } from './decide';
import { DEFAULT_SCHEDULE_POLICY } from './state';

const DAY = 86_400_000;
const plus = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();
/** createScheduleCommand(): monthly on the 31st at 09:00 Europe/Berlin, 12 cycles. */
const RULE = createScheduleCommand().rule;
const due = (cycle: number): string => cycleDueAt(RULE, cycle) ?? '';
const eur = (minor: number) => ({ minor, currency: 'EUR' });

/** Created, and cycle 0 started at its due time. */
const charging = () =>
  schedules.givenInputs([schedules.create(), schedules.T0], [schedules.timer(0), due(0)]);

describe('recurring schedule: create', () => {
  it('creates the schedule and arms the first cycle at 09:00 Berlin time', () => {
    schedules
      .givenInputs()
      .when(schedules.create(), schedules.T0)
      .then([{ type: 'schedule-created', skippedCycles: 0, nextCycle: 0, nextDueAt: due(0) }])
      .thenEffects([{ type: 'set-charge-timer', at: due(0), timer: { cycle: 0, attempt: 1 } }])
      .thenStatus('active');
    // 31 January, CET (+01:00).
    expect(due(0)).toBe('2026-01-31T08:00:00.000Z');
  });

  it('never charges cycles already past at creation: it starts with the next future one', () => {
    schedules
      .givenInputs()
      .when(schedules.create(), plus(due(2), 1))
      .then([{ type: 'schedule-created', skippedCycles: 3, nextCycle: 3, nextDueAt: due(3) }]);
  });

  it('refuses a schedule with no cycle left, a second create and commands for no schedule', () => {
    schedules
      .givenInputs()
      .when(schedules.create(), plus(due(11), 1))
      .thenRejected('INVALID_SCHEDULE');
    schedules
      .givenInputs([schedules.create(), schedules.T0])
      .when(schedules.create(), schedules.T0)
      .thenRejected('SCHEDULE_ALREADY_EXISTS');
    schedules
      .givenInputs()
      .when(schedules.pause(), schedules.T0)
      .thenRejected('SCHEDULE_NOT_FOUND');
  });
});

describe('recurring schedule: one charge per cycle', () => {
  it('the due timer starts the cycle as a rebill with ids derived from schedule, cycle, attempt', () => {
    const ids = chargeIds(SCHEDULE_ID, 0, 1);
    schedules
      .givenInputs([schedules.create(), schedules.T0])
      .when(schedules.timer(0), due(0))
      .then([
        {
          type: 'cycle-charge-requested',
          cycle: 0,
          attempt: 1,
          paymentId: ids.paymentId,
          commandId: ids.commandId,
          amount: eur(999),
          dueAt: due(0),
        },
      ])
      .thenEffects([
        {
          type: 'start-rebill',
          command: expect.objectContaining({
            type: 'rebill',
            commandId: ids.commandId,
            paymentId: ids.paymentId,
            cardRef: { refId: 'card-ref-1' },
            amount: eur(999),
            schedule: { scheduleId: SCHEDULE_ID, cycle: 0, attempt: 1 },
          }),
        },
      ]);
  });

  it('a timer firing twice starts nothing the second time', () => {
    charging()
      .when(schedules.timer(0), plus(due(0), 5))
      .thenIgnored('TIMER_OBSOLETE');
  });

  it('the same decision taken again (a rolled-back transaction) starts the same child', () => {
    const scenario = schedules.givenInputs([schedules.create(), schedules.T0]);
    const first = scenario.when(schedules.timer(0), due(0)).decision.effects;
    const again = scenario.when(schedules.timer(0), plus(due(0), 60_000)).decision.effects;
    expect(again.map((e) => e.type === 'start-rebill' && e.command.commandId)).toEqual(
      first.map((e) => e.type === 'start-rebill' && e.command.commandId),
    );
  });

  it('approved: the cycle is charged and the next one armed (28 February: month end)', () => {
    charging()
      .when(schedules.outcome('approved'), plus(due(0), 3000))
      .then([
        { type: 'cycle-charged', cycle: 0, amount: eur(999), nextCycle: 1, nextDueAt: due(1) },
      ])
      .thenEffects([{ type: 'set-charge-timer', at: due(1), timer: { cycle: 1, attempt: 1 } }]);
    expect(due(1)).toBe('2026-02-28T08:00:00.000Z');
  });

  it('an outcome naming another charge (or none in flight) is refused', () => {
    const wrongPayment = (st: Parameters<ReturnType<typeof schedules.outcome>>[0]) => {
      const input = schedules.outcome('approved')(st);
      if (input.kind !== 'command' || input.command.type !== 'record-cycle-outcome') return input;
      return {
        ...input,
        command: { ...input.command, paymentId: chargeIds(SCHEDULE_ID, 0, 2).paymentId },
      };
    };
    charging().when(wrongPayment, due(0)).thenRejected('INVALID_STATE');
    const stale = charging().when(schedules.outcome('approved'), due(0));
    charging()
      .and(schedules.outcome('approved'), due(0))
      .when(() => schedules.outcome('approved')(stale.before), due(0))
      .thenRejected('INVALID_STATE');
  });

  it('the last cycle completes the schedule', () => {
    const last = schedules.givenInputs(
      [schedules.create({ rule: { ...RULE, end: { kind: 'count', count: 1 } } }), schedules.T0],
      [schedules.timer(0), due(0)],
    );
    last
      .when(schedules.outcome('approved'), due(0))
      .then([{ type: 'cycle-charged', cycle: 0 }, { type: 'schedule-completed' }])
      .thenEffects([])
      .thenStatus('completed');
  });
});

describe('recurring schedule: dunning', () => {
  const [d1, d3, d7] = DEFAULT_SCHEDULE_POLICY.retryDelaysMs as [number, number, number];

  it('a decline makes the schedule past due and retries after the first delay', () => {
    const at = plus(due(0), 2000);
    charging()
      .when(schedules.outcome('declined', '116'), at)
      .then([
        {
          type: 'cycle-charge-declined',
          cycle: 0,
          attempt: 1,
          outcome: 'declined',
          code: '116',
          retryAt: plus(at, d1),
        },
        { type: 'schedule-past-due', cycle: 0, retryAt: plus(at, d1) },
      ])
      .thenEffects([
        { type: 'set-charge-timer', at: plus(at, d1), timer: { cycle: 0, attempt: 2 } },
      ])
      .thenStatus('past-due');
  });

  it('a retry that is approved recovers the schedule; the next cycle keeps its date', () => {
    charging()
      .and(schedules.outcome('declined'), due(0))
      .and(schedules.dueTimer, plus(due(0), d1))
      .when(schedules.outcome('approved'), plus(due(0), d1))
      .then([
        { type: 'cycle-charged', cycle: 0, attempt: 2, nextCycle: 1, nextDueAt: due(1) },
        { type: 'schedule-recovered', cycle: 0 },
      ])
      .thenStatus('active');
  });

  it('declines through every retry suspend the schedule', () => {
    let t = due(0);
    let s = charging().and(schedules.outcome('declined'), t);
    for (const delay of [d1, d3]) {
      t = plus(t, delay);
      s = s.and(schedules.dueTimer, t).and(schedules.outcome('failed'), t);
    }
    t = plus(t, d7);
    s.and(schedules.dueTimer, t)
      .when(schedules.outcome('declined'), t)
      .then([
        { type: 'cycle-charge-declined', cycle: 0, attempt: 4 },
        { type: 'schedule-suspended', cycle: 0 },
      ])
      .thenEffects([])
      .thenStatus('suspended');
  });

  it('the retry policy is configurable (no retries: suspended at the first decline)', () => {
    schedules
      .withPolicy(
        { retryDelaysMs: [] },
        [schedules.create(), schedules.T0],
        [schedules.timer(0), due(0)],
      )
      .when(schedules.outcome('declined'), due(0))
      .then([{ type: 'cycle-charge-declined' }, { type: 'schedule-suspended' }]);
  });

  it('a retry charges the cycle amount even after an update; the next cycle the new one', () => {
    charging()
      .and(schedules.outcome('declined'), due(0))
      .and(schedules.update(eur(1500)), due(0))
      .when(schedules.dueTimer, plus(due(0), d1))
      .then([{ type: 'cycle-charge-requested', cycle: 0, attempt: 2, amount: eur(999) }]);
    charging()
      .and(schedules.update(eur(1500)), due(0))
      .and(schedules.outcome('approved'), due(0))
      .when(schedules.timer(1), due(1))
      .then([{ type: 'cycle-charge-requested', cycle: 1, amount: eur(1500) }]);
  });
});

describe('recurring schedule: pause, resume, cancel, update', () => {
  const paid = () => charging().and(schedules.outcome('approved'), due(0));

  it('pause stops the timer; resume skips the cycles due meanwhile and goes on with the next', () => {
    paid()
      .and(schedules.pause(), plus(due(0), DAY))
      .when(schedules.resume(), plus(due(3), DAY))
      .then([{ type: 'schedule-resumed', skippedCycles: 3, nextCycle: 4, nextDueAt: due(4) }])
      .thenEffects([{ type: 'set-charge-timer', at: due(4), timer: { cycle: 4, attempt: 1 } }]);
    paid()
      .when(schedules.pause(), plus(due(0), DAY))
      .then([{ type: 'schedule-paused' }])
      .thenEffects([{ type: 'cancel-charge-timer' }])
      .thenStatus('paused');
  });

  it('a resume before the next due date skips nothing', () => {
    paid()
      .and(schedules.pause(), plus(due(0), DAY))
      .when(schedules.resume(), plus(due(0), 2 * DAY))
      .then([{ type: 'schedule-resumed', skippedCycles: 0, nextCycle: 1 }]);
  });

  it('a timer left over from before the pause starts nothing', () => {
    paid()
      .and(schedules.pause(), plus(due(0), DAY))
      .when(schedules.timer(1), due(1))
      .thenIgnored('TIMER_OBSOLETE');
  });

  it('pause is refused while a charge is in flight; resume when not paused', () => {
    charging().when(schedules.pause(), due(0)).thenRejected('OPERATION_IN_PROGRESS');
    paid().when(schedules.resume(), due(0)).thenRejected('INVALID_STATE');
  });

  it('a resume after the end completes the schedule', () => {
    paid()
      .and(schedules.pause(), plus(due(0), DAY))
      .when(schedules.resume(), plus(due(11), DAY))
      .then([{ type: 'schedule-resumed', skippedCycles: 11 }, { type: 'schedule-completed' }])
      .thenEffects([]);
  });

  it('cancel stops future charges; the charge in flight is still recorded', () => {
    charging()
      .and(schedules.cancel(), due(0))
      .when(schedules.outcome('approved'), due(0))
      .then([{ type: 'cycle-charged', cycle: 0 }])
      .thenEffects([])
      .thenStatus('cancelled');
    charging()
      .when(schedules.cancel(), due(0))
      .thenEffects([{ type: 'cancel-charge-timer' }]);
    charging()
      .and(schedules.cancel(), due(0))
      .when(schedules.timer(1), due(1))
      .thenIgnored('TIMER_OBSOLETE');
  });

  it('update refuses another currency', () => {
    paid()
      .when(schedules.update({ minor: 5, currency: 'USD' }), due(0))
      .thenRejected('CURRENCY_MISMATCH');
  });
});

describe('recurring schedule: the limits its rebills face', () => {
  const limited = {
    ...DEFAULT_SCHEDULE_POLICY,
    limits: { default: { maxMinor: 10_000 }, endpoints: { '9999': { currencies: ['USD'] } } },
  };

  it('create refuses an amount above the maximum or in a currency the endpoint refuses, as the rebill would', () => {
    schedules
      .withPolicy(limited)
      .when(schedules.create({ amount: eur(10_001) }))
      .thenRejected('AMOUNT_ABOVE_MAXIMUM');
    schedules
      .withPolicy(limited)
      .when(schedules.create({ merchant: { endpointId: '9999' }, amount: eur(500) }))
      .thenRejected('CURRENCY_NOT_ALLOWED');
    schedules
      .withPolicy(limited)
      .when(schedules.create({ amount: eur(10_000) }))
      .then([{ type: 'schedule-created' }]);
  });

  it('without configured limits, the rebill defaults: above 100,000,000 minor units refused', () => {
    schedules
      .givenInputs()
      .when(schedules.create({ amount: eur(100_000_001) }))
      .thenRejected('AMOUNT_ABOVE_MAXIMUM');
  });

  it('update refuses an amount above the maximum and keeps the old one', () => {
    schedules
      .withPolicy(limited, [schedules.create(), schedules.T0])
      .when(schedules.update(eur(10_001)), schedules.T0)
      .thenRejected('AMOUNT_ABOVE_MAXIMUM');
    schedules
      .withPolicy(limited, [schedules.create(), schedules.T0])
      .when(schedules.update(eur(10_000)), schedules.T0)
      .then([{ type: 'schedule-updated', amount: eur(10_000) }]);
  });
});
