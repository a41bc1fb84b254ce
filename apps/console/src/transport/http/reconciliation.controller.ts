import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { AdminApiClient } from '../../application/admin-api.client';
import { ConsolePages } from './console-page';
import { runPage, runsPage } from './reconciliation';
import type { ConsoleRequest } from './security';

/** Reconciliation runs and one run's findings, as the admin API reports them. */
@Controller('reconciliation')
export class ReconciliationController {
  constructor(
    private readonly api: AdminApiClient,
    private readonly pages: ConsolePages,
  ) {}

  @Get()
  async runs(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    const page = this.pages.signedIn(request, response);
    if (!page) return;
    page.render(await this.api.reconciliationRuns(page.user.token), 'Reconciliation', runsPage);
  }

  @Get(':id')
  async run(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
  ): Promise<void> {
    const page = this.pages.signedIn(request, response);
    if (!page) return;
    page.render(
      await this.api.reconciliationRun(page.user.token, id),
      'Reconciliation run',
      runPage,
    );
  }
}
