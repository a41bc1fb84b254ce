/**
 * A merchant's calendar day (issue #35 item 4): merchants close their books in their own time
 * zone (`MERCHANT_TIME_ZONES`, a JSON map endpoint → IANA zone; UTC when not named). The day
 * boundary is local midnight, found with `Intl` (the zone database the runtime ships; no
 * dependency): a day is 23, 24 or 25 hours long across a daylight-saving change.
 */
export const DEFAULT_TIME_ZONE = 'UTC';

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The wall-clock fields of `at` in `zone`. */
function wallClock(at: Date, zone: string): { y: number; m: number; d: number; ms: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(at))
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = parts;
  return {
    y: year,
    m: month,
    d: day,
    ms: Date.UTC(year, month - 1, day, hour, minute, second) + at.getUTCMilliseconds(),
  };
}

/** Milliseconds `zone` is ahead of UTC at `at`. */
export function zoneOffsetMs(zone: string, at: Date): number {
  return wallClock(at, zone).ms - at.getTime();
}

/** The calendar day (YYYY-MM-DD) of `at` in `zone`. */
export function dayOf(at: Date, zone: string): string {
  const { y, m, d } = wallClock(at, zone);
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** The instant of local midnight starting `day` in `zone`. */
function startOf(day: string, zone: string): Date {
  const [y = 0, m = 1, d = 1] = day.split('-').map(Number);
  const wall = Date.UTC(y, m - 1, d);
  // Twice: the offset at the guess may differ from the offset at midnight (a DST change).
  let at = wall - zoneOffsetMs(zone, new Date(wall));
  at = wall - zoneOffsetMs(zone, new Date(at));
  return new Date(at);
}

/** The next calendar day. */
export function nextDay(day: string): string {
  const [y = 0, m = 1, d = 1] = day.split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
}

/** The day before. */
export function previousDay(day: string): string {
  const [y = 0, m = 1, d = 1] = day.split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d - 1)).toISOString().slice(0, 10);
}

/** `day` in `zone` as instants [from, to). */
export function dayBounds(day: string, zone: string): { from: Date; to: Date } {
  return { from: startOf(day, zone), to: startOf(nextDay(day), zone) };
}

/** A valid calendar date YYYY-MM-DD. */
export function isDay(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  return new Date(`${value}T00:00:00.000Z`).toISOString().slice(0, 10) === value;
}

/** An IANA zone the runtime knows. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * `MERCHANT_TIME_ZONES`: a JSON object endpoint id → IANA zone. Throws on anything else (a zone
 * the runtime does not know, an endpoint that is not digits): a wrong day boundary would close
 * the wrong hours.
 */
export function parseMerchantTimeZones(raw: string | undefined): Readonly<Record<string, string>> {
  if (raw === undefined || raw.trim() === '') return {};
  const parsed: unknown = JSON.parse(raw);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('MERCHANT_TIME_ZONES: a JSON object endpoint id → IANA time zone');
  const zones: Record<string, string> = {};
  for (const [endpoint, zone] of Object.entries(parsed)) {
    if (!/^\d{1,19}$/.test(endpoint) || typeof zone !== 'string' || !isTimeZone(zone))
      throw new Error(`MERCHANT_TIME_ZONES: ${endpoint} → ${String(zone)} is not endpoint → zone`);
    zones[endpoint] = zone;
  }
  return zones;
}

export function timeZoneOf(zones: Readonly<Record<string, string>>, endpointId: string): string {
  return zones[endpointId] ?? DEFAULT_TIME_ZONE;
}
