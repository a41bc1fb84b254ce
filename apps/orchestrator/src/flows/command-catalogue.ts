import {
  type AnyCommand,
  commandSagaId,
  INTERNAL_COMMAND_TYPES,
  parseCommand,
} from '@payments/contracts';
import { commandFingerprint } from '../domain';
import type { CommandCatalogue } from '../runtime/flow';
import { invalidCommandFingerprint, readEndpointId } from '../runtime/runtime-rules';

function describe(details: ReadonlyArray<{ path: string; message: string }>): string {
  return details
    .slice(0, 5)
    .map((d) => `${d.path}: ${d.message}`)
    .join('; ');
}

/**
 * Commands as libs/contracts defines them (the schemas producers validate against), every family
 * of `FLOW_FAMILIES` on one road: validated, fingerprinted for idempotency, and addressed to their
 * saga (`commandSagaId`: the value of the family's saga id field). Internal command types (a
 * payout's budget reservation and its answer, a rebill's cycle outcome) are accepted only from a
 * saga, never from the commands topic.
 */
export const contractCommands: CommandCatalogue = {
  parse(raw, origin = 'topic') {
    const parsed = parseCommand(raw);
    if (!parsed.ok)
      return invalid(raw, parsed, {
        ...(parsed.ids.commandId === undefined ? {} : { commandId: parsed.ids.commandId }),
        ...(parsed.ids.sagaId === undefined ? {} : { sagaId: parsed.ids.sagaId }),
        ...(parsed.ids.type === undefined ? {} : { type: parsed.ids.type }),
      });
    const { command } = parsed;
    const sagaId = commandSagaId(command);
    return origin === 'topic' && INTERNAL_COMMAND_TYPES.includes(command.type)
      ? internalOnly(raw, command, sagaId)
      : valid(command, sagaId);
  },
};

type Parsed = ReturnType<CommandCatalogue['parse']>;

/** A valid command addressed to its saga, fingerprinted for idempotency. */
function valid(command: AnyCommand, sagaId: string): Parsed {
  return {
    ok: true,
    command: {
      type: command.type,
      commandId: command.commandId,
      sagaId,
      endpointId: command.merchant.endpointId,
      body: command,
    },
    fingerprint: commandFingerprint(command),
  };
}

/** A command type the orchestrator issues itself, seen on the commands topic: refused. */
function internalOnly(raw: unknown, command: AnyCommand, sagaId: string): Parsed {
  return {
    ok: false,
    reason: 'INTERNAL_COMMAND',
    message: `${command.type} is issued by the orchestrator itself, not accepted on the commands topic`,
    ids: {
      commandId: command.commandId,
      sagaId,
      type: command.type,
      endpointId: command.merchant.endpointId,
    },
    fingerprint: invalidCommandFingerprint(raw),
  };
}

/** A command its schema refuses, with what could be read of its ids. */
function invalid(
  raw: unknown,
  parsed: {
    reason: Extract<Parsed, { ok: false }>['reason'];
    details: ReadonlyArray<{ path: string; message: string }>;
  },
  ids: { commandId?: string; sagaId?: string; type?: string },
): Parsed {
  return {
    ok: false,
    reason: parsed.reason,
    message: describe(parsed.details),
    ids: { ...ids, endpointId: readEndpointId(raw) },
    fingerprint: invalidCommandFingerprint(raw),
  };
}
