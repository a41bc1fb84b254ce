import {
  commandSagaId,
  INTERNAL_COMMAND_TYPES,
  isPaymentAddressed,
  isRecurringCommandType,
  parseCommand,
  parseRecurringCommand,
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
 * Commands as libs/contracts defines them (the schemas producers validate against): validated,
 * fingerprinted for idempotency, and addressed to their saga (`commandSagaId`: the payment id,
 * the payout id or the payout budget id). Internal command types (a payout's budget
 * reservation and its answer) are accepted only from a saga, never from the commands topic.
 */
export const contractCommands: CommandCatalogue = {
  parse(raw, origin = 'topic') {
    if (isRecurringObject(raw)) return parseRecurring(raw, origin);
    const parsed = parseCommand(raw);
    if (parsed.ok && origin === 'topic' && INTERNAL_COMMAND_TYPES.includes(parsed.command.type)) {
      return {
        ok: false,
        reason: 'INTERNAL_COMMAND',
        message: `${parsed.command.type} is issued by the orchestrator itself, not accepted on the commands topic`,
        ids: {
          commandId: parsed.command.commandId,
          sagaId: commandSagaId(parsed.command),
          type: parsed.command.type,
          endpointId: parsed.command.merchant.endpointId,
        },
        fingerprint: invalidCommandFingerprint(raw),
      };
    }
    if (parsed.ok) {
      const { command } = parsed;
      return {
        ok: true,
        command: {
          type: command.type,
          commandId: command.commandId,
          sagaId: commandSagaId(command),
          endpointId: command.merchant.endpointId,
          body: command,
        },
        fingerprint: commandFingerprint(command),
      };
    }
    return {
      ok: false,
      reason: parsed.reason,
      message: describe(parsed.details),
      ids: {
        ...(parsed.ids.commandId === undefined ? {} : { commandId: parsed.ids.commandId }),
        ...(parsed.ids.sagaId === undefined ? {} : { sagaId: parsed.ids.sagaId }),
        ...(parsed.ids.type === undefined ? {} : { type: parsed.ids.type }),
        endpointId: readEndpointId(raw),
      },
      fingerprint: invalidCommandFingerprint(raw),
    };
  },
};

function isRecurringObject(raw: unknown): raw is Record<string, unknown> {
  return (
    raw !== null &&
    typeof raw === 'object' &&
    !Array.isArray(raw) &&
    isRecurringCommandType((raw as Record<string, unknown>).type)
  );
}

/**
 * Schedule commands are addressed by `scheduleId` (the schedule saga); a rebill, create-card-ref
 * and get-card-info by their `paymentId`. Card-payment commands keep `parseCommand` above, unchanged.
 */
function parseRecurring(
  raw: Record<string, unknown>,
  origin: 'topic' | 'saga',
): ReturnType<CommandCatalogue['parse']> {
  const parsed = parseRecurringCommand(raw);
  // A cycle's outcome is reported by the rebill saga itself, never by a producer on the topic.
  if (parsed.ok && origin === 'topic' && parsed.command.type === 'record-cycle-outcome') {
    return {
      ok: false,
      reason: 'INTERNAL_COMMAND',
      message:
        'record-cycle-outcome is issued by the orchestrator itself, not accepted on the commands topic',
      ids: {
        commandId: parsed.command.commandId,
        sagaId: parsed.command.scheduleId,
        type: parsed.command.type,
        endpointId: parsed.command.merchant.endpointId,
      },
      fingerprint: invalidCommandFingerprint(raw),
    };
  }
  if (parsed.ok) {
    const { command } = parsed;
    return {
      ok: true,
      command: {
        type: command.type,
        commandId: command.commandId,
        sagaId: isPaymentAddressed(command) ? command.paymentId : command.scheduleId,
        endpointId: command.merchant.endpointId,
        body: command,
      },
      fingerprint: commandFingerprint(command),
    };
  }
  return {
    ok: false,
    reason: parsed.reason,
    message: describe(parsed.details),
    ids: { ...parsed.ids, endpointId: readEndpointId(raw) },
    fingerprint: invalidCommandFingerprint(raw),
  };
}
