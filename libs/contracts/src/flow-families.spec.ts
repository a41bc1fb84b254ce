import { readdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  ALL_COMMAND_SCHEMAS,
  ALL_EVENT_SCHEMAS,
  commandSagaId,
  disjoint,
  FLOW_FAMILIES,
  INTERNAL_COMMAND_TYPES,
  SAGA_ID_FIELDS,
} from './flow-families';
import { byType, type FlowFamily, sagaCommands } from './flow-family';
import { AdminActionAudited, CaseStepAudited } from './admin';
import { ReconcileCommand } from './reconciliation';
import { ScheduleCommandRejected } from './schedules';
import { TRANSFER_FAMILY } from './transfers';
import { CONTROL_EVENT_SCHEMAS } from './day-close';

/** What is wrong with a family: a schema whose saga id is not a required uuid, an internal command it does not have. */
function familyProblems(family: FlowFamily): string[] {
  const problems: string[] = [];
  if (!/^[a-z]+Id$/.test(family.sagaIdField))
    problems.push(`${family.name}: saga id field "${family.sagaIdField}"`);
  for (const [type, schema] of [
    ...Object.entries(family.commands),
    ...Object.entries(family.events),
  ]) {
    const field = (schema.shape as Record<string, z.ZodType | undefined>)[family.sagaIdField];
    if (
      field === undefined ||
      field.safeParse(undefined).success ||
      field.safeParse('not-a-uuid').success ||
      !field.safeParse(randomUUID()).success
    )
      problems.push(`${family.name}: ${type} has no required uuid ${family.sagaIdField}`);
    const literal = schema.shape.type;
    if (!(literal instanceof z.ZodLiteral) || literal.value !== type)
      problems.push(`${family.name}: ${type} is registered under another type`);
  }
  for (const type of family.internalCommands)
    if (!Object.hasOwn(family.commands, type))
      problems.push(`${family.name}: internal ${type} is not its command`);
  return problems;
}

/** Every zod object exported by a contracts module (not specs, not the generator script). */
async function exportedObjects(): Promise<Array<[string, z.ZodObject]>> {
  const files = readdirSync(__dirname).filter(
    (f) => f.endsWith('.ts') && !f.includes('.spec.') && !f.includes('.generate.'),
  );
  const modules = await Promise.all(
    files.map((f) => import(`./${f}`) as Promise<Record<string, unknown>>),
  );
  const bySchema = new Map<z.ZodObject, string>();
  for (const [name, schema] of modules.flatMap((module) =>
    Object.entries(module).filter(
      (entry): entry is [string, z.ZodObject] => entry[1] instanceof z.ZodObject,
    ),
  ))
    bySchema.set(schema, name);
  return [...bySchema].map(([schema, name]) => [name, schema]);
}

/** Messages of the reconciliation and admin-audit topics: no flow family's. */
const OTHER_TOPICS: readonly z.ZodObject[] = [
  ReconcileCommand,
  AdminActionAudited,
  CaseStepAudited,
];

const isMessage = (s: z.ZodObject, kind: 'command' | 'event') =>
  s.shape.type instanceof z.ZodLiteral &&
  'commandId' in s.shape &&
  'version' in s.shape === (kind === 'event');

const registered = (tables: (f: FlowFamily) => object) =>
  new Set((FLOW_FAMILIES as readonly FlowFamily[]).flatMap((f) => Object.values(tables(f))));

describe('the flow families', () => {
  it.each(FLOW_FAMILIES.map((f) => [f.name, f] as const))(
    '%s: every command and event names its saga by the family field, a required uuid',
    (_name, family) => {
      expect(familyProblems(family)).toEqual([]);
    },
  );

  it('the check finds a family registered under another saga id field, or with none', () => {
    const wrong: FlowFamily = { ...TRANSFER_FAMILY, sagaIdField: 'payoutId' };
    expect(familyProblems(wrong)).toContain('transfer: transfer has no required uuid payoutId');
    expect(familyProblems({ ...TRANSFER_FAMILY, sagaIdField: '' })[0]).toMatch(/saga id field/);
  });

  it('every command schema a contracts module exports is reachable from the registry', async () => {
    const commands = registered((f) => f.commands);
    const unreachable = (await exportedObjects())
      .filter(([, s]) => isMessage(s, 'command') && !OTHER_TOPICS.includes(s))
      .filter(([, s]) => !commands.has(s))
      .map(([name]) => name);
    expect(unreachable).toEqual([]);
  });

  it('every event schema a contracts module exports is reachable from the registry', async () => {
    const events = registered((f) => f.events);
    const unreachable = (await exportedObjects())
      // The schedules' command-rejected is the card payments' event type, listed once with theirs.
      .filter(([, s]) => isMessage(s, 'event') && s !== ScheduleCommandRejected)
      .filter(([, s]) => !events.has(s))
      .map(([name]) => name);
    expect(unreachable).toEqual([]);
  });

  it('derives the merged tables, the saga id fields and the internal commands', () => {
    const count = (k: 'commands' | 'events') =>
      FLOW_FAMILIES.reduce((n, f) => n + Object.keys(f[k]).length, 0);
    expect(Object.keys(ALL_COMMAND_SCHEMAS)).toHaveLength(count('commands'));
    // The families' events and the control events of no family (day-close.ts).
    expect(Object.keys(ALL_EVENT_SCHEMAS)).toHaveLength(
      count('events') + Object.keys(CONTROL_EVENT_SCHEMAS).length,
    );
    expect(SAGA_ID_FIELDS).toEqual([
      'paymentId',
      'payoutId',
      'budgetId',
      'transferId',
      'checkId',
      'scheduleId',
    ]);
    expect([...INTERNAL_COMMAND_TYPES].sort()).toEqual([
      'pan-eligibility-settle-by-decision',
      'payout-budget-answer',
      'payout-settle-by-decision',
      'record-cycle-outcome',
      'release-payout-budget',
      'reserve-payout-budget',
      'schedule-charge-settle-by-decision',
      'settle-by-decision',
      'transfer-settle-by-decision',
    ]);
  });

  it("commandSagaId reads the command's family field, even where it carries other ids", () => {
    const [payoutId, budgetId] = [randomUUID(), randomUUID()];
    const answer = { type: 'payout-budget-answer', payoutId, budgetId } as const;
    expect(commandSagaId(answer as never)).toBe(payoutId);
    const reserve = { type: 'reserve-payout-budget', payoutId, budgetId } as const;
    expect(commandSagaId(reserve as never)).toBe(budgetId);
  });
});

describe('disjoint', () => {
  it('refuses two families that define the same type (one would shadow the other)', () => {
    const a = { approved: 1 };
    const b = { approved: 2, declined: 3 };
    expect(() => disjoint([a, b])).toThrow(/same message type: approved/);
    expect(disjoint([a, { declined: 3 }])).toEqual({ approved: 1, declined: 3 });
  });
});

describe('byType', () => {
  const command = sagaCommands('checkId');
  const [a, b] = [command('a', {}), command('b', { note: z.string() })];

  it('keys each schema by its own type, in the order given', () => {
    const table = byType(b, a);
    expect(Object.keys(table)).toEqual(['b', 'a']);
    expect(table.a).toBe(a);
  });

  it('refuses two schemas of one type, and a schema whose type is no literal', () => {
    expect(() => byType(a, b, command('a', {}))).toThrow(/two schemas of one type: a/);
    const untyped = z.strictObject({ type: z.string(), checkId: z.uuid() });
    expect(() => byType(a, untyped as never)).toThrow(/without a literal type/);
  });
});
