import { Body, Controller, Get, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { AdminApiClient, type SagaDetail } from '../../application/admin-api.client';
import { CONSOLE_CONFIG, type ConsoleConfig } from '../../config';
import { type ConsolePage, ConsolePages, send } from './console-page';
import { apiQuery, endpointChoices } from './filters';
import {
  acceptedNotice,
  actionNotOfferedPage,
  confirmPage,
  detailPage,
  progressFragment,
  sagaPath,
  searchPage,
} from './pages';
import type { ConsoleRequest } from './security';

/** How long a page polls for an action's result (seconds, one poll a second). */
const MAX_POLLS = 120;

/**
 * The saga's detail lists the action among those it offers now to this token; if it does not,
 * the page says so (404) and false.
 */
function offered(page: ConsolePage, detail: SagaDetail, action: string): boolean {
  if ((detail.actions as readonly string[]).includes(action)) return true;
  page.show(404, 'Not found', actionNotOfferedPage(detail.saga, action, detail.actions));
  return false;
}

/** Finding sagas, a saga's detail and its progress, and an operator's action on it (confirmed). */
@Controller('sagas')
export class SagasController {
  constructor(
    private readonly api: AdminApiClient,
    private readonly pages: ConsolePages,
    @Inject(CONSOLE_CONFIG) private readonly config: ConsoleConfig,
  ) {}

  @Get()
  async search(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Query() raw: Record<string, unknown>,
  ): Promise<void> {
    const page = this.pages.signedIn(request, response);
    if (!page) return;
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(raw)) {
      if (typeof value === 'string' && value.trim() !== '') query.set(key, value.trim());
    }
    const id = query.get('id');
    if (id !== null) {
      response.redirect(303, `/sagas/${encodeURIComponent(id)}`);
      return;
    }
    const endpoints = endpointChoices(page.user.scope, this.config.filters.endpoints);
    const translated = apiQuery(query, endpoints);
    if (!translated.ok) {
      const body = searchPage(query, translated.message, undefined, undefined, endpoints);
      page.show(400, 'Find', body);
      return;
    }
    const answer =
      translated.query.size === 0
        ? undefined
        : await this.api.search(page.user.token, translated.query);
    if (answer && page.signedOut(answer)) return;
    // Keyset pages go forward only: the cursors this person came by ride along in `back`
    // ('-' = the first page), so Previous is the last of them.
    const back = (query.get('back') ?? '').split(',').filter((c) => c !== '');
    let next: string | undefined;
    if (answer?.ok && answer.body.nextCursor !== undefined) {
      const following = new URLSearchParams(query);
      following.set('cursor', answer.body.nextCursor);
      following.set('back', [...back, query.get('cursor') ?? '-'].join(','));
      next = `/sagas?${following.toString()}`;
    }
    let previous: string | undefined;
    if (back.length > 0) {
      const preceding = new URLSearchParams(query);
      const cursor = back.at(-1);
      if (cursor === '-' || cursor === undefined) preceding.delete('cursor');
      else preceding.set('cursor', cursor);
      if (back.length > 1) preceding.set('back', back.slice(0, -1).join(','));
      else preceding.delete('back');
      previous = `/sagas?${preceding.toString()}`;
    }
    page.show(
      answer && !answer.ok ? answer.status : 200,
      'Find',
      searchPage(query, answer, next, previous, endpoints),
    );
  }

  @Get(':id')
  async detail(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
    @Query('after') after?: string,
  ): Promise<void> {
    const page = this.pages.signedIn(request, response);
    if (!page) return;
    const answer = await this.api.detail(page.user.token, id);
    if (!page.answered(answer, 'Saga')) return;
    const since = after !== undefined && /^\d{1,9}$/.test(after) ? Number(after) : undefined;
    const progress =
      since === undefined
        ? undefined
        : // The page renders its own summary: the progress box's out-of-band copy would be a second.
          progressFragment(id, since, 0, answer, MAX_POLLS, false);
    page.show(200, `Saga ${id}`, detailPage(answer.body, page.user, progress));
  }

  @Get(':id/progress')
  async progress(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
    @Query('after') after: string,
    @Query('polls') polls: string,
  ): Promise<void> {
    const page = this.pages.signedIn(request, response);
    if (!page) return;
    const answer = await this.api.detail(page.user.token, id);
    const since = /^\d{1,9}$/.test(after ?? '') ? Number(after) : 0;
    const count = /^\d{1,4}$/.test(polls ?? '') ? Number(polls) : MAX_POLLS;
    send(response, 200, progressFragment(id, since, count, answer, MAX_POLLS));
  }

  @Get(':id/actions/:action')
  async confirm(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
    @Param('action') action: string,
  ): Promise<void> {
    const page = this.pages.signedIn(request, response);
    if (!page) return;
    const answer = await this.api.detail(page.user.token, id);
    if (!page.answered(answer, 'Confirm') || !offered(page, answer.body, action)) return;
    const body = confirmPage(answer.body.saga, action, page.session.csrf);
    page.show(200, `Confirm ${action}`, body);
  }

  @Post(':id/actions/:action')
  async act(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
    @Param('action') action: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const page = this.pages.signedIn(request, response);
    if (!page) return;
    const reason = typeof body.reason === 'string' ? body.reason : '';
    // The version before the action: the result page polls until the saga moves past it.
    const before = await this.api.detail(page.user.token, id);
    if (!page.answered(before, 'Confirm') || !offered(page, before.body, action)) return;
    const answer = await this.api.act(page.user.token, id, action, reason);
    if (page.signedOut(answer)) return;
    if (!answer.ok) {
      const again = confirmPage(before.body.saga, action, page.session.csrf, answer, reason);
      page.show(answer.status, `Confirm ${action}`, again);
      return;
    }
    response.setHeader('X-Console-Notice', acceptedNotice(answer.body));
    response.redirect(303, `${sagaPath(id)}?after=${before.body.saga.version}`);
  }
}
