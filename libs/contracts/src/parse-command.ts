import { maskCardNumbers } from '@payments/core';
import { COMMAND_SCHEMAS, type CommandType } from './commands';
import {
  ALL_COMMAND_SCHEMAS,
  type AnyCommand,
  type AnyCommandType,
  commandSagaIdField,
  SAGA_ID_FIELDS,
} from './flow-families';
import { gatewayRequirements, type GatewayRequirement } from './gateway-requirements';
import { findPlainCardData } from './plain-card-data';
import { Uuid } from './primitives';
import type { RejectionCode } from './rejection-codes';
import { RECURRING_COMMAND_SCHEMAS, type RecurringCommand } from './schedules';

export interface ParseIssue {
  path: string;
  message: string;
}

export type ParseCommandResult =
  | { ok: true; command: AnyCommand }
  | {
      ok: false;
      reason: Extract<
        RejectionCode,
        'MALFORMED' | 'UNKNOWN_TYPE' | 'SCHEMA_INVALID' | 'PLAIN_CARD_DATA'
      >;
      details: ParseIssue[];
      /** Whatever identifiers could be read, so a rejection event can be addressed. */
      ids: { commandId?: string; paymentId?: string; sagaId?: string; type?: string };
    };

function isCommandType(t: unknown): t is CommandType {
  return typeof t === 'string' && Object.hasOwn(COMMAND_SCHEMAS, t);
}

function isAnyCommandType(t: unknown): t is AnyCommandType {
  return typeof t === 'string' && Object.hasOwn(ALL_COMMAND_SCHEMAS, t);
}

/** Schedule and card-reference commands: their card is a reference, never a sealed card. */
function isRecurringCommandType(type: unknown): type is RecurringCommand['type'] {
  return typeof type === 'string' && Object.hasOwn(RECURRING_COMMAND_SCHEMAS, type);
}

function readIds(o: Record<string, unknown>): {
  commandId?: string;
  paymentId?: string;
  sagaId?: string;
  type?: string;
} {
  const ids: { commandId?: string; paymentId?: string; sagaId?: string; type?: string } = {};
  if (typeof o.commandId === 'string' && Uuid.safeParse(o.commandId).success)
    ids.commandId = o.commandId;
  if (typeof o.paymentId === 'string' && Uuid.safeParse(o.paymentId).success)
    ids.paymentId = o.paymentId;
  // A known type names its saga by its family's field (a budget's answer names the payout and
  // the budget: the payout is its saga); an unknown one by the first saga id field it has.
  const own = commandSagaIdField(o.type);
  for (const field of own === undefined ? SAGA_ID_FIELDS : [own]) {
    const value = o[field];
    if (typeof value === 'string' && Uuid.safeParse(value).success) {
      ids.sagaId = value;
      break;
    }
  }
  // The type is echoed in the command-rejected event (commandType): never a card number.
  if (typeof o.type === 'string') ids.type = maskCardNumbers(o.type).slice(0, 64);
  return ids;
}

/** For a missing path the gateway requires: which gateway operation and field need it. */
function gatewayMessage(
  record: Record<string, unknown>,
  path: readonly string[],
): string | undefined {
  if (!isCommandType(record.type)) return undefined;
  let value: unknown = record;
  for (const key of path) {
    value =
      value !== null && typeof value === 'object'
        ? (value as Record<string, unknown>)[key]
        : undefined;
  }
  if (value !== undefined) return undefined;
  const requirement: GatewayRequirement | undefined = gatewayRequirements(record.type).find(
    (r) => r.path.join('.') === path.join('.'),
  );
  return requirement
    ? `required: the gateway operation ${requirement.operation} requires ${requirement.fields.join(', ')}`
    : undefined;
}

/**
 * Validates an untrusted command of any flow family: a JSON string or bytes, or an already-parsed
 * value. Order matters: the plain-card check runs before the schema, so a command with card data
 * is always reported as PLAIN_CARD_DATA and never echoes its values in schema issue details.
 */
export function parseCommand(input: unknown): ParseCommandResult {
  let value: unknown = input;
  if (typeof input === 'string' || input instanceof Uint8Array) {
    try {
      value = JSON.parse(typeof input === 'string' ? input : Buffer.from(input).toString('utf8'));
    } catch {
      return {
        ok: false,
        reason: 'MALFORMED',
        details: [{ path: '$', message: 'not valid JSON' }],
        ids: {},
      };
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return {
      ok: false,
      reason: 'MALFORMED',
      details: [{ path: '$', message: 'a command is a JSON object' }],
      ids: {},
    };
  }
  const record = value as Record<string, unknown>;
  const ids = readIds(record);
  const cardPaths = findPlainCardData(record);
  if (cardPaths.length > 0) {
    const instead = isRecurringCommandType(record.type)
      ? 'use a card reference'
      : 'send the card sealed as sealedCard';
    return {
      ok: false,
      reason: 'PLAIN_CARD_DATA',
      details: cardPaths.map((path) => ({ path, message: `clear card data; ${instead}` })),
      ids,
    };
  }
  if (!isAnyCommandType(record.type)) return typeNotIn(ALL_COMMAND_SCHEMAS, 'UNKNOWN_TYPE', ids);
  const parsed = ALL_COMMAND_SCHEMAS[record.type].safeParse(record);
  if (!parsed.success) {
    return {
      ok: false,
      reason: 'SCHEMA_INVALID',
      details: parsed.error.issues.map((issue) => ({
        path: ['$', ...issue.path.map(String)].join('.'),
        message: gatewayMessage(record, issue.path.map(String)) ?? issue.message,
      })),
      ids,
    };
  }
  return { ok: true, command: parsed.data };
}

/** A command whose `type` is none of a table's: the types it may be. */
function typeNotIn<R extends string, I>(table: object, reason: R, ids: I) {
  const message = `one of ${Object.keys(table).join(', ')}`;
  return { ok: false as const, reason, details: [{ path: '$.type', message }], ids };
}
