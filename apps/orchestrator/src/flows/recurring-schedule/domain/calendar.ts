import { unhandled } from '../../../domain/decision';
/**
 * The schedule calculator: when cycle `n` of a recurring schedule is due. Pure; the time zone
 * arithmetic uses the runtime's ICU data (Intl), no library.
 *
 * Rules (README "Recurring schedules"):
 *  - Cycle `n` (0-based) falls on the anchor date plus `n × interval` periods, always counted
 *    from the anchor, never from the previous cycle. So monthly on the 31st falls on the last day
 *    of a shorter month and returns to the 31st in the next long one; yearly on 29 February falls
 *    on 28 February in common years and on the 29th in leap years.
 *  - The time of day is local to the schedule's time zone: 09:00 stays 09:00 across daylight
 *    saving changes. A local time that does not exist (the spring-forward gap) moves forward by
 *    the gap (02:30 → 03:30); a local time that exists twice (the autumn overlap) is the earlier
 *    instant. (Temporal's `disambiguation: 'compatible'`.)
 *  - End by count: cycles 0 … count-1. End by date: cycles whose local date is on or before it.
 */

export type Period = 'day' | 'week' | 'month' | 'year';

export type ScheduleEnd =
  | { kind: 'never' }
  /** Cycles 0 … count-1 (skipped cycles count: see `firstCycleFrom`). */
  | { kind: 'count'; count: number }
  /** Local date (YYYY-MM-DD) of the last possible cycle, inclusive. */
  | { kind: 'until'; date: string };

export interface ScheduleRule {
  readonly period: Period;
  /** Every `interval` periods (≥ 1). */
  readonly interval: number;
  /** The anchor: local date (YYYY-MM-DD) of cycle 0. */
  readonly startDate: string;
  /** Local time of day (HH:MM, 24 h) every cycle is due at. */
  readonly timeOfDay: string;
  /** IANA time zone, e.g. `Europe/Berlin`. */
  readonly timeZone: string;
  readonly end: ScheduleEnd;
}

export interface LocalDate {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

const DAY_MS = 86_400_000;

export function parseLocalDate(text: string): LocalDate {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) throw new Error(`not a local date (YYYY-MM-DD): ${text}`);
  return { year: Number(match[1]), month: Number(match[2]), day: Number(match[3]) };
}

export function formatLocalDate(date: LocalDate): string {
  const pad = (n: number, width: number) => String(n).padStart(width, '0');
  return `${pad(date.year, 4)}-${pad(date.month, 2)}-${pad(date.day, 2)}`;
}

function parseTimeOfDay(text: string): { hour: number; minute: number } {
  const match = /^(\d{2}):(\d{2})$/.exec(text);
  if (!match) throw new Error(`not a time of day (HH:MM): ${text}`);
  return { hour: Number(match[1]), minute: Number(match[2]) };
}

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function epochDay(date: LocalDate): number {
  return Date.UTC(date.year, date.month - 1, date.day) / DAY_MS;
}

