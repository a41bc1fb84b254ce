import { isRecurringCommandType, parseCommand, parseRecurringCommand } from '@payments/contracts';
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
 * fingerprinted for idempotency, and addressed to their saga (the payment id).
 */
export const contractCommands: CommandCatalogue = {
  parse(raw) {
    if (isRecurringObject(raw)) return parseRecurring(raw);
    const parsed = parseCommand(raw);
    if (parsed.ok) {
      const { command } = parsed;
      return {
        ok: true,
        command: {
          type: command.type,
          commandId: command.commandId,
          sagaId: command.paymentId,
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
        ...(parsed.ids.paymentId === undefined ? {} : { sagaId: parsed.ids.paymentId }),
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
 * Schedule commands are addressed by `scheduleId` (the schedule saga), a rebill by its
 * `paymentId` (issue #12). Card-payment commands keep `parseCommand` above, unchanged.
 */
function parseRecurring(raw: Record<string, unknown>): ReturnType<CommandCatalogue['parse']> {
  const parsed = parseRecurringCommand(raw);
  if (parsed.ok) {
    const { command } = parsed;
    return {
      ok: true,
      command: {
        type: command.type,
        commandId: command.commandId,
        sagaId: command.type === 'rebill' ? command.paymentId : command.scheduleId,
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
