import { timingSafeEqual } from 'node:crypto';
import {
  type CanActivate,
  type ExecutionContext,
  ForbiddenException,
  Injectable,
} from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { Session, SessionRevocations, SessionSealer } from '../../application/session';
import { CSRF_FIELD } from './pages';

/**
 * Every response of the console: scripts and styles from its own origin only (no inline code, no
 * eval), never framed, no referrer (saga ids stay here), no MIME sniffing, nothing cached.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

/** The session cookie's name and attributes (a provider of the console's module). */
export const SESSION_COOKIE = Symbol('SESSION_COOKIE');

export type ConsoleRequest = Request & { consoleSession?: Session };

export interface SessionCookie {
  readonly name: string;
  readonly secure: boolean;
  readonly maxAgeSeconds: number;
}

export function sessionCookie(secure: boolean, maxAgeSeconds: number): SessionCookie {
  // __Host- makes the browser refuse the cookie unless Secure, Path=/ and no Domain.
  return { name: secure ? '__Host-console_session' : 'console_session', secure, maxAgeSeconds };
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function writeSession(
  response: Response,
  cookie: SessionCookie,
  sealer: SessionSealer,
  session: Session,
): void {
  response.setHeader(
    'Set-Cookie',
    `${cookie.name}=${sealer.seal(session)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${cookie.maxAgeSeconds}${cookie.secure ? '; Secure' : ''}`,
  );
}

/**
 * Express middleware run before every route: the security headers, and the request's session —
 * the one its cookie seals, else a new anonymous one (set as the cookie) so that every form,
 * sign-in included, carries a CSRF token.
 */
export function consoleSecurity(
  sealer: SessionSealer,
  cookie: SessionCookie,
  revocations: SessionRevocations,
) {
  return (request: ConsoleRequest, response: Response, next: NextFunction): void => {
    response.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    response.setHeader('X-Frame-Options', 'DENY');
    response.setHeader('Referrer-Policy', 'no-referrer');
    response.setHeader('X-Content-Type-Options', 'nosniff');
    response.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    response.setHeader('Cache-Control', 'no-store');
    // Expired, idle too long, or signed out (revoked): a new anonymous session in its place.
    let session = sealer.open(readCookie(request.headers.cookie, cookie.name));
    if (session !== undefined && revocations.isRevoked(session)) session = undefined;
    if (session === undefined) {
      session = sealer.fresh();
      writeSession(response, cookie, sealer, session);
    } else if (session.user !== undefined) {
      const touched = sealer.touch(session);
      if (touched !== undefined) {
        session = touched;
        writeSession(response, cookie, sealer, session);
      }
    }
    request.consoleSession = session;
    next();
  };
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Refuses every state-changing request whose form does not echo the session's CSRF token: a page
 * of another origin cannot read the token (it is only in this origin's pages), so it cannot forge
 * the request even where the browser would send the cookie.
 */
@Injectable()
export class CsrfGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<ConsoleRequest>();
    if (request.method === 'GET' || request.method === 'HEAD') return true;
    const session = request.consoleSession;
    const body = request.body as Record<string, unknown> | undefined;
    const sent = body?.[CSRF_FIELD] ?? request.headers['x-csrf-token'];
    if (session === undefined || typeof sent !== 'string' || !same(sent, session.csrf)) {
      throw new ForbiddenException({
        code: 'CSRF_TOKEN_INVALID',
        message: 'this form is stale or was not sent from the console; reload the page and retry',
      });
    }
    return true;
  }
}
