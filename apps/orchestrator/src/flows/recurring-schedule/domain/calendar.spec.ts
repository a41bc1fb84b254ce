import fc from 'fast-check';
import {
  cycleDate,
  cycleDueAt,
  daysInMonth,
  firstCycleFrom,
  formatLocalDate,
  localParts,
  parseLocalDate,
  type Period,
  type ScheduleRule,
} from './calendar';

const rule = (over: Partial<ScheduleRule>): ScheduleRule => ({
  period: 'month',
  interval: 1,
  startDate: '2025-01-31',
  timeOfDay: '09:00',
  timeZone: 'UTC',
  end: { kind: 'never' },
  ...over,
});

/** Daily in Berlin from `startDate` (09:00 unless `timeOfDay`), where the clocks change twice a year. */
const berlinDaily = (startDate: string, timeOfDay = '09:00') =>
  rule({ period: 'day', startDate, timeOfDay, timeZone: 'Europe/Berlin' });

const dates = (r: ScheduleRule, count: number) =>
  Array.from({ length: count }, (_, n) => formatLocalDate(cycleDate(r, n)));
const instants = (r: ScheduleRule, count: number) =>
  Array.from({ length: count }, (_, n) => cycleDueAt(r, n));

describe('schedule calculator: calendar rules', () => {
  it('monthly on the 31st falls on the last day of shorter months and returns to the 31st', () => {
    expect(dates(rule({ startDate: '2025-01-31' }), 6)).toEqual([
      '2025-01-31',
      '2025-02-28',
      '2025-03-31',
      '2025-04-30',
      '2025-05-31',
      '2025-06-30',
    ]);
  });

  it('in a leap year February ends on the 29th', () => {
    expect(dates(rule({ startDate: '2024-01-30' }), 3)).toEqual([
      '2024-01-30',
      '2024-02-29',
      '2024-03-30',
    ]);
  });

  it('yearly on 29 February falls on the 28th in common years and on the 29th in leap years', () => {
    expect(dates(rule({ period: 'year', startDate: '2024-02-29' }), 5)).toEqual([
      '2024-02-29',
      '2025-02-28',
      '2026-02-28',
      '2027-02-28',
      '2028-02-29',
    ]);
  });

  it('2100 is not a leap year, 2000 is', () => {
    expect(dates(rule({ period: 'year', interval: 100, startDate: '2000-02-29' }), 3)).toEqual([
      '2000-02-29',
      '2100-02-28',
      '2200-02-28',
    ]);
  });

  it('weekly and daily count calendar days, across a month and a year end', () => {
    expect(dates(rule({ period: 'week', interval: 2, startDate: '2025-12-17' }), 3)).toEqual([
      '2025-12-17',
      '2025-12-31',
      '2026-01-14',
    ]);
    expect(dates(rule({ period: 'day', interval: 3, startDate: '2024-02-27' }), 3)).toEqual([
      '2024-02-27',
      '2024-03-01',
      '2024-03-04',
    ]);
  });

  it('keeps the local time of day across daylight-saving changes (Europe/Berlin)', () => {
    const r = berlinDaily('2025-03-29');
    // CET (+01:00) before 30 March 2025, CEST (+02:00) from then.
    expect(instants(r, 2)).toEqual(['2025-03-29T08:00:00.000Z', '2025-03-30T07:00:00.000Z']);
  });

  it('a local time in the spring-forward gap moves forward by the gap', () => {
    const r = berlinDaily('2025-03-30', '02:30');
    const due = cycleDueAt(r, 0) ?? '';
    expect(localParts(Date.parse(due), 'Europe/Berlin')).toMatchObject({ hour: 3, minute: 30 });
  });

  it('a local time in the autumn overlap is the earlier of its two instants', () => {
    const r = berlinDaily('2025-10-26', '02:30');
    const due = Date.parse(cycleDueAt(r, 0) ?? '');
    // One hour later the wall clock shows 02:30 again (CET): the first one is taken.
    expect(localParts(due + 3_600_000, 'Europe/Berlin')).toMatchObject({ hour: 2, minute: 30 });
    expect(localParts(due - 3_600_000, 'Europe/Berlin').hour).toBe(1);
  });

  it('ends by count and by date (inclusive)', () => {
    const byCount = rule({ end: { kind: 'count', count: 3 } });
    expect(instants(byCount, 4).map((d) => d !== undefined)).toEqual([true, true, true, false]);
    const byDate = rule({ end: { kind: 'until', date: '2025-03-31' } });
    expect(instants(byDate, 4).map((d) => d !== undefined)).toEqual([true, true, true, false]);
  });

  it('resume: cycles due during the pause are skipped, the next future one is charged', () => {
    const r = rule({ startDate: '2025-01-15' });
    // Paused before cycle 1 (15 Feb), resumed on 20 April: 15 Feb, 15 Mar, 15 Apr are skipped.
    expect(firstCycleFrom(r, 1, '2025-04-20T00:00:00.000Z')).toBe(4);
    // Resumed before the next cycle is due: nothing is skipped.
    expect(firstCycleFrom(r, 1, '2025-02-01T00:00:00.000Z')).toBe(1);
    // Ended meanwhile.
    expect(
      firstCycleFrom({ ...r, end: { kind: 'count', count: 3 } }, 1, '2025-04-20T00:00:00Z'),
    ).toBe(undefined);
  });
});

