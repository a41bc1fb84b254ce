import { Body, Controller, Get, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { AdminApiClient } from '../../application/admin-api.client';
import { type ConsolePage, ConsolePages } from './console-page';
import { dayChoice, dayCloseCsv, dayClosePage } from './day-close';
import type { ConsoleRequest } from './security';

/** Finance's day: its report per merchant (a page and a CSV) and closing it. */
@Controller('day-close')
export class DayCloseController {
  constructor(
    private readonly api: AdminApiClient,
    private readonly pages: ConsolePages,
  ) {}

  @Get()
  async dayClose(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Query('day') day?: string,
    @Query('endpoint') endpoint?: string,
    @Query('closed') closed?: string,
  ): Promise<void> {
    const asked = this.dayPage(request, response, day, endpoint);
    if (!asked) return;
    const { page, chosen } = asked;
    const answer = await this.api.day(page.user.token, chosen.day, chosen.endpoint);
    if (page.signedOut(answer)) return;
    const notice =
      closed !== undefined && /^\d{1,6}$/.test(closed)
        ? `Closed: ${closed} merchant(s).`
        : undefined;
    const body = dayClosePage(
      chosen.day,
      chosen.endpoint,
      answer.ok ? answer.body : answer,
      page.user,
      page.session.csrf,
      notice,
    );
    page.show(answer.status, `Day close ${chosen.day}`, body);
  }

  @Get('csv')
  async dayCloseCsv(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Query('day') day?: string,
    @Query('endpoint') endpoint?: string,
  ): Promise<void> {
    const asked = this.dayPage(request, response, day, endpoint, 'plain');
    if (!asked) return;
    const { page, chosen } = asked;
    const answer = await this.api.day(page.user.token, chosen.day, chosen.endpoint);
    if (!page.answered(answer, 'Day close')) return;
    const name = `day-close-${chosen.day}${chosen.endpoint ? `-${chosen.endpoint}` : ''}.csv`;
    response
      .status(200)
      .type('text/csv; charset=utf-8')
      .setHeader('Content-Disposition', `attachment; filename="${name}"`)
      .send(dayCloseCsv(answer.body));
  }

  @Post()
  async closeDay(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const day = typeof body.day === 'string' ? body.day : undefined;
    const endpoint = typeof body.endpoint === 'string' ? body.endpoint : undefined;
    const asked = this.dayPage(request, response, day, endpoint);
    if (!asked) return;
    const { page, chosen } = asked;
    const answer = await this.api.closeDay(page.user.token, chosen.day, chosen.endpoint);
    if (page.signedOut(answer)) return;
    if (!answer.ok) {
      const again = dayClosePage(chosen.day, chosen.endpoint, answer, page.user, page.session.csrf);
      page.show(answer.status, 'Day close', again);
      return;
    }
    const query = new URLSearchParams({
      day: chosen.day,
      ...(chosen.endpoint ? { endpoint: chosen.endpoint } : {}),
      closed: String(answer.body.length),
    });
    response.redirect(303, `/day-close?${query.toString()}`);
  }

  /**
   * The signed-in page and the day and merchant it asks for; undefined when the route is done:
   * the sign-in page, or the refused day or endpoint said in words (400) on the day-close page
   * (`plain`: on the error page, for the CSV).
   */
  private dayPage(
    request: ConsoleRequest,
    response: Response,
    day: string | undefined,
    endpoint: string | undefined,
    refusal: 'day-close' | 'plain' = 'day-close',
  ): { page: ConsolePage; chosen: { day: string; endpoint?: string } } | undefined {
    const page = this.pages.signedIn(request, response);
    if (!page) return undefined;
    const chosen = dayChoice(day, endpoint);
    if (typeof chosen !== 'string') return { page, chosen };
    if (refusal === 'plain') {
      page.refuse(400, 'Day close', 'FILTER_REFUSED', chosen);
      return undefined;
    }
    const refused = { ok: false as const, status: 400, code: 'FILTER_REFUSED', message: chosen };
    page.show(
      400,
      'Day close',
      dayClosePage(day ?? '', endpoint, refused, page.user, page.session.csrf),
    );
    return undefined;
  }
}
