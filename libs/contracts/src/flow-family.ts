import { z } from 'zod';
import { Instant, MerchantRef, Uuid } from './primitives';

/** A family's schemas by their `type`. */
export type SchemaTable = Readonly<Record<string, z.ZodObject>>;

/**
 * One flow family of the commands and events topics, as its contracts module declares it: the
 * field that names its saga in every command and event, its command and event schemas by type,
 * and which of its commands only the orchestrator itself issues (refused on the commands topic).
 * The registry (`flow-families.ts`) derives everything else from these.
 */
export interface FlowFamily<
  F extends string = string,
  C extends SchemaTable = SchemaTable,
  E extends SchemaTable = SchemaTable,
  I extends keyof C & string = keyof C & string,
> {
  readonly name: string;
  readonly sagaIdField: F;
  readonly commands: C;
  readonly events: E;
  readonly internalCommands: readonly I[];
}

/**
 * Declares a family (without `internalCommands`: none). The compiler refuses a command or event
 * schema without the family's saga id field (a string); `flow-families.spec.ts` checks the same at
 * run time, and that the field is a required uuid.
 */
export function flowFamily<
  const F extends string,
  C extends Readonly<Record<string, z.ZodObject & z.ZodType<Record<F, string>>>>,
  E extends Readonly<Record<string, z.ZodObject & z.ZodType<Record<F, string>>>>,
  const I extends keyof C & string = never,
>(
  family: Omit<FlowFamily<F, C, E, I>, 'internalCommands'> & {
    readonly internalCommands?: readonly I[];
  },
): FlowFamily<F, C, E, I> {
  return { ...family, internalCommands: family.internalCommands ?? [] };
}

/** A family's command types, in its table's order: the commands its flow's saga owns. */
export function commandTypesOf<C extends SchemaTable>(family: {
  readonly commands: C;
}): ReadonlyArray<keyof C & string> {
  return Object.keys(family.commands);
}

/**
 * The command constructor of one family: every command is a strict object of its `type`, the
 * fields every command carries, in this order: `commandId` (the idempotency key, DESIGN.md
 * guarantee 1), the family's saga id, the merchant endpoint and the time; then its own fields.
 */
export function sagaCommands<F extends string>(sagaIdField: F) {
  const base = {
    commandId: Uuid,
    [sagaIdField]: Uuid,
    merchant: MerchantRef,
    occurredAt: Instant,
  } as { commandId: typeof Uuid } & { [K in F]: typeof Uuid } & {
    merchant: typeof MerchantRef;
    occurredAt: typeof Instant;
  };
  return <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
    z.strictObject({ type: z.literal(type), ...base, ...shape });
}

/** The `type` a message schema declares (its literal). */
type TypeOf<S extends z.ZodType> = z.output<S> extends { type: infer T extends string } ? T : never;

/**
 * A family's schemas by their `type`, in the order given. The key is read from each schema's
 * literal, so a schema cannot be filed under another type, nor two under one.
 */
export function byType<const S extends ReadonlyArray<z.ZodObject & z.ZodType<{ type: string }>>>(
  ...schemas: S
): { readonly [M in S[number] as TypeOf<M>]: M } {
  const table: Record<string, z.ZodObject> = {};
  for (const schema of schemas) {
    const literal: unknown = schema.shape.type;
    const type: unknown = literal instanceof z.ZodLiteral ? literal.value : undefined;
    if (typeof type !== 'string') throw new Error('a message schema without a literal type');
    if (Object.hasOwn(table, type)) throw new Error(`two schemas of one type: ${type}`);
    table[type] = schema;
  }
  return table as { readonly [M in S[number] as TypeOf<M>]: M };
}

/** The discriminated union (on `type`) of a table's schemas, in the table's order. */
export function unionOf<T extends SchemaTable>(table: T) {
  const options = Object.values(table) as Array<T[keyof T]>;
  return z.discriminatedUnion('type', options as [T[keyof T], ...Array<T[keyof T]>]);
}

/** Shared by the event parsers of every family: the parsed event, or the schema's issues. */
export function parseWith<S extends z.ZodType>(
  schema: S,
  input: unknown,
):
  | { ok: true; event: z.output<S> }
  | { ok: false; reason: 'MALFORMED' | 'SCHEMA_INVALID'; details: string[] } {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      return { ok: false, reason: 'MALFORMED', details: ['not valid JSON'] };
    }
  }
  const parsed = schema.safeParse(value);
  return parsed.success
    ? { ok: true, event: parsed.data }
    : {
        ok: false,
        reason: 'SCHEMA_INVALID',
        details: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
      };
}
