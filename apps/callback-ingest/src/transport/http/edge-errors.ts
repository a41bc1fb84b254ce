import { HttpException, HttpStatus } from '@nestjs/common';

/**
 * Errors of the public edge: an HTTP status plus a stable code; HttpErrorFilter renders them as
 * `{ error: { code, message, errorId } }` (no stack, no internals).
 */
export function edgeError(status: HttpStatus, code: string, message: string): HttpException {
  return new HttpException({ code, message }, status);
}

export const unknownEndpoint = (): HttpException =>
  edgeError(HttpStatus.NOT_FOUND, 'unknown-endpoint', 'no such callback endpoint');

/**
 * 503 for a verified notification the broker did not acknowledge. Rendered by
 * BrokerUnavailableFilter rather than HttpErrorFilter, which reports every 5xx as a generic
 * INTERNAL_ERROR: the gateway does not care, but an operator reading the reply should see why.
 */
export class BrokerUnavailableException extends HttpException {
  constructor() {
    super(
      {
        code: 'broker-unavailable',
        message: 'the notification could not be stored yet; retry later',
      },
      HttpStatus.SERVICE_UNAVAILABLE,
    );
  }
}
