import { type FlowFamily, FLOW_FAMILIES } from '@payments/contracts';
import { parseStreamEvent } from '../../stack/kafka-io';
import {
  CHAOS_COMPANIONS,
  COMMANDS,
  EVENT_RULES,
  expectedMovements,
  GUARANTEED_FIRST,
  ONCE_PER_OPERATION,
  SCENARIOS,
} from '.';

/**
 * The chaos suite reads the registry: every family of FLOW_FAMILIES has a chaos companion that
 * says what its events are to the checks and how the workload exercises it, so a family added to
 * the registry without one fails here instead of never being exercised or checked.
 */
const families = FLOW_FAMILIES as readonly FlowFamily[];

describe('chaos companions', () => {
  it('has one companion per family of FLOW_FAMILIES, and none for a family it does not have', () => {
    expect(Object.keys(CHAOS_COMPANIONS).sort()).toEqual(families.map((f) => f.name).sort());
  });

  it.each(families.map((f) => [f.name, f] as const))(
    '%s: exercised by scenarios, or says why not; every event of the family decided',
    (_name, family) => {
      const companion = CHAOS_COMPANIONS[family.name];
      expect(companion.scenarios.length > 0 || (companion.noScenariosBecause ?? '') !== '').toBe(
        true,
      );
      expect(Object.keys(companion.events).sort()).toEqual(Object.keys(family.events).sort());
      for (const type of Object.keys(companion.commands))
        expect({ type, known: Object.hasOwn(family.commands, type) }).toEqual({
          type,
          known: true,
        });
    },
  );

  it('every step of every scenario is a command some companion builds, whose success is an event', () => {
    for (const scenario of SCENARIOS) {
      for (const step of scenario.steps.flatMap((s) => (s.alongside ? [s, s.alongside] : [s]))) {
        const rule = COMMANDS[step.type];
        expect({ scenario: scenario.name, step: step.type, known: rule !== undefined }).toEqual({
          scenario: scenario.name,
          step: step.type,
          known: true,
        });
        for (const event of [rule.success, ...(step.until ?? []), ...(step.ends ?? [])])
          expect({ event, known: Object.hasOwn(EVENT_RULES, event) }).toEqual({
            event,
            known: true,
          });
      }
    }
  });

  it('starts the payer flows and the faulted scenarios first, every scenario name once', () => {
    expect(new Set(SCENARIOS.map((s) => s.name)).size).toBe(SCENARIOS.length);
    expect(GUARANTEED_FIRST).toEqual(
      expect.arrayContaining([
        'sale-form, payer fills the form',
        'preauth-form → capture',
        '3-D Secure preauth → capture',
        'account verification',
        'sale → card ref → PAN eligibility',
        'sale, first send slower than no-trace, resend refused',
        'preauth → capture and card ref both held back',
      ]),
    );
  });

  it('builds the once-per-operation list and the expected movements from the companions', () => {
    expect(ONCE_PER_OPERATION.charged).toEqual(['sale', 'sale-form', 'rebill']);
    expect(ONCE_PER_OPERATION['paid-out']).toContain('payout-form');
    const USD = (minor: number) => ({ minor, currency: 'USD' });
    const e = (version: number, rest: Record<string, unknown>) =>
      ({ version, ...rest }) as unknown as Parameters<typeof expectedMovements>[0][number];
    expect(
      expectedMovements([
        e(1, { type: 'authorized', amount: USD(1_000) }),
        e(2, { type: 'voided', amount: USD(1_000) }),
        e(3, { type: 'pan-eligibility-answered', eligible: true }),
      ]),
    ).toEqual(['authorized 1000', 'released 1000']);
  });
});

describe('parseStreamEvent (the test stack reader, from FLOW_FAMILIES)', () => {
  const base = {
    version: 1,
    commandId: '6f1c7d0e-3c1a-4a57-9d0b-2f5c0b6f8e11',
    occurredAt: '2026-11-29T00:00:00.000Z',
  };

  it('names the family and the saga of an event by the contracts', () => {
    const checkId = '0b6f8e11-3c1a-4a57-9d0b-2f5c6f1c7d0e';
    const parsed = parseStreamEvent({
      ...base,
      type: 'pan-eligibility-command-rejected',
      checkId,
      commandType: 'pan-eligibility',
      reason: 'SCHEMA_INVALID',
      message: 'refused',
    });
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed).toMatchObject({ family: 'pan-eligibility', sagaId: checkId });
    // A schedule's command-rejected: the card payments' type, addressed by scheduleId.
    const schedule = parseStreamEvent({
      ...base,
      type: 'command-rejected',
      scheduleId: checkId,
      commandType: 'pause-schedule',
      reason: 'SCHEMA_INVALID',
      message: 'refused',
    });
    if (!schedule.ok) throw new Error(schedule.error);
    expect(schedule).toMatchObject({ family: 'recurring-schedule', sagaId: checkId });
  });

  it('refuses an event no family defines, and one its schema refuses, with the reason', () => {
    expect(parseStreamEvent({ ...base, type: 'teleported' })).toEqual({
      ok: false,
      error: 'teleported: no family in FLOW_FAMILIES defines it',
    });
    const bad = parseStreamEvent({ ...base, type: 'approved', paymentId: 'not-a-uuid' });
    expect(bad.ok).toBe(false);
  });
});
