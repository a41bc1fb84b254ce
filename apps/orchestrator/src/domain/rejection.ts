import type { RejectionCode } from '@payments/contracts';

/** What every flow's command-rejected event is made from (the runtime's Flow.rejection args). */
export interface RejectionArgs {
  readonly commandId: string;
  readonly commandType: string | undefined;
  readonly version: number;
  /** ISO instant. */
  readonly now: string;
  readonly reason: RejectionCode;
  readonly message: string;
}

/**
 * The fields every flow's command-rejected event shares, normalised one way: an unnamed command
 * type reads `unknown`, the message is cut to the contracts' 1,024 characters.
 */
export function rejectionFields(args: RejectionArgs): {
  commandId: string;
  version: number;
  occurredAt: string;
  commandType: string;
  reason: RejectionCode;
  message: string;
} {
  return {
    commandId: args.commandId,
    version: args.version,
    occurredAt: args.now,
    commandType:
      args.commandType === undefined || args.commandType.length === 0
        ? 'unknown'
        : args.commandType,
    reason: args.reason,
    message: args.message.slice(0, 1024),
  };
}
