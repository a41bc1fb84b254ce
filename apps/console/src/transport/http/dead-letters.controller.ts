import { Body, Controller, Get, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { AdminApiClient } from '../../application/admin-api.client';
import { ConsolePages } from './console-page';
import { deadLettersPage, replayConfirmPage } from './dead-letters';
import type { ConsoleRequest } from './security';

/** The dead-letter list and a replay (confirmed, with a reason; the API audits it). */
@Controller('dead-letters')
export class DeadLettersController {
  constructor(
    private readonly api: AdminApiClient,
    private readonly pages: ConsolePages,
  ) {}

  @Get()
  async deadLetters(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Query('replayed') replayed?: string,
    @Query('audit') audit?: string,
  ): Promise<void> {
    const page = this.pages.signedIn(request, response);
    if (!page) return;
    const notice =
      replayed !== undefined && audit !== undefined ? { at: replayed, audit } : undefined;
    page.render(await this.api.deadLetters(page.user.token), 'Dead letters', (letters) =>
      deadLettersPage(letters, page.user, notice),
    );
  }

  @Get('replay')
  confirmReplay(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Query('at') at?: string,
  ): void {
    const page = this.pages.signedIn(request, response);
    if (!page) return;
    page.show(200, 'Confirm replay', replayConfirmPage(at ?? '', page.session.csrf));
  }

  @Post('replay')
  async replay(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const page = this.pages.signedIn(request, response);
    if (!page) return;
    const at = typeof body.at === 'string' ? body.at : '';
    const reason = typeof body.reason === 'string' ? body.reason : '';
    const answer = await this.api.replayDeadLetter(page.user.token, at, reason);
    if (page.signedOut(answer)) return;
    if (!answer.ok) {
      const again = replayConfirmPage(at, page.session.csrf, answer, reason);
      page.show(answer.status, 'Confirm replay', again);
      return;
    }
    const query = new URLSearchParams({
      replayed: answer.body.deadLetter,
      audit: answer.body.auditId,
    });
    response.redirect(303, `/dead-letters?${query.toString()}`);
  }
}
