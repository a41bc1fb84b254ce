import { Inject, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import type { ApiAnswer } from '../../application/admin-api.client';
import { type Session, SessionSealer, type SignedInUser } from '../../application/session';
import type { Html } from './html';
import { errorPage, layout } from './pages';
import { type ConsoleRequest, SESSION_COOKIE, type SessionCookie, writeSession } from './security';

export function send(response: Response, status: number, page: Html): void {
  response.status(status).type('html').send(page.text);
}

export function sessionOf(request: ConsoleRequest): Session {
  const session = request.consoleSession;
  if (session === undefined) throw new Error('consoleSecurity middleware did not run');
  return session;
}

/**
 * One request to a signed-in page, with the ways every such page answers: rendered in the layout,
 * the console's or the API's refusal in words, the sign-in page once the API no longer knows the
 * token. (The CSRF check of a POST runs before, in CsrfGuard.)
 */
export class ConsolePage {
  private constructor(
    readonly response: Response,
    readonly session: Session,
    readonly user: SignedInUser,
    private readonly endSession: () => void,
  ) {}

  /**
   * The signed-in person's page, or a redirect to the sign-in page (undefined: the route is done).
   * `endSession` writes a fresh, anonymous session cookie.
   */
  static signedIn(
    request: ConsoleRequest,
    response: Response,
    endSession: () => void,
  ): ConsolePage | undefined {
    const session = sessionOf(request);
    if (session.user) return new ConsolePage(response, session, session.user, endSession);
    response.redirect(303, '/sign-in');
    return undefined;
  }

  /** `body` in the layout under `title`, with `status`. */
  show(status: number, title: string, body: Html): void {
    send(this.response, status, layout(title, body, this.session));
  }

  /** The console's own refusal (of a filter, a step, an amount) in words, as the API's would be. */
  refuse(status: number, title: string, code: string, message: string): void {
    this.show(status, title, errorPage({ ok: false, status, code, message }));
  }

  /** A token the API no longer knows (revoked): the session ends and the person signs in again. */
  signedOut(answer: ApiAnswer<unknown>): boolean {
    if (answer.ok || answer.status !== 401) return false;
    this.endSession();
    this.response.redirect(303, '/sign-in');
    return true;
  }

  /** The API's answer rendered under `title` (200), or the page answered as `answered` does. */
  render<T>(answer: ApiAnswer<T>, title: string, body: (value: T) => Html): void {
    if (this.answered(answer, title)) this.show(200, title, body(answer.body));
  }

  /**
   * The API answered: otherwise the page has been answered already (its refusal under `title`
   * with the API's status, or the sign-in page if the token is no longer known).
   */
  answered<T>(answer: ApiAnswer<T>, title: string): answer is Extract<ApiAnswer<T>, { ok: true }> {
    if (this.signedOut(answer)) return false;
    if (answer.ok) return true;
    this.show(answer.status, title, errorPage(answer));
    return false;
  }
}

/**
 * What every signed-in route starts with, for the console's controllers: the person's page, or
 * the sign-in page; and the end of a session (a fresh, anonymous cookie).
 */
@Injectable()
export class ConsolePages {
  constructor(
    private readonly sealer: SessionSealer,
    @Inject(SESSION_COOKIE) private readonly cookie: SessionCookie,
  ) {}

  /** The signed-in person's page, or a redirect to the sign-in page (undefined: the route is done). */
  signedIn(request: ConsoleRequest, response: Response): ConsolePage | undefined {
    return ConsolePage.signedIn(request, response, () => this.endSession(response));
  }

  /** Writes a fresh, anonymous session cookie. */
  endSession(response: Response): void {
    writeSession(response, this.cookie, this.sealer, this.sealer.fresh());
  }
}