// ---- properties ---------------------------------------------------------------------------------

const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'Australia/Sydney',
  'Australia/Lord_Howe', // 30-minute daylight saving
  'Asia/Kolkata',
  'America/Sao_Paulo', // past transitions at midnight
  'Pacific/Chatham',
] as const;

const ruleArb: fc.Arbitrary<ScheduleRule> = fc
  .record({
    period: fc.constantFrom<Period>('day', 'week', 'month', 'year'),
    interval: fc.integer({ min: 1, max: 12 }),
    start: fc.date({
      min: new Date('1995-01-01T00:00:00Z'),
      max: new Date('2060-12-31T00:00:00Z'),
      noInvalidDate: true,
    }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.constantFrom(0, 15, 30, 45, 59),
    timeZone: fc.constantFrom(...ZONES),
  })
  .map(({ period, interval, start, hour, minute, timeZone }) => ({
    period,
    interval,
    startDate: start.toISOString().slice(0, 10),
    timeOfDay: `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`,
    timeZone,
    end: { kind: 'never' },
  }));

const CYCLES = 40;

/** Months (or days) between two local dates, the way a person counts them. */
function monthsBetween(a: string, b: string): number {
  const x = parseLocalDate(a);
  const y = parseLocalDate(b);
  return (y.year - x.year) * 12 + (y.month - x.month);
}
function daysBetween(a: string, b: string): number {
  return (Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000;
}

/** How a period is counted between two cycles' local dates, and how many of those it is. */
const PERIOD_STEP: Record<ScheduleRule['period'], [typeof daysBetween, number]> = {
  day: [daysBetween, 1],
  week: [daysBetween, 7],
  month: [monthsBetween, 1],
  year: [monthsBetween, 12],
};

describe('schedule calculator: properties', () => {
  it('due instants strictly increase', () => {
    fc.assert(
      fc.property(ruleArb, (r) => {
        const due = instants(r, CYCLES).map((d) => Date.parse(d ?? ''));
        for (let n = 1; n < due.length; n++) expect(due[n]).toBeGreaterThan(due[n - 1] ?? NaN);
      }),
      { numRuns: 150 },
    );
  });

  it('never skips a cycle: consecutive cycles are exactly one interval apart in local dates', () => {
    fc.assert(
      fc.property(ruleArb, (r) => {
        const local = instants(r, CYCLES).map((d) => {
          const p = localParts(Date.parse(d ?? ''), r.timeZone);
          return formatLocalDate(p);
        });
        // The instant is on the cycle's local date in the schedule's zone.
        expect(local).toEqual(dates(r, CYCLES));
        for (let n = 1; n < local.length; n++) {
          const [a, b] = [local[n - 1] ?? '', local[n] ?? ''];
          const [between, per] = PERIOD_STEP[r.period];
          expect(between(a, b)).toBe(per * r.interval);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('month-end rule: the day is the anchor day, or the last day of a shorter month', () => {
    fc.assert(
      fc.property(
        ruleArb.filter((r) => r.period === 'month' || r.period === 'year'),
        (r) => {
          const anchorDay = parseLocalDate(r.startDate).day;
          for (let n = 0; n < CYCLES; n++) {
            const d = cycleDate(r, n);
            expect(d.day).toBe(Math.min(anchorDay, daysInMonth(d.year, d.month)));
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('the local time of day is kept, or moved forward only where it does not exist', () => {
    fc.assert(
      fc.property(ruleArb, (r) => {
        const [hh, mm] = r.timeOfDay.split(':').map(Number);
        const wanted = (hh ?? 0) * 60 + (mm ?? 0);
        for (const due of instants(r, CYCLES)) {
          const t = Date.parse(due ?? '');
          const p = localParts(t, r.timeZone);
          const shown = p.hour * 60 + p.minute;
          if (shown === wanted) continue;
          // A gap: later than wanted by its length, and that long before the instant the clock
          // showed an earlier time than wanted (the wanted time was jumped over) — on the same
          // local day, or on the day before when the gap is at midnight (Sao Paulo 2015-10-18:
          // 00:00 does not exist, an hour before 01:00 the clock showed 23:00 of the 17th).
          expect(shown).toBeGreaterThan(wanted);
          const before = localParts(t - (shown - wanted) * 60_000, r.timeZone);
          const dayOf = (d: { year: number; month: number; day: number }) =>
            d.year * 10_000 + d.month * 100 + d.day;
          const earlier =
            dayOf(before) < dayOf(p) ||
            (dayOf(before) === dayOf(p) && before.hour * 60 + before.minute < wanted);
          expect({ due, before, earlier }).toMatchObject({ earlier: true });
        }
      }),
      { numRuns: 150 },
    );
  });

  it('resume never charges a cycle due before the resume, and skips no future one', () => {
    fc.assert(
      fc.property(
        ruleArb,
        fc.integer({ min: 0, max: 10 }),
        fc.integer({ min: 0, max: 3 * 366 * 86_400_000 }),
        (r, from, pauseMs) => {
          const resumeAt = new Date(Date.parse(cycleDueAt(r, from) ?? '') + pauseMs).toISOString();
          const next = firstCycleFrom(r, from, resumeAt) ?? NaN;
          expect(next).toBeGreaterThanOrEqual(from);
          expect(Date.parse(cycleDueAt(r, next) ?? '')).toBeGreaterThanOrEqual(
            Date.parse(resumeAt),
          );
          if (next > from) {
            expect(Date.parse(cycleDueAt(r, next - 1) ?? '')).toBeLessThan(Date.parse(resumeAt));
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('an end by count gives exactly that many cycles; an end by date none after it', () => {
    fc.assert(
      fc.property(ruleArb, fc.integer({ min: 1, max: 30 }), (r, count) => {
        const byCount = { ...r, end: { kind: 'count' as const, count } };
        expect(instants(byCount, count + 5).filter((d) => d !== undefined)).toHaveLength(count);
        const last = formatLocalDate(cycleDate(r, count - 1));
        const byDate = { ...r, end: { kind: 'until' as const, date: last } };
        expect(instants(byDate, count + 5).filter((d) => d !== undefined)).toHaveLength(count);
      }),
      { numRuns: 100 },
    );
  });
});
