import type { z } from 'zod';
import {
  ALL_COMMAND_SCHEMAS,
  INTERNAL_COMMAND_TYPES,
  RECURRING_COMMAND_SCHEMAS,
  EVENT_SCHEMAS,
  PAN_ELIGIBILITY_EVENT_SCHEMAS,
  PAYOUT_BUDGET_EVENT_SCHEMAS,
  PAYOUT_EVENT_SCHEMAS,
  SCHEDULE_EVENT_SCHEMAS,
  TRANSFER_EVENT_SCHEMAS,
} from '@payments/contracts';

/**
 * What a producer may send and a consumer may receive, taken from the contracts' own schema
 * tables: a command or event type added there appears here without an edit. Commands the
 * orchestrator issues to itself (payout budget steps, a schedule cycle's outcome) are left out:
 * the orchestrator refuses them from the topic.
 */
const ORCHESTRATOR_ONLY: readonly string[] = [...INTERNAL_COMMAND_TYPES, 'record-cycle-outcome'];

/** The tables merged; a type two families both define would make one of them unreadable. */
export function disjoint<T extends object>(tables: readonly object[], merged: T): T {
  const total = tables.reduce((n, t) => n + Object.keys(t).length, 0);
  if (Object.keys(merged).length !== total)
    throw new Error('two contract families define the same message type');
  return merged;
}

const ALL_COMMANDS = disjoint([ALL_COMMAND_SCHEMAS, RECURRING_COMMAND_SCHEMAS], {
  ...ALL_COMMAND_SCHEMAS,
  ...RECURRING_COMMAND_SCHEMAS,
});
type AllCommandSchemas = typeof ALL_COMMANDS;

/** Every command type a service may send, with its schema. */
export type CommandType = Exclude<
  keyof AllCommandSchemas,
  | 'reserve-payout-budget'
  | 'release-payout-budget'
  | 'payout-budget-answer'
  | 'record-cycle-outcome'
>;
export type CommandOf<T extends CommandType> = z.infer<AllCommandSchemas[T]>;
export type Command = { [T in CommandType]: CommandOf<T> }[CommandType];

export const COMMAND_SCHEMAS: Readonly<Record<CommandType, z.ZodType>> = Object.fromEntries(
  Object.entries(ALL_COMMANDS).filter(([type]) => !ORCHESTRATOR_ONLY.includes(type)),
) as unknown as Record<CommandType, z.ZodType>;

export const COMMAND_TYPES = Object.keys(COMMAND_SCHEMAS).sort() as CommandType[];

export function isCommandType(type: unknown): type is CommandType {
  return typeof type === 'string' && Object.hasOwn(COMMAND_SCHEMAS, type);
}

const EVENT_FAMILIES = [
  EVENT_SCHEMAS,
  PAYOUT_EVENT_SCHEMAS,
  PAYOUT_BUDGET_EVENT_SCHEMAS,
  SCHEDULE_EVENT_SCHEMAS,
  TRANSFER_EVENT_SCHEMAS,
  PAN_ELIGIBILITY_EVENT_SCHEMAS,
] as const;
const ALL_EVENTS = disjoint(EVENT_FAMILIES, {
  ...EVENT_SCHEMAS,
  ...PAYOUT_EVENT_SCHEMAS,
  ...PAYOUT_BUDGET_EVENT_SCHEMAS,
  ...SCHEDULE_EVENT_SCHEMAS,
  ...TRANSFER_EVENT_SCHEMAS,
  ...PAN_ELIGIBILITY_EVENT_SCHEMAS,
});
type AllEventSchemas = typeof ALL_EVENTS;

/**
 * Every event type on `payments.events.v1`: payments, payouts, payout budgets, schedules,
 * transfers, PAN-eligibility checks.
 */
export type EventType = keyof AllEventSchemas;
export type EventOf<T extends EventType> = z.infer<AllEventSchemas[T]>;
export type OutcomeEvent = { [T in EventType]: EventOf<T> }[EventType];

export const EVENT_SCHEMAS_BY_TYPE: Readonly<Record<EventType, z.ZodType>> = ALL_EVENTS;

export const EVENT_TYPES = Object.keys(ALL_EVENTS).sort() as EventType[];

export function isEventType(type: unknown): type is EventType {
  return typeof type === 'string' && Object.hasOwn(ALL_EVENTS, type);
}

/** The saga an event or command is about: its payment, payout, budget, schedule, transfer or check id. */
export function sagaIdOf(value: Record<string, unknown>): string | undefined {
  for (const field of [
    'paymentId',
    'payoutId',
    'budgetId',
    'scheduleId',
    'transferId',
    'checkId',
  ]) {
    const id = value[field];
    if (typeof id === 'string' && id.length > 0) return id;
  }
  return undefined;
}
