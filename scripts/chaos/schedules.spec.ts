import { randomUUID } from 'node:crypto';
import type { PaymentEvent, ScheduleEvent } from '@payments/contracts';
import type { LedgerEntry } from '../stack/sandbox-controls';
import type { ObservedEvent } from './checks';
import { checkSchedules, scheduleZeroLines } from './schedule-checks';
import { cycleDueAt, type ObservedScheduleEvent, type ScheduleSpec } from './schedule-plan';
import { clockSteps } from './schedules';

/**
 * The schedule verdict on hand-made streams: each of its lines must be able to say "not zero" —
 * a charge reported twice, a charge the ledger lacks, another amount, a charge never reported, a
 * cycle charged twice, a due cycle left silent — and must stay zero for a run that is right.
 */
const DAY_MS = 86_400_000;
const USD = (minor: number) => ({ minor, currency: 'USD' });
const startDate = '2026-11-24';
/** The orchestrator's clock at the end: every one of 3 daily cycles and its grace have passed. */
const now = Date.parse(`${startDate}T00:00:00Z`) + 4 * DAY_MS;
const graceMs = 60_000;

function spec(chargedBy: ScheduleSpec['chargedBy'], cycles = 3): ScheduleSpec {
  return {
    scheduleId: randomUUID(),
    chargedBy,
    endpointId: chargedBy === 'gateway' ? '1114' : '1115',
    amount: USD(990),
    startDate,
    cycles,
  };
}

let seq = 0;
function charged(clientOrderId: string, amountMinor = 990, orderId = String(++seq)): LedgerEntry {
  return {
    seq: ++seq,
    at: now,
    login: 'sandbox-merchant',
    clientOrderId,
    orderId,
    movement: 'charged',
    amountMinor,
    currency: 'USD',
  };
}

/** A schedule's stream: versions in order, each its own ce_id unless given. */
function stream(
  scheduleId: string,
  ...events: Array<Record<string, unknown> & { ceId?: string }>
): ObservedScheduleEvent[] {
  return events.map(({ ceId, ...e }, i) => ({
    event: {
      scheduleId,
      commandId: randomUUID(),
      occurredAt: '2026-11-24T00:00:00.000Z',
      version: i + 1,
      ...e,
    } as ScheduleEvent,
    ceId: ceId ?? `${scheduleId}-ce-${i + 1}`,
  }));
}

/** A rebill payment's events: requested, then `outcome` (or an alerted unknown). */
function rebill(
  paymentId: string,
  outcome: 'approved' | 'declined' | 'alert',
  amountMinor = 990,
): ObservedEvent[] {
  const requestId = randomUUID();
  const base = { paymentId, commandId: randomUUID(), occurredAt: '2026-11-24T00:00:00.000Z' };
  const events: Array<Record<string, unknown>> = [
    {
      type: 'operation-requested',
      operation: 'rebill',
      requestId,
      amount: USD(amountMinor),
      clientOrderId: paymentId,
    },
    outcome === 'approved'
      ? { type: 'approved', requestId, amount: USD(amountMinor) }
      : outcome === 'declined'
        ? { type: 'declined', requestId, code: '100' }
        : {
            type: 'outcome-unknown',
            requestId,
            operation: 'rebill',
            since: base.occurredAt,
            alert: true,
            concern: 'no-trace',
          },
  ];
  return events.map((e, i) => ({
    event: { ...base, version: i + 1, ...e } as PaymentEvent,
    ceId: `${paymentId}-${i}`,
  }));
}

