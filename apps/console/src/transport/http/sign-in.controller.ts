import { Body, Controller, Get, Inject, Post, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { AdminApiClient } from '../../application/admin-api.client';
import {
  SessionRevocations,
  SessionSealer,
  type SignedInUser,
  signInKeys,
  SignInThrottle,
} from '../../application/session';
import { ConsolePages, send, sessionOf } from './console-page';
import { layout, signInPage } from './pages';
import { type ConsoleRequest, SESSION_COOKIE, type SessionCookie, writeSession } from './security';

/** Signing in (a pasted admin token, throttled) and out; the home page sends to one or the other. */
@Controller()
export class SignInController {
  constructor(
    private readonly api: AdminApiClient,
    private readonly sealer: SessionSealer,
    @Inject(SESSION_COOKIE) private readonly cookie: SessionCookie,
    private readonly revocations: SessionRevocations,
    private readonly throttle: SignInThrottle,
    private readonly pages: ConsolePages,
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
    this.pages.endSession(response);
    response.redirect(303, '/sign-in');
  }
}
