import { randomUUID } from 'node:crypto';
import { commandSagaId } from './flow-families';
import { parseCommand } from './parse-command';
import { isCalendarDate, isIanaTimeZone } from './schedules';
import { createScheduleCommand } from '../test/testing';

const createSchedule = (over: Record<string, unknown> = {}) => ({
  ...createScheduleCommand(),
  commandId: randomUUID(),
  ...over,
});

describe('recurring commands', () => {
  it('accepts a create-schedule and addresses it by scheduleId; a rebill by paymentId', () => {
    const command = createSchedule();
    const parsed = parseCommand(command);
    expect(parsed).toEqual({ ok: true, command });
    expect(parsed.ok && commandSagaId(parsed.command)).toBe(command.scheduleId);
    const rebill = parseCommand({
      type: 'rebill',
      commandId: 'x',
      paymentId: command.scheduleId,
    });
    expect(rebill.ok ? undefined : rebill.ids.sagaId).toBe(command.scheduleId);
  });

  it('refuses an impossible start date, a bad time zone, a zero amount, with the path', () => {
    const bad = parseCommand(
      createSchedule({
        amount: { minor: 0, currency: 'EUR' },
        rule: { ...createSchedule().rule, startDate: '2026-02-29', timeZone: 'Mars/Olympus' },
      }),
    );
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.reason).toBe('SCHEMA_INVALID');
    expect(bad.details.map((d) => d.path).sort()).toEqual(
      ['$.amount', '$.rule.startDate', '$.rule.timeZone'].sort(),
    );
  });

  it('refuses clear card data before the schema', () => {
    const bad = parseCommand(createSchedule({ description: '4111111111111111' }));
    expect(bad.ok ? undefined : bad.reason).toBe('PLAIN_CARD_DATA');
  });

  it('calendar dates and time zones', () => {
    expect(isCalendarDate('2025-02-29')).toBe(false);
    expect(isCalendarDate('2024-02-29')).toBe(true);
    expect(isCalendarDate('1899-12-31')).toBe(false);
    expect(isIanaTimeZone('America/New_York')).toBe(true);
    expect(isIanaTimeZone('Mars/Olympus')).toBe(false);
  });
});
