import { Body, Controller, Get, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { CONSOLE_CONFIG, type ConsoleConfig } from '../../config';
import { AdminApiClient, type ApiAnswer } from '../../application/admin-api.client';
import {
  type Session,
  SessionRevocations,
  SessionSealer,
  type SignedInUser,
  signInKeys,
  SignInThrottle,
} from '../../application/session';
import type { Html } from './html';
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
import { dayCloseCsv, dayClosePage, isDay, yesterday } from './day-close';
import { currencyExponent } from './format';
import { runPage, runsPage } from './reconciliation';
import { type ConsoleRequest, SESSION_COOKIE, type SessionCookie, writeSession } from './security';

/** How long a page polls for an action's result (seconds, one poll a second). */
const MAX_POLLS = 120;

/** The saga's detail lists the action among those it offers now to this token. */
function offers(detail: { actions: readonly string[] }, action: string): boolean {
  return detail.actions.includes(action);
}

function send(response: Response, status: number, page: Html): void {
  response.status(status).type('html').send(page.text);
}

function sessionOf(request: ConsoleRequest): Session {
  const session = request.consoleSession;
  if (session === undefined) throw new Error('consoleSecurity middleware did not run');
  return session;
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
    const session = sessionOf(request);
    const user = this.signedIn(session, response);
    if (!user) return;
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(raw)) {
      if (typeof value === 'string' && value.trim() !== '') query.set(key, value.trim());
    }
    const id = query.get('id');
    if (id !== null) {
      response.redirect(303, `/sagas/${encodeURIComponent(id)}`);
      return;
    }
    const endpoints = endpointChoices(user.scope, this.config.filters.endpoints);
    const translated = apiQuery(query, endpoints);
    if (!translated.ok) {
      const page = searchPage(query, translated.message, undefined, undefined, endpoints);
      send(response, 400, layout('Find', page, session));
      return;
    }
    const answer =
      translated.query.size === 0 ? undefined : await this.api.search(user.token, translated.query);
    if (answer && this.signedOut(answer, response)) return;
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
    send(
      response,
      answer && !answer.ok ? answer.status : 200,
      layout('Find', searchPage(query, answer, next, previous, endpoints), session),
    );
  }

  @Get('sagas/:id')
  async detail(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
    @Query('after') after?: string,
  ): Promise<void> {
    const session = sessionOf(request);
    const user = this.signedIn(session, response);
    if (!user) return;
    const answer = await this.api.detail(user.token, id);
    if (this.signedOut(answer, response)) return;
    if (!answer.ok) {
      send(response, answer.status, layout('Saga', errorPage(answer), session));
      return;
    }
    const since = after !== undefined && /^\d{1,9}$/.test(after) ? Number(after) : undefined;
    const progress =
      since === undefined
        ? undefined
        : // The page renders its own summary: the progress box's out-of-band copy would be a second.
          progressFragment(id, since, 0, answer, MAX_POLLS, false);
    send(response, 200, layout(`Saga ${id}`, detailPage(answer.body, user, progress), session));
  }

  @Get('sagas/:id/progress')
  async progress(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
    @Query('after') after: string,
    @Query('polls') polls: string,
  ): Promise<void> {
    const user = this.signedIn(sessionOf(request), response);
    if (!user) return;
    const answer = await this.api.detail(user.token, id);
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
    const session = sessionOf(request);
    const user = this.signedIn(session, response);
    if (!user) return;
    const answer = await this.api.detail(user.token, id);
    if (this.signedOut(answer, response)) return;
    if (!answer.ok) {
      send(response, answer.status, layout('Confirm', errorPage(answer), session));
      return;
    }
    if (!offers(answer.body, action)) {
      const page = actionNotOfferedPage(answer.body.saga, action, answer.body.actions);
      send(response, 404, layout('Not found', page, session));
      return;
    }
    send(
      response,
      200,
      layout(`Confirm ${action}`, confirmPage(answer.body.saga, action, session.csrf), session),
    );
  }

  @Post('sagas/:id/actions/:action')
  async act(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
    @Param('action') action: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const session = sessionOf(request);
    const user = this.signedIn(session, response);
    if (!user) return;
    const reason = typeof body.reason === 'string' ? body.reason : '';
    // The version before the action: the result page polls until the saga moves past it.
    const before = await this.api.detail(user.token, id);
    if (this.signedOut(before, response)) return;
    if (!before.ok) {
      send(response, before.status, layout('Confirm', errorPage(before), session));
      return;
    }
    if (!offers(before.body, action)) {
      const page = actionNotOfferedPage(before.body.saga, action, before.body.actions);
      send(response, 404, layout('Not found', page, session));
      return;
    }
    const answer = await this.api.act(user.token, id, action, reason);
    if (this.signedOut(answer, response)) return;
    if (!answer.ok) {
      const page = confirmPage(before.body.saga, action, session.csrf, answer, reason);
      send(response, answer.status, layout(`Confirm ${action}`, page, session));
      return;
    }
    response.setHeader('X-Console-Notice', acceptedNotice(answer.body));
    response.redirect(303, `${sagaPath(id)}?after=${before.body.saga.version}`);
  }

  @Get('reconciliation')
  async runs(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    const session = sessionOf(request);
    const user = this.signedIn(session, response);
    if (!user) return;
    const answer = await this.api.reconciliationRuns(user.token);
    if (this.signedOut(answer, response)) return;
    const page = answer.ok ? runsPage(answer.body) : errorPage(answer);
    send(response, answer.status, layout('Reconciliation', page, session));
  }

  @Get('reconciliation/:id')
  async run(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
  ): Promise<void> {
    const session = sessionOf(request);
    const user = this.signedIn(session, response);
    if (!user) return;
    const answer = await this.api.reconciliationRun(user.token, id);
    if (this.signedOut(answer, response)) return;
    const page = answer.ok ? runPage(answer.body) : errorPage(answer);
    send(response, answer.status, layout('Reconciliation run', page, session));
  }

  @Get('dead-letters')
  async deadLetters(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Query('replayed') replayed?: string,
    @Query('audit') audit?: string,
  ): Promise<void> {
    const session = sessionOf(request);
    const user = this.signedIn(session, response);
    if (!user) return;
    const answer = await this.api.deadLetters(user.token);
    if (this.signedOut(answer, response)) return;
    const notice =
      replayed !== undefined && audit !== undefined ? { at: replayed, audit } : undefined;
    const page = answer.ok ? deadLettersPage(answer.body, user, notice) : errorPage(answer);
    send(response, answer.status, layout('Dead letters', page, session));
  }

  @Get('dead-letters/replay')
  confirmReplay(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Query('at') at?: string,
  ): void {
    const session = sessionOf(request);
    if (!this.signedIn(session, response)) return;
    send(
      response,
      200,
      layout('Confirm replay', replayConfirmPage(at ?? '', session.csrf), session),
    );
  }

  @Post('dead-letters/replay')
  async replay(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const session = sessionOf(request);
    const user = this.signedIn(session, response);
    if (!user) return;
    const at = typeof body.at === 'string' ? body.at : '';
    const reason = typeof body.reason === 'string' ? body.reason : '';
    const answer = await this.api.replayDeadLetter(user.token, at, reason);
    if (this.signedOut(answer, response)) return;
    if (!answer.ok) {
      const page = replayConfirmPage(at, session.csrf, answer, reason);
      send(response, answer.status, layout('Confirm replay', page, session));
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
    const session = sessionOf(request);
    const user = this.signedIn(session, response);
    if (!user) return;
    const wanted = status === undefined || status === '' ? undefined : status;
    if (wanted !== undefined && !(CASE_STATUSES as readonly string[]).includes(wanted)) {
      const said = `Status “${wanted}” is not a case status: choose one of ${CASE_STATUSES.join(', ')}.`;
      send(
        response,
        400,
        layout(
          'Cases',
          errorPage({ ok: false, status: 400, code: 'FILTER_REFUSED', message: said }),
          session,
        ),
      );
      return;
    }
    const answer = await this.api.cases(user.token, wanted);
    if (this.signedOut(answer, response)) return;
    if (!answer.ok) {
      send(response, answer.status, layout('Cases', errorPage(answer), session));
      return;
    }
    const endpoints =
      endpointChoices(user.scope, this.config.filters.endpoints) ??
      [...new Set(answer.body.map((c) => c.endpointId))].sort();
    const merchant = endpoint === undefined || endpoint === '' ? undefined : endpoint;
    if (merchant !== undefined && !endpoints.includes(merchant) && !/^\d{1,19}$/.test(merchant)) {
      const said = `Endpoint “${merchant}” is not an endpoint id (digits).`;
      send(
        response,
        400,
        layout(
          'Cases',
          errorPage({ ok: false, status: 400, code: 'FILTER_REFUSED', message: said }),
          session,
        ),
      );
      return;
    }
    const filters = {
      ...(wanted ? { status: wanted } : {}),
      ...(merchant ? { endpoint: merchant } : {}),
    };
    send(response, 200, layout('Cases', casesPage(answer.body, filters, endpoints), session));
  }

  @Get('cases/:id')
  async showCase(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
  ): Promise<void> {
    const session = sessionOf(request);
    const user = this.signedIn(session, response);
    if (!user) return;
    const answer = await this.api.case(user.token, id);
    if (this.signedOut(answer, response)) return;
    const page = answer.ok ? casePage(answer.body, user, session.csrf) : errorPage(answer);
    send(response, answer.status, layout(`Case ${id}`, page, session));
  }

  @Post('cases/:id/:step')
  async caseStep(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Param('id') id: string,
    @Param('step') step: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const session = sessionOf(request);
    const user = this.signedIn(session, response);
    if (!user) return;
    const text = (name: string) => (typeof body[name] === 'string' ? body[name].trim() : '');
    const reason = text('reason');
    let answer;
    if (step === 'propose') {
      const decision = text('decision');
      if (decision === 'done') {
        const currency = text('currency');
        const minor = parseMajor(text('amount'), currencyExponent(currency));
        if (minor === undefined || currency === '') {
          await this.caseAgain(response, session, user, id, 400, {
            ok: false,
            status: 400,
            code: 'AMOUNT_REFUSED',
            message: `“${text('amount')}” is not an amount in ${currency || 'the case’s currency'} (digits, at most ${currencyExponent(currency)} after the point).`,
          });
          return;
        }
        const amountWhy = text('amountWhy');
        answer = await this.api.proposeCase(user.token, id, {
          decision: 'done',
          amount: { minor, currency },
          ...(amountWhy === '' ? {} : { amountWhy }),
          reason,
        });
      } else if (decision === 'not-done' || decision === 'refresh-and-wait') {
        answer = await this.api.proposeCase(user.token, id, { decision, reason });
      } else {
        await this.caseAgain(response, session, user, id, 400, {
          ok: false,
          status: 400,
          code: 'DECISION_REFUSED',
          message: `“${decision}” is not a decision: choose done, not-done or refresh-and-wait.`,
        });
        return;
      }
    } else if (step === 'approve') {
      answer = await this.api.approveCase(user.token, id);
    } else if (step === 'reject-proposal') {
      answer = await this.api.rejectCaseProposal(user.token, id, reason);
    } else {
      send(
        response,
        404,
        layout(
          'Not found',
          errorPage({
            ok: false,
            status: 404,
            code: 'NOT_FOUND',
            message: `a case has no step “${step}”`,
          }),
          session,
        ),
      );
      return;
    }
    if (this.signedOut(answer, response)) return;
    if (!answer.ok) {
      await this.caseAgain(response, session, user, id, answer.status, caseRefusal(answer));
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
    const session = sessionOf(request);
    const user = this.signedIn(session, response);
    if (!user) return;
    const chosen = this.dayChoice(day, endpoint);
    if (typeof chosen === 'string') {
      this.dayRefused(response, session, user, day, endpoint, chosen);
      return;
    }
    const answer = await this.api.day(user.token, chosen.day, chosen.endpoint);
    if (this.signedOut(answer, response)) return;
    const notice =
      closed !== undefined && /^\d{1,6}$/.test(closed)
        ? `Closed: ${closed} merchant(s).`
        : undefined;
    const page = dayClosePage(
      chosen.day,
      chosen.endpoint,
      answer.ok ? answer.body : answer,
      user,
      session.csrf,
      notice,
    );
    send(response, answer.status, layout(`Day close ${chosen.day}`, page, session));
  }

  @Get('day-close/csv')
  async dayCloseCsv(
    @Req() request: ConsoleRequest,
    @Res() response: Response,
    @Query('day') day?: string,
    @Query('endpoint') endpoint?: string,
  ): Promise<void> {
    const session = sessionOf(request);
    const user = this.signedIn(session, response);
    if (!user) return;
    const chosen = this.dayChoice(day, endpoint);
    if (typeof chosen === 'string') {
      send(
        response,
        400,
        layout(
          'Day close',
          errorPage({ ok: false, status: 400, code: 'FILTER_REFUSED', message: chosen }),
          session,
        ),
      );
      return;
    }
    const answer = await this.api.day(user.token, chosen.day, chosen.endpoint);
    if (this.signedOut(answer, response)) return;
    if (!answer.ok) {
      send(response, answer.status, layout('Day close', errorPage(answer), session));
      return;
    }
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
    const session = sessionOf(request);
    const user = this.signedIn(session, response);
    if (!user) return;
    const day = typeof body.day === 'string' ? body.day : undefined;
    const endpoint = typeof body.endpoint === 'string' ? body.endpoint : undefined;
    const chosen = this.dayChoice(day, endpoint);
    if (typeof chosen === 'string') {
      this.dayRefused(response, session, user, day, endpoint, chosen);
      return;
    }
    const answer = await this.api.closeDay(user.token, chosen.day, chosen.endpoint);
    if (this.signedOut(answer, response)) return;
    if (!answer.ok) {
      const page = dayClosePage(chosen.day, chosen.endpoint, answer, user, session.csrf);
      send(response, answer.status, layout('Day close', page, session));
      return;
    }
    const query = new URLSearchParams({
      day: chosen.day,
      ...(chosen.endpoint ? { endpoint: chosen.endpoint } : {}),
      closed: String(answer.body.length),
    });
    response.redirect(303, `/day-close?${query.toString()}`);
  }

  /** The day and merchant of a day-close page, or what is wrong with them in words. */
  /** The day-close page again, the refused day or endpoint said in words (400). */
  private dayRefused(
    response: Response,
    session: Session,
    user: SignedInUser,
    day: string | undefined,
    endpoint: string | undefined,
    message: string,
  ): void {
    const refused = { ok: false as const, status: 400, code: 'FILTER_REFUSED', message };
    const page = dayClosePage(day ?? '', endpoint, refused, user, session.csrf);
    send(response, 400, layout('Day close', page, session));
  }

  private dayChoice(
    day: string | undefined,
    endpoint: string | undefined,
  ): { day: string; endpoint?: string } | string {
    const d = day === undefined || day.trim() === '' ? yesterday(new Date()) : day.trim();
    if (!isDay(d)) return `Day “${d}” is not a day (YYYY-MM-DD).`;
    const e = endpoint === undefined || endpoint.trim() === '' ? undefined : endpoint.trim();
    if (e !== undefined && !/^\d{1,19}$/.test(e))
      return `Endpoint “${e}” is not an endpoint id (digits).`;
    return { day: d, ...(e === undefined ? {} : { endpoint: e }) };
  }

  /** The case page again with the API's refusal (or the console's) in plain words. */
  private async caseAgain(
    response: Response,
    session: Session,
    user: SignedInUser,
    id: string,
    status: number,
    refusal: Parameters<typeof casePage>[3],
  ): Promise<void> {
    const again = await this.api.case(user.token, id);
    const page = again.ok ? casePage(again.body, user, session.csrf, refusal) : errorPage(again);
    send(response, status, layout(`Case ${id}`, page, session));
  }

  /** The signed-in person, or a redirect to the sign-in page. */
  private signedIn(session: Session, response: Response): SignedInUser | undefined {
    if (session.user) return session.user;
    response.redirect(303, '/sign-in');
    return undefined;
  }

  /** A token the API no longer knows (revoked): the session ends and the person signs in again. */
  private signedOut(answer: ApiAnswer<unknown>, response: Response): boolean {
    if (answer.ok || answer.status !== 401) return false;
    writeSession(response, this.cookie, this.sealer, this.sealer.fresh());
    response.redirect(303, '/sign-in');
    return true;
  }
}