describe('checkSchedules: the orchestrator charges its own schedule', () => {
  const s = spec('orchestrator');
  const pay = [randomUUID(), randomUUID(), randomUUID()];
  const requested = (cycle: number, attempt = 1, paymentId = pay[cycle]) => ({
    type: 'cycle-charge-requested',
    cycle,
    attempt,
    paymentId,
    amount: USD(990),
    dueAt: new Date(cycleDueAt(s, cycle)).toISOString(),
  });
  const chargedEvent = (cycle: number, attempt = 1, paymentId = pay[cycle], minor = 990) => ({
    type: 'cycle-charged',
    cycle,
    attempt,
    paymentId,
    amount: USD(minor),
  });
  const allCharged = () =>
    stream(
      s.scheduleId,
      { type: 'schedule-created' },
      requested(0),
      chargedEvent(0),
      requested(1),
      chargedEvent(1),
      requested(2),
      chargedEvent(2),
      { type: 'schedule-completed' },
    );
  const check = (
    scheduleEvents: ObservedScheduleEvent[],
    ledger: LedgerEntry[],
    paymentEvents: ObservedEvent[] = pay.flatMap((p) => rebill(p, 'approved')),
  ) => checkSchedules({ specs: [s], scheduleEvents, paymentEvents, ledger, now, graceMs });

  it('passes every cycle charged once and reported once with the ledger’s amount', () => {
    const result = check(
      allCharged(),
      pay.map((p) => charged(p)),
    );
    expect(scheduleZeroLines(result)).toEqual({
      'schedule cycles charged twice': 0,
      'schedule charges never reported': 0,
      'schedule cycles misreported': 0,
      'schedule cycles due, neither reported nor alerted': 0,
    });
    expect(result.eventTypes).toEqual({
      'schedule-created': 1,
      'cycle-charge-requested': 3,
      'cycle-charged': 3,
      'schedule-completed': 1,
    });
    expect(result.cycles.map((c) => [c.cycle, c.due, c.reported])).toEqual([
      [0, true, 'charged'],
      [1, true, 'charged'],
      [2, true, 'charged'],
    ]);
  });

  it('reports a cycle charged twice in the ledger (two attempts both charged)', () => {
    const retry = randomUUID();
    const events = stream(
      s.scheduleId,
      requested(0),
      {
        type: 'cycle-charge-declined',
        cycle: 0,
        attempt: 1,
        paymentId: pay[0],
        outcome: 'declined',
      },
      requested(0, 2, retry),
      chargedEvent(0, 2, retry),
      requested(1),
      chargedEvent(1),
      requested(2),
      chargedEvent(2),
    );
    const result = check(
      events,
      [charged(pay[0]), charged(retry), charged(pay[1]), charged(pay[2])],
      [
        ...rebill(pay[0], 'approved'),
        ...rebill(retry, 'approved'),
        ...rebill(pay[1], 'approved'),
        ...rebill(pay[2], 'approved'),
      ],
    );
    expect(result.chargedTwice).toHaveLength(1);
    expect(result.chargedTwice[0].paymentId).toBe(`${s.scheduleId} cycle 0`);
    // The declined attempt the ledger charged is a misreport too.
    expect(result.misreported.map((m) => m.detail).join('\n')).toMatch(
      /attempt 1 reported declined, the ledger charged/,
    );
  });

  it('reports a charge reported twice, one the ledger lacks, and one of another amount', () => {
    const twice = [
      ...allCharged(),
      ...stream(s.scheduleId, chargedEvent(1)).map((o) => ({ ...o, ceId: 'again' })),
    ];
    expect(
      check(
        twice,
        pay.map((p) => charged(p)),
      ).misreported.map((m) => m.detail),
    ).toEqual(['reported charged 2 times']);
    // A redelivery (same ce_id) is one report.
    const redelivered = [...allCharged(), allCharged()[4]];
    expect(
      check(
        redelivered,
        pay.map((p) => charged(p)),
      ).misreported,
    ).toEqual([]);
    const lacking = check(allCharged(), [charged(pay[0]), charged(pay[2])]);
    expect(lacking.misreported.map((m) => m.detail).join('\n')).toMatch(
      /reported charged 990 USD \(rebill .*\), the ledger shows no charge of it/,
    );
    const other = check(allCharged(), [charged(pay[0]), charged(pay[1], 1_990), charged(pay[2])]);
    expect(other.misreported.map((m) => m.detail).join('\n')).toMatch(
      /reported charged 990 USD, the ledger charged 1990 USD/,
    );
  });

  it('reports a charge the ledger shows that no cycle-charged reports, unless alerted', () => {
    const events = stream(
      s.scheduleId,
      requested(0),
      chargedEvent(0),
      requested(1),
      requested(2),
    ).filter((o) => o.event.type !== 'cycle-charge-requested' || o.event.cycle !== 2);
    const ledger = [charged(pay[0]), charged(pay[1])];
    const silentRebill = [...rebill(pay[0], 'approved'), ...rebill(pay[1], 'approved').slice(0, 1)];
    const result = check(events, ledger, silentRebill);
    expect(result.neverReported.map((n) => n.paymentId)).toEqual([`${s.scheduleId} cycle 1`]);
    // Cycle 2 is due and was never even requested: silent.
    expect(result.silent.map((n) => n.paymentId)).toEqual([`${s.scheduleId} cycle 2`]);
    // The rebill raised for a person: not silent, not unreported; the cycle after it is held.
    const alerted = check(events, ledger, [
      ...rebill(pay[0], 'approved'),
      ...rebill(pay[1], 'alert'),
    ]);
    expect(alerted.neverReported).toEqual([]);
    expect(alerted.silent).toEqual([]);
    expect(alerted.cycles.map((c) => c.alerted === undefined)).toEqual([true, false, false]);
  });

  it('takes a cycle not yet due for nothing missing', () => {
    const early = checkSchedules({
      specs: [s],
      scheduleEvents: stream(s.scheduleId, requested(0), chargedEvent(0)),
      paymentEvents: rebill(pay[0], 'approved'),
      ledger: [charged(pay[0])],
      now: cycleDueAt(s, 1) - 1,
      graceMs,
    });
    expect(early.silent).toEqual([]);
    expect(early.cycles.map((c) => c.due)).toEqual([true, false, false]);
  });

  it("judges the rebill payment's own events against the ledger", () => {
    const result = check(
      allCharged(),
      pay.map((p) => charged(p)),
      [...rebill(pay[0], 'declined'), ...rebill(pay[1], 'approved'), ...rebill(pay[2], 'approved')],
    );
    expect(result.misreported.map((m) => m.detail).join('\n')).toMatch(
      /events say \[\], ledger has \[charged 990\]/,
    );
  });
});

