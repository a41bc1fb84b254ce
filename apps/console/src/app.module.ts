import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { LoggingModule, loggingOptions } from '@payments/logging';
import { ObservabilityModule, provideHealthChecks } from '@payments/observability';
import type { Logger } from 'pino';
import { AdminApiClient } from './application/admin-api.client';
import { SessionRevocations, SessionSealer, SignInThrottle } from './application/session';
import { CONSOLE_CONFIG, type ConsoleConfig, sessionSecret } from './config';
import { AssetsController } from './transport/http/assets.controller';
import { ConsoleController } from './transport/http/console.controller';
import { WatchController } from './transport/http/watch.controller';
import { ConsoleErrorFilter } from './transport/http/refusals';
import { CsrfGuard, SESSION_COOKIE, sessionCookie } from './transport/http/security';

export const SERVICE_NAME = 'console';

export interface AppModuleOptions {
  /** Reuse the pino logger main.ts (or a test) created. */
  readonly logger?: Logger;
}

/**
 * The operator console: server-rendered pages over the orchestrator's admin API. No database, no
 * broker; readiness is the admin API answering.
 */
@Module({})
export class AppModule {
  static forRoot(config: ConsoleConfig, options: AppModuleOptions = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        LoggingModule.forRoot({
          ...loggingOptions(SERVICE_NAME, config),
          ...(options.logger ? { logger: options.logger } : {}),
        }),
        ObservabilityModule.forRoot({ service: SERVICE_NAME }),
      ],
      controllers: [ConsoleController, WatchController, AssetsController],
      providers: [
        { provide: CONSOLE_CONFIG, useValue: config },
        {
          provide: SessionSealer,
          useFactory: () =>
            new SessionSealer(
              sessionSecret(config),
              config.session.ttlSeconds * 1000,
              Date.now,
              config.session.idleSeconds * 1000,
            ),
        },
        { provide: SessionRevocations, useValue: new SessionRevocations() },
        {
          provide: SignInThrottle,
          useValue: new SignInThrottle(
            config.session.signInMaxFailures,
            config.session.signInWindowSeconds * 1000,
          ),
        },
        {
          provide: SESSION_COOKIE,
          useValue: sessionCookie(config.session.secureCookie, config.session.ttlSeconds),
        },
        AdminApiClient,
        { provide: APP_GUARD, useClass: CsrfGuard },
        { provide: APP_FILTER, useClass: ConsoleErrorFilter },
        ...provideHealthChecks({
          liveness: [],
          readiness: [
            {
              useFactory: (api: AdminApiClient) => ({
                name: 'admin-api',
                check: () => api.reachable(),
              }),
              inject: [AdminApiClient],
            },
          ],
        }),
      ],
    };
  }
}
