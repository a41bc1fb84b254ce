import {
  DynamicModule,
  Inject,
  Logger,
  Module,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { LoggingModule, loggingOptions } from '@payments/logging';
import { HttpErrorFilter, ObservabilityModule, provideHealthChecks } from '@payments/observability';
import type { Logger as PinoLogger } from 'pino';
import { Sandbox } from './application/sandbox';
import { SandboxConfig } from './config';
import { loadMerchantsFile } from './domain/merchants';
import { ApiController } from './transport/http/api.controller';
import { ControlsController } from './transport/http/controls.controller';
import { PagesController } from './transport/http/pages.controller';
import { SANDBOX, SANDBOX_CONFIG } from './transport/http/tokens';

export const SERVICE_NAME = 'gateway-sandbox';

/** Starts and stops the simulator's background work with the Nest application. */
class SandboxLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(SANDBOX) private readonly sandbox: Sandbox) {}

  onModuleInit(): void {
    this.sandbox.start();
  }

  onApplicationShutdown(): void {
    this.sandbox.stop();
  }
}

export function createSandbox(config: SandboxConfig): Sandbox {
  const logger = new Logger(SERVICE_NAME);
  return new Sandbox(loadMerchantsFile(config.merchantsFile), {
    api: {
      publicUrl: config.publicUrl,
      acceptMode: config.acceptMode,
      oauthFailureStatus: config.oauthFailureStatus,
      oauthWindowMs: 5 * 60_000,
    },
    callbacks: config.callbacks,
    settlementDelayMs: config.settlementDelayMs,
    payoutCheckTtlMs: config.payoutCheckTtlMs,
    requireCustomerFields: config.requireCustomerFields,
    tickMs: config.tickMs,
    onError: (message) => logger.error(message),
  });
}

export interface AppModuleOptions {
  /** The simulator, for tests that reach the engine directly; by default made from `config`. */
  readonly sandbox?: Sandbox;
  /** Reuse the pino logger main.ts (or a test) created. */
  readonly logger?: PinoLogger;
}

/**
 * gateway-sandbox: the card-payment gateway's API, its payer pages and (with
 * SANDBOX_TEST_CONTROLS) the test controls over one simulator. Logging, health, metrics, the
 * HTTP error filter, the simulator's background work started and stopped with the app.
 */
@Module({})
export class AppModule {
  static forRoot(config: SandboxConfig, options: AppModuleOptions = {}): DynamicModule {
    const sandbox = options.sandbox ?? createSandbox(config);
    const logger = options.logger;
    return {
      module: AppModule,
      imports: [
        LoggingModule.forRoot({
          ...loggingOptions(SERVICE_NAME, config),
          ...(logger ? { logger } : {}),
        }),
        ObservabilityModule.forRoot({ service: SERVICE_NAME }),
      ],
      controllers: [
        ...(config.testControls ? [ControlsController] : []),
        PagesController,
        ApiController,
      ],
      providers: [
        { provide: SANDBOX_CONFIG, useValue: config },
        { provide: SANDBOX, useValue: sandbox },
        SandboxLifecycle,
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        ...provideHealthChecks({ liveness: [], readiness: [] }),
      ],
    };
  }
}
