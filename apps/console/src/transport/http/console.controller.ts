import { Body, Controller, Get, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { CONSOLE_CONFIG, type ConsoleConfig } from '../../config';
import { AdminApiClient, type SagaDetail } from '../../application/admin-api.client';
import {
  SessionRevocations,
  SessionSealer,
  type SignedInUser,
  signInKeys,
  SignInThrottle,
} from '../../application/session';
import {
  actionNotOfferedPage,
  acceptedNotice,
  confirmPage,
  detailPage,
  errorPage,
  layout,
  progressFragment,
  sagaPath,
  searchPage,
  signInPage,
} from './pages';
import { deadLettersPage, replayConfirmPage } from './dead-letters';
import { apiQuery, endpointChoices, parseMajor } from './filters';
import { CASE_STATUSES, casePage, casePath, caseRefusal, casesPage } from './cases';
import { dayChoice, dayCloseCsv, dayClosePage } from './day-close';
import { ConsolePage, send, sessionOf } from './console-page';
import { currencyExponent } from './format';
import { runPage, runsPage } from './reconciliation';
import { type ConsoleRequest, SESSION_COOKIE, type SessionCookie, writeSession } from './security';

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

/**
 * The console's pages: each one a call of the admin API with the signed-in person's token, its
 * answer rendered (errors as the API states them). No rule of the payment domain lives here.
 */
@Controller()
export class ConsoleController {
  constructor(
    private readonly api: AdminApiClient,
    private readonly sealer: SessionSealer,
    @Inject(SESSION_COOKIE) private readonly cookie: SessionCookie,
    private readonly revocations: SessionRevocations,
    private readonly throttle: SignInThrottle,
    @Inject(CONSOLE_CONFIG) private readonly config: ConsoleConfig,
  ) {}

  @Get()
  home(@Req() request: ConsoleRequest, @Res() response: Response): void {
    response.redirect(303, sessionOf(request).user ? '/sagas' : '/sign-in');
  }

  @Get('sign-in')
  signInForm(@Req() request: ConsoleRequest, @Res() response: Response): void {
    const session = sessionOf(request);
    send(response, 200, layout('Sign in', signInPage(session.csrf), session));
  }

  @Post('sign-in')
  async signIn(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const session = sessionOf(request);
    const token = typeof body.token === 'string' ? body.token.trim() : '';
    if (token === '') {
      send(response, 400, layout('Sign in', signInPage(session.csrf, 'paste a token'), session));
      return;
    }
    // Throttled per client address and per token prefix, before the API is asked.
    const keys = signInKeys(request.ip ?? request.socket.remoteAddress ?? 'unknown', token);
    const wait = this.throttle.retryAfterSeconds(keys);
    if (wait > 0) {
      response.setHeader('Retry-After', String(wait));
      const said = `too many failed sign-ins: try again in ${Math.ceil(wait / 60)} minute(s)`;
      send(response, 429, layout('Sign in', signInPage(session.csrf, said), session));
      return;
    }
    const answer = await this.api.whoami(token);
    if (!answer.ok) {
      if (answer.status === 401 || answer.status === 403) this.throttle.failed(keys);
      send(response, answer.status, layout('Sign in', signInPage(session.csrf, answer), session));
      return;
    }
    this.throttle.succeeded(keys);
    // A new session (new CSRF token) for the signed-in person: nothing of the anonymous one is kept.
    const { name, role, scope } = answer.body;
    const user: SignedInUser = { token, name, role, scope };
    writeSession(response, this.cookie, this.sealer, this.sealer.fresh(user));
    response.redirect(303, '/sagas');
  }

  @Post('sign-out')
  signOut(@Req() request: ConsoleRequest, @Res() response: Response): void {
    // Revoked here, not only replaced: a copy of the cookie taken before sign-out opens no more.
    this.revocations.revoke(sessionOf(request));
    writeSession(response, this.cookie, this.sealer, this.sealer.fresh());
    response.redirect(303, '/sign-in');
  }

  @Get('sagas')
  async search(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Query() raw: Record<string, unknown>,
  ): Promise<void> {
    const page = this.signedIn(request, response);
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

  @Get('sagas/:id')
  async detail(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
    @Query('after') after?: string,
  ): Promise<void> {
    const page = this.signedIn(request, response);
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

  @Get('sagas/:id/progress')
  async progress(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
    @Query('after') after: string,
    @Query('polls') polls: string,
  ): Promise<void> {
    const page = this.signedIn(request, response);
    if (!page) return;
    const answer = await this.api.detail(page.user.token, id);
    const since = /^\d{1,9}$/.test(after ?? '') ? Number(after) : 0;
    const count = /^\d{1,4}$/.test(polls ?? '') ? Number(polls) : MAX_POLLS;
    send(response, 200, progressFragment(id, since, count, answer, MAX_POLLS));
  }

  @Get('sagas/:id/actions/:action')
  async confirm(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
    @Param('action') action: string,
  ): Promise<void> {
    const page = this.signedIn(request, response);
    if (!page) return;
    const answer = await this.api.detail(page.user.token, id);
    if (!page.answered(answer, 'Confirm') || !offered(page, answer.body, action)) return;
    const body = confirmPage(answer.body.saga, action, page.session.csrf);
    page.show(200, `Confirm ${action}`, body);
  }

  @Post('sagas/:id/actions/:action')
  async act(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
    @Param('action') action: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const page = this.signedIn(request, response);
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

  @Get('reconciliation')
  async runs(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    const page = this.signedIn(request, response);
    if (!page) return;
    const answer = await this.api.reconciliationRuns(page.user.token);
    if (!page.answered(answer, 'Reconciliation')) return;
    page.show(200, 'Reconciliation', runsPage(answer.body));
  }

  @Get('reconciliation/:id')
  async run(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
  ): Promise<void> {
    const page = this.signedIn(request, response);
    if (!page) return;
    const answer = await this.api.reconciliationRun(page.user.token, id);
    if (!page.answered(answer, 'Reconciliation run')) return;
    page.show(200, 'Reconciliation run', runPage(answer.body));
  }

  @Get('dead-letters')
  async deadLetters(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Query('replayed') replayed?: string,
    @Query('audit') audit?: string,
  ): Promise<void> {
    const page = this.signedIn(request, response);
    if (!page) return;
    const answer = await this.api.deadLetters(page.user.token);
    if (!page.answered(answer, 'Dead letters')) return;
    const notice =
      replayed !== undefined && audit !== undefined ? { at: replayed, audit } : undefined;
    page.show(200, 'Dead letters', deadLettersPage(answer.body, page.user, notice));
  }

  @Get('dead-letters/replay')
  confirmReplay(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Query('at') at?: string,
  ): void {
    const page = this.signedIn(request, response);
    if (!page) return;
    page.show(200, 'Confirm replay', replayConfirmPage(at ?? '', page.session.csrf));
  }

  @Post('dead-letters/replay')
  async replay(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const page = this.signedIn(request, response);
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

  @Get('cases')
  async cases(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Query('status') status?: string,
    @Query('endpoint') endpoint?: string,
  ): Promise<void> {
    const page = this.signedIn(request, response);
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

  @Get('cases/:id')
  async showCase(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
  ): Promise<void> {
    const page = this.signedIn(request, response);
    if (!page) return;
    const answer = await this.api.case(page.user.token, id);
    if (!page.answered(answer, `Case ${id}`)) return;
    page.show(200, `Case ${id}`, casePage(answer.body, page.user, page.session.csrf));
  }

  @Post('cases/:id/:step')
  async caseStep(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
    @Param('step') step: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const page = this.signedIn(request, response);
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

  @Get('day-close')
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

  @Get('day-close/csv')
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

  @Post('day-close')
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
    const page = this.signedIn(request, response);
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

  /** The signed-in person's page, or a redirect to the sign-in page. */
  private signedIn(request: ConsoleRequest, response: Response): ConsolePage | undefined {
    return ConsolePage.signedIn(request, response, () =>
      writeSession(response, this.cookie, this.sealer, this.sealer.fresh()),
    );
  }
}
