import { randomUUID } from 'node:crypto';
import { type ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import type { ErrorBody } from '@payments/observability';
import { BrokerUnavailableException } from './edge-errors';

/** 503 with its own code (`broker-unavailable`), in the shape HttpErrorFilter uses. */
@Catch(BrokerUnavailableException)
export class BrokerUnavailableFilter implements ExceptionFilter {
  catch(exception: BrokerUnavailableException, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    if (response.headersSent) return;
    const { code, message } = exception.getResponse() as { code: string; message: string };
    const body: ErrorBody = { error: { code, message, errorId: randomUUID() } };
    response.status(exception.getStatus()).setHeader('Retry-After', '30').json(body);
  }
}
