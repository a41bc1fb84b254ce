import { Body, Controller, Get, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { AdminApiClient } from '../../application/admin-api.client';
import { CONSOLE_CONFIG, type ConsoleConfig } from '../../config';
import { CASE_STATUSES, casePage, casePath, caseRefusal, casesPage } from './cases';
import { type ConsolePage, ConsolePages } from './console-page';
import { endpointChoices, parseMajor } from './filters';
import { currencyExponent } from './format';
import { errorPage } from './pages';
import type { ConsoleRequest } from './security';

/**
 * Cases (a saga the gateway's evidence could not settle): the list, one case, and its steps — a
 * proposal by one person, approved or rejected by another (the API enforces the four eyes).
 */
@Controller('cases')
export class CasesController {
  constructor(
    private readonly api: AdminApiClient,
    private readonly pages: ConsolePages,
    @Inject(CONSOLE_CONFIG) private readonly config: ConsoleConfig,
  ) {}

  @Get()
  async cases(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Query('status') status?: string,
    @Query('endpoint') endpoint?: string,
  ): Promise<void> {
    const page = this.pages.signedIn(request, response);
    if (!page) return;
    const wanted = status === undefined || status === '' ? undefined : status;
    if (wanted !== undefined && !(CASE_STATUSES as readonly string[]).includes(wanted)) {
      const said = `Status “${wanted}” is not a case status: choose one of ${CASE_STATUSES.join(', ')}.`;
      page.refuse(400, 'Cases', 'FILTER_REFUSED', said);
      return;
    }
    const answer = await this.api.cases(page.user.token, wanted);
    if (!page.answered(answer, 'Cases')) return;
    const endpoints =
      endpointChoices(page.user.scope, this.config.filters.endpoints) ??
      [...new Set(answer.body.map((c) => c.endpointId))].sort();
    const merchant = endpoint === undefined || endpoint === '' ? undefined : endpoint;
    if (merchant !== undefined && !endpoints.includes(merchant) && !/^\d{1,19}$/.test(merchant)) {
      const said = `Endpoint “${merchant}” is not an endpoint id (digits).`;
      page.refuse(400, 'Cases', 'FILTER_REFUSED', said);
      return;
    }
    const filters = {
      ...(wanted ? { status: wanted } : {}),
      ...(merchant ? { endpoint: merchant } : {}),
    };
    page.show(200, 'Cases', casesPage(answer.body, filters, endpoints));
  }

  @Get(':id')
  async showCase(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
  ): Promise<void> {
    const page = this.pages.signedIn(request, response);
    if (!page) return;
    page.render(await this.api.case(page.user.token, id), `Case ${id}`, (found) =>
      casePage(found, page.user, page.session.csrf),
    );
  }

  @Post(':id/:step')
  async caseStep(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
    @Param('step') step: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const page = this.pages.signedIn(request, response);
    if (!page) return;
    const { token } = page.user;
    const text = (name: string) => (typeof body[name] === 'string' ? body[name].trim() : '');
    const reason = text('reason');
    let answer;
    if (step === 'propose') {
      const decision = text('decision');
      if (decision === 'done') {
        const currency = text('currency');
        const minor = parseMajor(text('amount'), currencyExponent(currency));
        if (minor === undefined || currency === '') {
          await this.caseAgain(page, id, 400, {
            ok: false,
            status: 400,
            code: 'AMOUNT_REFUSED',
            message: `“${text('amount')}” is not an amount in ${currency || 'the case’s currency'} (digits, at most ${currencyExponent(currency)} after the point).`,
          });
          return;
        }
        const amountWhy = text('amountWhy');
        answer = await this.api.proposeCase(token, id, {
          decision: 'done',
          amount: { minor, currency },
          ...(amountWhy === '' ? {} : { amountWhy }),
          reason,
        });
      } else if (decision === 'not-done' || decision === 'refresh-and-wait') {
        answer = await this.api.proposeCase(token, id, { decision, reason });
      } else {
        await this.caseAgain(page, id, 400, {
          ok: false,
          status: 400,
          code: 'DECISION_REFUSED',
          message: `“${decision}” is not a decision: choose done, not-done or refresh-and-wait.`,
        });
        return;
      }
    } else if (step === 'approve') {
      answer = await this.api.approveCase(token, id);
    } else if (step === 'reject-proposal') {
      answer = await this.api.rejectCaseProposal(token, id, reason);
    } else {
      page.refuse(404, 'Not found', 'NOT_FOUND', `a case has no step “${step}”`);
      return;
    }
    if (page.signedOut(answer)) return;
    if (!answer.ok) {
      await this.caseAgain(page, id, answer.status, caseRefusal(answer));
      return;
    }
    response.redirect(303, casePath(id));
  }

  /** The case page again with the API's refusal (or the console's) in plain words. */
  private async caseAgain(
    page: ConsolePage,
    id: string,
    status: number,
    refusal: Parameters<typeof casePage>[3],
  ): Promise<void> {
    const again = await this.api.case(page.user.token, id);
    const body = again.ok
      ? casePage(again.body, page.user, page.session.csrf, refusal)
      : errorPage(again);
    page.show(status, `Case ${id}`, body);
  }
}
