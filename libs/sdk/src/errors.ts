/** A command the contracts refuse: nothing was sent. `issues` name the fields. */
export class InvalidCommandError extends Error {
  constructor(
    readonly commandType: string,
    readonly issues: readonly string[],
  ) {
    super(`invalid ${commandType} command, not sent: ${issues.join('; ')}`);
    this.name = 'InvalidCommandError';
  }
}

/**
 * An event this SDK cannot read: an unknown type (a newer producer — upgrade @payments/sdk), a
 * body its schema refuses, or broken CloudEvents headers. Carries where it was found.
 */
export class EventSchemaMismatchError extends Error {
  constructor(
    readonly reason: 'UNKNOWN_TYPE' | 'SCHEMA_INVALID' | 'MALFORMED' | 'BAD_HEADERS',
    readonly details: readonly string[],
    readonly where: { topic: string; partition: number; offset: string; ceType?: string },
  ) {
    super(
      `event at ${where.topic}[${where.partition}]@${where.offset}` +
        `${where.ceType === undefined ? '' : ` (${where.ceType})`} does not match this SDK's ` +
        `contracts: ${reason}: ${details.join('; ')}` +
        (reason === 'UNKNOWN_TYPE' ? ' — a newer producer? upgrade @payments/sdk' : ''),
    );
    this.name = 'EventSchemaMismatchError';
  }
}
