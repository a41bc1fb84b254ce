import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { LoggingModule, loggingOptions } from '@payments/logging';
import { ObservabilityModule, provideHealthChecks } from '@payments/observability';
import type { Logger } from 'pino';
import { AdminApiClient } from './application/admin-api.client';
import { SessionRevocations, SessionSealer, SignInThrottle } from './application/session';
import { CONSOLE_CONFIG, type ConsoleConfig, sessionSecret } from './config';
import { AssetsController } from './transport/http/assets.controller';
import { CasesController } from './transport/http/cases.controller';
import { ConsolePages } from './transport/http/console-page';
import { DayCloseController } from './transport/http/day-close.controller';
import { DeadLettersController } from './transport/http/dead-letters.controller';
import { ReconciliationController } from './transport/http/reconciliation.controller';
import { SagasController } from './transport/http/sagas.controller';
import { SignInController } from './transport/http/sign-in.controller';
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
      // One controller a part of the console; every signed-in route starts with ConsolePages.
      controllers: [
        SignInController,
        SagasController,
        CasesController,
        DayCloseController,
        ReconciliationController,
        DeadLettersController,
        WatchController,
        AssetsController,
      ],
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
        ConsolePages,
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
