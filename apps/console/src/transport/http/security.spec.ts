import type { ExecutionContext } from '@nestjs/common';
import { CsrfGuard } from './security';

function context(method: string, body: unknown, csrf: string | undefined): ExecutionContext {
  const request = {
    method,
    body,
    headers: {},
    consoleSession: csrf === undefined ? undefined : { csrf, expiresAt: Date.now() + 1_000 },
  };
  return { switchToHttp: () => ({ getRequest: () => request }) } as unknown as ExecutionContext;
}

describe('CsrfGuard', () => {
  const guard = new CsrfGuard();

  it('lets reads through and a POST echoing the session token', () => {
    expect(guard.canActivate(context('GET', undefined, 'tok'))).toBe(true);
    expect(guard.canActivate(context('POST', { _csrf: 'tok-123' }, 'tok-123'))).toBe(true);
  });

  it('refuses a POST without the token, with another one, or without a session', () => {
    expect(() => guard.canActivate(context('POST', {}, 'tok-123'))).toThrow(/stale/);
    expect(() => guard.canActivate(context('POST', { _csrf: 'tok-124' }, 'tok-123'))).toThrow();
    expect(() => guard.canActivate(context('POST', { _csrf: 'tok' }, 'tok-123'))).toThrow();
    expect(() => guard.canActivate(context('POST', { _csrf: 'tok' }, undefined))).toThrow();
    expect(() => guard.canActivate(context('DELETE', undefined, 'tok'))).toThrow();
  });
});
