import type { z } from 'zod';
import {
  ALL_COMMAND_SCHEMAS,
  ALL_EVENT_SCHEMAS,
  type AllCommandSchemas,
  type AllEventSchemas,
  INTERNAL_COMMAND_TYPES,
  type InternalCommandType,
} from '@payments/contracts';

/**
 * What a producer may send and a consumer may receive: the contracts' flow families
 * (`FLOW_FAMILIES`), so a family or a type added there appears here without an edit. Commands the
 * orchestrator issues to itself (a family's internal commands: payout budget steps, a schedule
 * cycle's outcome) are left out: the orchestrator refuses them from the topic.
 */

/** Every command type a service may send, with its schema. */
export type CommandType = Exclude<keyof AllCommandSchemas, InternalCommandType>;
export type CommandOf<T extends CommandType> = z.infer<AllCommandSchemas[T]>;
export type Command = { [T in CommandType]: CommandOf<T> }[CommandType];

export const COMMAND_SCHEMAS: Readonly<Record<CommandType, z.ZodType>> = Object.fromEntries(
  Object.entries(ALL_COMMAND_SCHEMAS).filter(([type]) => !INTERNAL_COMMAND_TYPES.includes(type)),
) as unknown as Record<CommandType, z.ZodType>;

export const COMMAND_TYPES = Object.keys(COMMAND_SCHEMAS).sort() as CommandType[];

export function isCommandType(type: unknown): type is CommandType {
  return typeof type === 'string' && Object.hasOwn(COMMAND_SCHEMAS, type);
}

/**
 * Every event type on `payments.events.v1`: payments, payouts, payout budgets, transfers,
 * PAN-eligibility checks, schedules.
 */
export type EventType = keyof AllEventSchemas;
export type EventOf<T extends EventType> = z.infer<AllEventSchemas[T]>;
export type OutcomeEvent = { [T in EventType]: EventOf<T> }[EventType];

export const EVENT_SCHEMAS_BY_TYPE: Readonly<Record<EventType, z.ZodType>> = ALL_EVENT_SCHEMAS;

export const EVENT_TYPES = Object.keys(ALL_EVENT_SCHEMAS).sort() as EventType[];

export function isEventType(type: unknown): type is EventType {
  return typeof type === 'string' && Object.hasOwn(ALL_EVENT_SCHEMAS, type);
}

/** The saga an event or command is about: its payment, payout, budget, schedule, transfer or check id. */
export { sagaIdOf } from '@payments/contracts';
