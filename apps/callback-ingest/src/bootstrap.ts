import type { INestApplication } from '@nestjs/common';
import { createNestApp } from '@payments/bootstrap';
import { AppModule, type AppModuleOptions } from './app.module';
import type { CallbackIngestSettings } from './config';
import { edgeRequestMiddleware } from './transport/http/edge-request.middleware';

/** Slow clients may not hold a connection open for long (the bodies here are tiny). */
const HEADERS_TIMEOUT_MS = 20_000;
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The Nest application, ready to `listen` — shared by main.ts and the integration tests so that
 * both run exactly the same HTTP setup: no body parser (handlers read and verify the raw
 * request, with a size limit), no `x-powered-by`, shutdown hooks left to the caller.
 */
export async function createCallbackIngestApp(
  settings: CallbackIngestSettings,
  options: AppModuleOptions = {},
): Promise<INestApplication> {
  const app = await createNestApp(AppModule.forRoot(settings, options), { bodyParser: false });
  app.disable('x-powered-by');
  // Before init, so before every Nest middleware (the request logger included).
  app.use(edgeRequestMiddleware(settings.config.http.maxUrlBytes));
  const server = app.getHttpServer();
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  return app;
}
