import type { INestApplication } from '@nestjs/common';
import { createNestApp } from '@payments/bootstrap';
import { AppModule, type AppModuleOptions } from './app.module';
import type { ConsoleConfig } from './config';
import { SessionRevocations, SessionSealer } from './application/session';
import { consoleSecurity, SESSION_COOKIE, type SessionCookie } from './transport/http/security';

/**
 * The Nest application, ready to `listen`: small urlencoded forms only (no JSON bodies), no
 * `x-powered-by`, and the security headers and session on every response, before any route.
 */
export async function createConsoleApp(
  config: ConsoleConfig,
  options: AppModuleOptions = {},
): Promise<INestApplication> {
  const app = await createNestApp(AppModule.forRoot(config, options), { bodyParser: false });
  app.disable('x-powered-by');
  app.use(
    consoleSecurity(
      app.get(SessionSealer),
      app.get<SessionCookie>(SESSION_COOKIE),
      app.get(SessionRevocations),
    ),
  );
  app.useBodyParser('urlencoded', { limit: '16kb', extended: false });
  return app;
}
