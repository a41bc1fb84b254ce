import { Controller, Get, Logger, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { AdminApiClient, type LiveEvent } from '../../application/admin-api.client';
import { ServerSentEventReader, serverSentEvent } from '../../application/server-sent-events';
import { apiError, errorPage, layout } from './pages';
import { ConsolePages } from './console-page';
import type { ConsoleRequest } from './security';
import { CHART_MINUTES, liveRow, minutesFragment, watchPage } from './watch';

/** How long the browser waits before it reconnects a dropped stream. */
const RETRY_MS = 3000;

/**
 * The Watch page. The browser never holds the admin token, so it cannot open the API's stream
 * itself: it opens `/watch/events` on the console (its session cookie), and the console server
 * opens the API's stream with the person's token and passes each event on as an escaped table row.
 */
@Controller('watch')
export class WatchController {
  private readonly logger = new Logger(WatchController.name);

  constructor(
    private readonly api: AdminApiClient,
    private readonly pages: ConsolePages,
  ) {}

  @Get()
  page(@Req() request: ConsoleRequest, @Res() response: Response): void {
    const session = request.consoleSession;
    if (session?.user === undefined) {
      response.redirect(303, '/sign-in');
      return;
    }
    response
      .status(200)
      .type('html')
      .send(layout('Watch', watchPage(), session).text);
  }

  @Get('minutes')
  async minutes(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    const user = request.consoleSession?.user;
    if (user === undefined) {
      response.status(401).type('html').send('<p class="error">signed out</p>');
      return;
    }
    const answer = await this.api.liveMinutes(user.token, CHART_MINUTES);
    if (!answer.ok && answer.status === 401) this.pages.endSession(response);
    const fragment = answer.ok ? minutesFragment(answer.body) : apiError(answer);
    response.status(200).type('html').send(fragment.text);
  }

  @Get('events')
  async events(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    const user = request.consoleSession?.user;
    if (user === undefined) {
      response.status(401).end();
      return;
    }
    const closed = new AbortController();
    request.on('close', () => closed.abort());
    const upstream = await this.api.liveEvents(user.token, closed.signal);
    // A token the API stopped knowing ends the session (the cookie goes before the headers do).
    if (!upstream.ok && upstream.status === 401) this.pages.endSession(response);
    response.status(200);
    response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    response.setHeader('X-Accel-Buffering', 'no');
    response.flushHeaders();
    response.write(`retry: ${RETRY_MS}\n\n`);
    if (!upstream.ok) {
      // The page says why (e.g. the token was revoked: signed-out sends it to the sign-in page).
      const name = upstream.status === 401 ? 'signed-out' : 'api-error';
      response.end(serverSentEvent(name, errorPage(upstream).text));
      return;
    }
    const reader = new ServerSentEventReader();
    const decoder = new TextDecoder();
    try {
      for await (const chunk of upstream.body) {
        for (const frame of reader.push(decoder.decode(chunk, { stream: true }))) {
          if (frame.event === 'ready') response.write(serverSentEvent('ready', ''));
          if (frame.event === 'outcome') {
            const event = JSON.parse(frame.data) as LiveEvent;
            response.write(serverSentEvent('outcome', liveRow(event).text));
          }
        }
      }
    } catch (error) {
      if (!closed.signal.aborted) {
        this.logger.warn(`live stream relay ended: ${(error as Error).message}`);
      }
    } finally {
      response.end();
    }
  }
}