function fromEpochDay(day: number): LocalDate {
  const d = new Date(day * DAY_MS);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

export function compareLocalDates(a: LocalDate, b: LocalDate): number {
  return epochDay(a) - epochDay(b);
}

/** The local date of cycle `n`: anchor + n × interval periods, month end clamped. */
export function cycleDate(rule: ScheduleRule, n: number): LocalDate {
  const anchor = parseLocalDate(rule.startDate);
  switch (rule.period) {
    case 'day':
      return fromEpochDay(epochDay(anchor) + n * rule.interval);
    case 'week':
      return fromEpochDay(epochDay(anchor) + n * rule.interval * 7);
    case 'month':
    case 'year': {
      const months = n * rule.interval * (rule.period === 'year' ? 12 : 1);
      const index = anchor.year * 12 + (anchor.month - 1) + months;
      const year = Math.floor(index / 12);
      const month = (index % 12) + 1;
      return { year, month, day: Math.min(anchor.day, daysInMonth(year, month)) };
    }
    default: {
      const never: never = rule.period;
      throw new Error(`unhandled period ${String(never)}`);
    }
  }
}

/** Whether cycle `n` exists under the schedule's end. */
export function cycleExists(rule: ScheduleRule, n: number): boolean {
  if (n < 0 || !Number.isSafeInteger(n)) return false;
  const end = rule.end;
  switch (end.kind) {
    case 'never':
      return true;
    case 'count':
      return n < end.count;
    case 'until':
      return compareLocalDates(cycleDate(rule, n), parseLocalDate(end.date)) <= 0;
    default:
      return unhandled(end, 'end');
  }
}

/** The instant (ISO, UTC) cycle `n` is due, or undefined when the schedule has ended before it. */
export function cycleDueAt(rule: ScheduleRule, n: number): string | undefined {
  if (!cycleExists(rule, n)) return undefined;
  return new Date(zonedInstant(cycleDate(rule, n), rule.timeOfDay, rule.timeZone)).toISOString();
}

/**
 * The resume rule: the first cycle at or after `from` that is due at or after `now`. Cycles that
 * fell due while the schedule was paused (or suspended) are skipped, not caught up: a pause means
 * "do not charge for that time". Skipped cycles keep their numbers, so an end by count still ends
 * on the same calendar date. Undefined when the schedule ends before such a cycle.
 */
export function firstCycleFrom(rule: ScheduleRule, from: number, now: string): number | undefined {
  const nowMs = Date.parse(now);
  // Jump close to `now` before stepping, so a schedule paused for years is not walked day by day.
  let n = Math.max(from, estimateCycleBefore(rule, nowMs));
  for (;;) {
    const due = cycleDueAt(rule, n);
    if (due === undefined) return undefined;
    if (Date.parse(due) >= nowMs) return n;
    n += 1;
  }
}

/** A cycle index whose due time is not after `nowMs` (a lower bound; 0 if none). */
function estimateCycleBefore(rule: ScheduleRule, nowMs: number): number {
  // A period is at most this many days (a month 31, a year 366): dividing the elapsed days by
  // it under-estimates the cycle; two days of margin cover the time zone and the time of day.
  const longestDays = { day: 1, week: 7, month: 31, year: 366 }[rule.period] * rule.interval;
  const anchorMs = epochDay(parseLocalDate(rule.startDate)) * DAY_MS;
  const elapsedDays = (nowMs - anchorMs) / DAY_MS - 2;
  return Math.max(0, Math.floor(elapsedDays / longestDays) - 1);
}

// ---- time zones ---------------------------------------------------------------------------------

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Local wall-clock fields of an instant in a time zone. */
export function localParts(
  epochMs: number,
  timeZone: string,
): LocalDate & { hour: number; minute: number; second: number } {
  const parts: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(epochMs))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const field = (name: string): number => {
    const value = parts[name];
    if (value === undefined) throw new Error(`Intl gave no ${name} for ${timeZone}`);
    return value;
  };
  return {
    year: field('year'),
    month: field('month'),
    day: field('day'),
    hour: field('hour'),
    minute: field('minute'),
    second: field('second'),
  };
}

/** The zone's offset from UTC at an instant, in milliseconds (local − UTC). */
function offsetMs(epochMs: number, timeZone: string): number {
  const p = localParts(epochMs, timeZone);
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return wall - (epochMs - (((epochMs % 1000) + 1000) % 1000));
}

/**
 * The instant a local date and time of day happen in a time zone. A gap moves forward by its
 * length; an overlap takes the earlier instant.
 */
export function zonedInstant(date: LocalDate, timeOfDay: string, timeZone: string): number {
  const { hour, minute } = parseTimeOfDay(timeOfDay);
  const wall = Date.UTC(date.year, date.month - 1, date.day, hour, minute);
  const before = offsetMs(wall - DAY_MS, timeZone);
  const after = offsetMs(wall + DAY_MS, timeZone);
  const matching = [wall - before, wall - after].filter((t) => t + offsetMs(t, timeZone) === wall);
  if (matching.length > 0) return Math.min(...matching);
  // In a gap: read with the offset in force before it, which lands after the gap.
  return wall - before;
}