describe('checkSchedules: the gateway charges a registered schedule', () => {
  const s = spec('gateway');
  const id = s.scheduleId;
  const order = (cycle: number) => `9${cycle}`;
  const gatewayCharged = (cycle: number, minor = 990, gatewayOrderId = order(cycle)) => ({
    type: 'gateway-cycle-charged',
    cycle,
    gatewayOrderId,
    clientOrderId: `${id}-${cycle + 1}`,
    amount: USD(minor),
  });
  const registered = [
    { type: 'schedule-created', skippedCycles: 0 },
    { type: 'schedule-registered', recurringPaymentId: '7', resolvedBy: 'reply' },
  ];
  const ledger = () => [0, 1, 2].map((c) => charged(`${id}-${c + 1}`, 990, order(c)));
  const check = (events: ObservedScheduleEvent[], entries: LedgerEntry[], at = now) =>
    checkSchedules({
      specs: [s],
      scheduleEvents: events,
      paymentEvents: [],
      ledger: entries,
      now: at,
      graceMs,
    });

  it('passes every charge reported once, on its order, with the ledger’s amount', () => {
    const result = check(
      stream(id, ...registered, gatewayCharged(0), gatewayCharged(1), gatewayCharged(2)),
      ledger(),
    );
    expect(Object.values(scheduleZeroLines(result))).toEqual([0, 0, 0, 0]);
    expect(result.cycles.map((c) => c.reported)).toEqual(['charged', 'charged', 'charged']);
  });

  it('reports a charge never reported, and takes an alerted one for not silent', () => {
    const events = stream(id, ...registered, gatewayCharged(0), gatewayCharged(2));
    expect(check(events, ledger()).neverReported.map((p) => p.paymentId)).toEqual([
      `${id} cycle 1`,
    ]);
    const alerted = stream(id, ...registered, gatewayCharged(0), gatewayCharged(2), {
      type: 'gateway-charge-alert',
      cycle: 1,
      clientOrderId: `${id}-2`,
      reason: 'not-found',
    });
    const result = check(alerted, ledger());
    expect(result.neverReported).toEqual([]);
    expect(result.cycles[1].alerted).toMatch(/not-found/);
  });

  it('takes a charge the ledger shows, reported and still unknown with the shared alert raised, for not silent; without the alert it is never reported', () => {
    const unknown = (alert: boolean) =>
      stream(id, ...registered, gatewayCharged(0), gatewayCharged(2), {
        type: 'gateway-charge-outcome-unknown',
        cycle: 1,
        gatewayOrderId: order(1),
        clientOrderId: `${id}-2`,
        since: '2026-01-02T00:00:00.000Z',
        ...(alert ? { alert: true, concern: 'no-trace' } : {}),
      });
    const alerted = check(unknown(true), ledger());
    expect(alerted.neverReported).toEqual([]);
    expect(alerted.cycles[1].alerted).toMatch(/outcome unknown \(no-trace\)/);
    expect(check(unknown(false), ledger()).neverReported.map((p) => p.paymentId)).toEqual([
      `${id} cycle 1`,
    ]);
  });

  it('reports a cycle the gateway charged twice, and a charge reported under another order or amount', () => {
    const twice = [...ledger(), charged(`${id}-2`, 990, '99')];
    const events = stream(
      id,
      ...registered,
      gatewayCharged(0),
      gatewayCharged(1),
      gatewayCharged(2),
    );
    expect(check(events, twice).chargedTwice.map((p) => p.paymentId)).toEqual([`${id} cycle 1`]);
    const wrongOrder = stream(
      id,
      ...registered,
      gatewayCharged(0),
      gatewayCharged(1, 990, '42'),
      gatewayCharged(2),
    );
    expect(
      check(wrongOrder, ledger())
        .misreported.map((m) => m.detail)
        .join('\n'),
    ).toMatch(/on order 42 .* the ledger shows no charge of that order/);
    const wrongAmount = stream(
      id,
      ...registered,
      gatewayCharged(0),
      gatewayCharged(1, 1_000),
      gatewayCharged(2),
    );
    expect(
      check(wrongAmount, ledger())
        .misreported.map((m) => m.detail)
        .join('\n'),
    ).toMatch(/reported charged 1000 USD, the ledger charged 990 USD/);
    const reportedTwice = [
      ...events,
      ...stream(id, gatewayCharged(1)).map((o) => ({ ...o, ceId: 'again' })),
    ];
    expect(check(reportedTwice, ledger()).misreported.map((m) => m.detail)).toEqual([
      'reported charged 2 times',
    ]);
  });

  it('reports a charge nobody made, and a decline of a charge the ledger shows', () => {
    const events = stream(
      id,
      ...registered,
      gatewayCharged(0),
      gatewayCharged(1),
      gatewayCharged(2),
    );
    expect(check(events, ledger().slice(0, 2)).misreported).toHaveLength(1);
    const declined = stream(id, ...registered, gatewayCharged(0), gatewayCharged(2), {
      type: 'gateway-cycle-declined',
      cycle: 1,
      gatewayOrderId: order(1),
      clientOrderId: `${id}-2`,
      outcome: 'declined',
    });
    const result = check(declined, ledger());
    expect(result.misreported.map((m) => m.detail)).toEqual([
      `reported declined (order ${order(1)}), the ledger charged it`,
    ]);
  });

  it('reports a due cycle with no report and no alert as silent, once its grace has passed', () => {
    const events = stream(id, ...registered, gatewayCharged(0), gatewayCharged(1));
    expect(check(events, ledger().slice(0, 2)).silent.map((p) => p.paymentId)).toEqual([
      `${id} cycle 2`,
    ]);
    // Within the grace of cycle 2 it is not due yet.
    expect(check(events, ledger().slice(0, 2), cycleDueAt(s, 2) + graceMs - 1).silent).toEqual([]);
  });

  it('takes a failed registration for no cycle due, but a charge under it still for unreported', () => {
    const failed = stream(id, registered[0], {
      type: 'schedule-registration-failed',
      reason: 'rejected',
      message: 'no',
    });
    const result = check(failed, []);
    expect(result.silent).toEqual([]);
    expect(result.registrationsFailed).toHaveLength(1);
    const chargedAnyway = check(stream(id, registered[0]), [charged(`${id}-1`)]);
    expect(chargedAnyway.neverReported.map((p) => p.paymentId)).toEqual([`${id} cycle 0`]);
  });

  it('numbers the charges from the first registered cycle', () => {
    const skipped = [{ type: 'schedule-created', skippedCycles: 2 }, registered[1]];
    const result = checkSchedules({
      specs: [s],
      scheduleEvents: stream(id, ...skipped, {
        ...gatewayCharged(2),
        clientOrderId: `${id}-1`,
      }),
      paymentEvents: [],
      ledger: [charged(`${id}-1`, 990, order(2))],
      now,
      graceMs,
    });
    expect(result.misreported).toEqual([]);
    expect(result.neverReported).toEqual([]);
  });
});

describe('clockSteps', () => {
  it('covers every daily cycle, two of them in one step, and a day more', () => {
    expect(clockSteps(4)).toEqual([86_400 + 3_600, 86_400, 2 * 86_400, 86_400]);
    expect(clockSteps(3)).toEqual([86_400 + 3_600, 86_400, 86_400, 86_400]);
    const days = (n: number) => clockSteps(n).reduce((a, b) => a + b, 0) / 86_400;
    for (const n of [3, 4, 5, 8]) expect(days(n)).toBeGreaterThan(n);
  });
});
