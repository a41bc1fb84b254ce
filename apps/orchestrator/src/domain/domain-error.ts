/**
 * Errors for broken invariants only (a corrupt history, a programming mistake). Expected business
 * outcomes (declined, rule refused) are decisions and events, never exceptions.
 */
export type DomainErrorCode =
  'VERSION_GAP' | 'EVENT_BEFORE_CREATION' | 'NO_OPERATION_IN_FLIGHT' | 'INCOMPLETE_EVENT';

export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
