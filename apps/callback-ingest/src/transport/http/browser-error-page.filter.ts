import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import type { Response } from 'express';
import { PinoLogger } from '@payments/logging';

const PAGE = (status: number) =>
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Payment return</title></head>' +
  `<body><h1>We could not read this payment return</h1><p>Error ${status}. Please go back to the shop; ` +
  'your payment status is shown there.</p></body></html>';

/**
 * The payer sees a page, not JSON: a minimal HTML page with the status and nothing else (no
 * codes, no stack). Only HTTP errors of the browser-return route come here; anything unexpected
 * falls through to HttpErrorFilter.
 */
@Catch(HttpException)
export class BrowserErrorPageFilter implements ExceptionFilter {
  constructor(private readonly logger: PinoLogger) {
    this.logger.setContext(BrowserErrorPageFilter.name);
  }

  catch(exception: HttpException, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const status = exception.getStatus();
    const body = exception.getResponse();
    const code =
      typeof body === 'object' && body !== null && 'code' in body
        ? String(body.code)
        : String(status);
    this.logger.warn({ status, code }, 'browser return refused');
    if (response.headersSent) return;
    response.status(status).type('html').setHeader('Cache-Control', 'no-store').send(PAGE(status));
  }
}
