import {
  dayBounds,
  dayOf,
  isDay,
  parseMerchantTimeZones,
  previousDay,
  timeZoneOf,
} from './merchant-day';

describe("a merchant's day in its time zone", () => {
  it('UTC: midnight to midnight', () => {
    expect(dayBounds('2026-11-28', 'UTC')).toEqual({
      from: new Date('2026-11-28T00:00:00.000Z'),
      to: new Date('2026-11-29T00:00:00.000Z'),
    });
  });

  it('Berlin in winter starts an hour before UTC midnight', () => {
    expect(dayBounds('2026-11-28', 'Europe/Berlin')).toEqual({
      from: new Date('2026-11-27T23:00:00.000Z'),
      to: new Date('2026-11-28T23:00:00.000Z'),
    });
    expect(dayOf(new Date('2026-11-27T23:30:00.000Z'), 'Europe/Berlin')).toBe('2026-11-28');
    expect(dayOf(new Date('2026-11-27T23:30:00.000Z'), 'UTC')).toBe('2026-11-27');
  });

  it('a daylight-saving day is 23 or 25 hours long', () => {
    const spring = dayBounds('2026-03-29', 'Europe/Berlin');
    expect(spring.to.getTime() - spring.from.getTime()).toBe(23 * 3_600_000);
    const autumn = dayBounds('2026-11-01', 'America/New_York');
    expect(autumn).toEqual({
      from: new Date('2026-11-01T04:00:00.000Z'),
      to: new Date('2026-11-02T05:00:00.000Z'),
    });
  });

  it('east of UTC by more than half a day', () => {
    expect(dayBounds('2026-11-28', 'Pacific/Auckland').from).toEqual(
      new Date('2026-11-27T11:00:00.000Z'),
    );
  });

  it('reads MERCHANT_TIME_ZONES, refusing unknown zones; UTC by default', () => {
    const zones = parseMerchantTimeZones('{"1111":"Europe/Berlin"}');
    expect(timeZoneOf(zones, '1111')).toBe('Europe/Berlin');
    expect(timeZoneOf(zones, '2222')).toBe('UTC');
    expect(() => parseMerchantTimeZones('{"1111":"Mars/Olympus"}')).toThrow('MERCHANT_TIME_ZONES');
    expect(parseMerchantTimeZones(undefined)).toEqual({});
  });

  it('calendar days', () => {
    expect(isDay('2026-02-29')).toBe(false);
    expect(isDay('2028-02-29')).toBe(true);
    expect(previousDay('2026-03-01')).toBe('2026-02-28');
  });
});
