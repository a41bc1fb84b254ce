import type { z } from 'zod';
import { CARD_PAYMENT_FAMILY } from './commands';
import type { FlowFamily, SchemaTable } from './flow-family';
import { PAN_ELIGIBILITY_FAMILY } from './pan-eligibility';
import { PAYOUT_BUDGET_FAMILY, PAYOUT_FAMILY } from './payouts';
import { SCHEDULE_FAMILY } from './schedules';
import { TRANSFER_FAMILY } from './transfers';
import { CONTROL_EVENT_SCHEMAS } from './day-close';

/**
 * The flow families of `payments.commands.v1` and `payments.events.v1`, one line each. Everything
 * below, the parser (`parse-command.ts`), the AsyncAPI document and the SDK's catalogue are
 * derived from this table: a new family is its contracts module (`flowFamily(…)`) and one line
 * here. The order is the AsyncAPI document's and the order in which an unknown command's saga id
 * fields are tried.
 */
export const FLOW_FAMILIES = [
  CARD_PAYMENT_FAMILY,
  PAYOUT_FAMILY,
  PAYOUT_BUDGET_FAMILY,
  TRANSFER_FAMILY,
  PAN_ELIGIBILITY_FAMILY,
  SCHEDULE_FAMILY,
] as const;

type Family = (typeof FLOW_FAMILIES)[number];
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (
  x: infer I,
) => void
  ? I
  : never;
type SchemasOf<F, K extends 'commands' | 'events'> = F extends Record<K, infer T> ? T : never;
type MessageOf<T> = T extends SchemaTable ? z.infer<T[keyof T]> : never;

/** The tables merged; a type two families both define would make one of them unreachable. */
export function disjoint<T extends object>(tables: readonly object[]): T {
  const merged: Record<string, unknown> = {};
  for (const table of tables) {
    for (const [type, schema] of Object.entries(table)) {
      if (Object.hasOwn(merged, type))
        throw new Error(`two contract families define the same message type: ${type}`);
      merged[type] = schema;
    }
  }
  return merged as T;
}

export type AllCommandSchemas = UnionToIntersection<SchemasOf<Family, 'commands'>>;
export type AllEventSchemas = UnionToIntersection<SchemasOf<Family, 'events'>> &
  typeof CONTROL_EVENT_SCHEMAS;

/** Every command on `payments.commands.v1`, by type. */
export const ALL_COMMAND_SCHEMAS = disjoint<AllCommandSchemas>(
  FLOW_FAMILIES.map((f) => f.commands),
);
/** Every event on `payments.events.v1`, by type: the families' and the control events (day-close.ts). */
export const ALL_EVENT_SCHEMAS = disjoint<AllEventSchemas>([
  ...FLOW_FAMILIES.map((f) => f.events),
  CONTROL_EVENT_SCHEMAS,
]);

export type AnyCommand = MessageOf<SchemasOf<Family, 'commands'>>;
export type AnyCommandType = AnyCommand['type'];
export type AnyEvent = MessageOf<SchemasOf<Family, 'events'>>;

/** Command types only the orchestrator itself may issue (child commands of a saga). */
export type InternalCommandType = Family['internalCommands'][number];
export const INTERNAL_COMMAND_TYPES: readonly string[] = FLOW_FAMILIES.flatMap(
  (f): readonly string[] => f.internalCommands,
);

/** The fields naming a saga, one per family (`paymentId`, `payoutId`, …), in the table's order. */
export const SAGA_ID_FIELDS: readonly string[] = [
  ...new Set(FLOW_FAMILIES.map((f): string => f.sagaIdField)),
];

function sagaIdFieldsByType(tables: (f: FlowFamily) => SchemaTable): Map<string, string> {
  const fields = new Map<string, string>();
  for (const family of FLOW_FAMILIES as readonly FlowFamily[]) {
    for (const type of Object.keys(tables(family)))
      if (!fields.has(type)) fields.set(type, family.sagaIdField);
  }
  return fields;
}
const COMMAND_SAGA_ID_FIELD = sagaIdFieldsByType((f) => f.commands);
const EVENT_SAGA_ID_FIELD = sagaIdFieldsByType((f) => f.events);

/** The saga id field of a command type (undefined for a type no family has). */
export function commandSagaIdField(type: unknown): string | undefined {
  return typeof type === 'string' ? COMMAND_SAGA_ID_FIELD.get(type) : undefined;
}

/** The saga a valid command is about: the value of its family's saga id field. */
export function commandSagaId(command: AnyCommand): string {
  return (command as Record<string, unknown>)[COMMAND_SAGA_ID_FIELD.get(command.type)!] as string;
}

/**
 * The saga an event or command is about: its family's saga id field first (a payout budget's
 * events also name the payout, a schedule's cycle events the payment), then any saga id field
 * (an unknown type; `command-rejected` is both the card payments' and the schedules').
 */
export function sagaIdOf(value: Record<string, unknown>): string | undefined {
  const type = value.type;
  const own =
    typeof type === 'string'
      ? (COMMAND_SAGA_ID_FIELD.get(type) ?? EVENT_SAGA_ID_FIELD.get(type))
      : undefined;
  for (const field of own === undefined ? SAGA_ID_FIELDS : [own, ...SAGA_ID_FIELDS]) {
    const id = value[field];
    if (typeof id === 'string' && id.length > 0) return id;
  }
  return undefined;
}
