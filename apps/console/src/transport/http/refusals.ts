import { randomUUID } from 'node:crypto';
import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import type { Response } from 'express';
import { PinoLogger } from 'nestjs-pino';
import { type Html, html } from './html';
import { layout } from './pages';
import type { ConsoleRequest } from './security';

/** Where a refused form's page is found again (the GET of the form's own path, where it has one). */
export function pageAgain(path: string): string {
  if (path === '/sign-out') return '/sagas';
  if (path === '/dead-letters/replay') return '/dead-letters';
  return /^\/(sign-in|sagas\/[^/]+\/actions\/[^/]+)$/.test(path) ? path : '/sagas';
}

function codeOf(exception: HttpException): string | undefined {
  const body = exception.getResponse();
  const code = typeof body === 'object' && body !== null ? (body as { code?: unknown }).code : '';
  return typeof code === 'string' ? code : undefined;
}

/** A refusal in plain words, with the code a person can quote to support. */
export function refusalPage(
  status: number,
  code: string | undefined,
  path: string,
  errorId: string,
): { title: string; body: Html } {
  const quote = html`<p><small>${code ?? `HTTP ${status}`} · error id ${errorId}</small></p>`;
  if (code === 'CSRF_TOKEN_INVALID') {
    return {
      title: 'This form expired',
      body: html`<h1>This form expired</h1>
        <div class="error" role="alert" id="refusal">
          <p>
            This form expired (the session it belonged to ended, or it was not sent from this
            console), so nothing was done. Here is the page again:
            <a id="pageAgain" href="${pageAgain(path)}">open it and send the form anew</a>.
          </p>
        </div>
        ${quote}`,
    };
  }
  if (status === 404) {
    return {
      title: 'Not found',
      body: html`<h1>Not found</h1>
        <div class="error" role="alert" id="refusal">
          <p>There is no page at this address. <a href="/sagas">Search the sagas</a>.</p>
        </div>
        ${quote}`,
    };
  }
  if (status < 500) {
    return {
      title: 'Refused',
      body: html`<h1>Refused</h1>
        <div class="error" role="alert" id="refusal">
          <p>The console refused this request (HTTP ${status}). <a href="/sagas">Back</a>.</p>
        </div>
        ${quote}`,
    };
  }
  return {
    title: 'Something went wrong',
    body: html`<h1>Something went wrong</h1>
      <div class="error" role="alert" id="refusal">
        <p>
          Something went wrong on the console's side; nothing was sent. Try again, or give support
          the error id below.
        </p>
      </div>
      ${quote}`,
  };
}

/**
 * Every error the console answers is a page (never JSON): a stale form says it expired and links
 * the page again, an unknown address says so; 5xx are logged with their error id.
 */
@Catch()
export class ConsoleErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: PinoLogger) {
    this.logger.setContext(ConsoleErrorFilter.name);
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const request = host.switchToHttp().getRequest<ConsoleRequest>();
    const response = host.switchToHttp().getResponse<Response>();
    const errorId = randomUUID();
    const status = exception instanceof HttpException ? exception.getStatus() : 500;
    const code = exception instanceof HttpException ? codeOf(exception) : undefined;
    if (status >= 500) this.logger.error({ err: exception, errorId, status }, 'request failed');
    else this.logger.warn({ errorId, status, code }, 'request refused');
    if (response.headersSent) return;
    const page = refusalPage(status, code, request.path, errorId);
    const session = request.consoleSession ?? { csrf: '' };
    response
      .status(status)
      .type('html')
      .send(layout(page.title, page.body, session).text);
  }
}
