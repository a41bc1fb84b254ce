import { randomUUID } from 'node:crypto';
import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import type { Response } from 'express';

/** The body every HTTP error answers with: no stack, no internals; errorId finds the log line. */
export interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string; readonly errorId: string };
}

function codeForStatus(status: number): string {
  const name = (HttpStatus as unknown as Record<number, string | undefined>)[status];
  return name ?? (status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST');
}

function describeHttpException(exception: HttpException): { code: string; message: string } {
  const status = exception.getStatus();
  const body = exception.getResponse();
  if (typeof body === 'object' && body !== null) {
    const record = body as Record<string, unknown>;
    const code = typeof record.code === 'string' ? record.code : codeForStatus(status);
    const raw = record.message;
    const message = Array.isArray(raw)
      ? raw.map(String).join('; ')
      : typeof raw === 'string'
        ? raw
        : exception.message;
    return { code, message };
  }
  return {
    code: codeForStatus(status),
    message: typeof body === 'string' ? body : exception.message,
  };
}

/**
 * Catch-all filter for HTTP apps (Novu-style): answers `{ error: { code, message, errorId } }`.
 * HttpExceptions keep their status and message (4xx logged at warn); anything else is a 500 with a
 * generic message, logged at error with the exception and the errorId. Register with
 * `{ provide: APP_FILTER, useClass: HttpErrorFilter }`.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: PinoLogger) {
    this.logger.setContext(HttpErrorFilter.name);
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const response = host.switchToHttp().getResponse<Response>();
    const errorId = randomUUID();
    let status: number = HttpStatus.INTERNAL_SERVER_ERROR;
    let code = 'INTERNAL_ERROR';
    let message = 'Internal server error';
    if (exception instanceof HttpException) {
      status = exception.getStatus();
      if (status < 500) ({ code, message } = describeHttpException(exception));
    }
    if (status >= 500) {
      this.logger.error({ err: exception, errorId, status }, 'request failed');
    } else {
      this.logger.warn({ errorId, status, code, reason: message }, 'request rejected');
    }
    if (response.headersSent) return;
    const body: ErrorBody = { error: { code, message, errorId } };
    response.status(status).json(body);
  }
}
