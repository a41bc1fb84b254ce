import { parseCommand } from '@payments/contracts';
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
