import {
  Controller,
  Get,
  Inject,
  OnApplicationBootstrap,
  Res,
  ServiceUnavailableException,
} from '@nestjs/common';
import type { Response } from 'express';
import { ModuleRef } from '@nestjs/core';
import {
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorFunction,
  HealthIndicatorService,
} from '@nestjs/terminus';
import { HealthCheck, LIVENESS_CHECKS, READINESS_CHECKS } from './health-check';
import { withTimeout } from '@payments/core';
import { OBSERVABILITY_OPTIONS, ObservabilityOptions } from './options';

/**
 * `/health/live` and `/health/ready`: every HealthCheck listed under LIVENESS_CHECKS or
 * READINESS_CHECKS (anywhere in the app, see provideHealthChecks) becomes a terminus indicator
 * named after the component; any failure answers 503 with `{ error: { <name>: { status: 'down',
 * message } } }`. Readiness also fails while the app shuts down.
 */
@Controller('health')
export class HealthController implements OnApplicationBootstrap {
  private liveness: readonly HealthCheck[] = [];
  private readiness: readonly HealthCheck[] = [];

  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly moduleRef: ModuleRef,
    @Inject(OBSERVABILITY_OPTIONS) private readonly options: ObservabilityOptions,
  ) {}

  onApplicationBootstrap(): void {
    this.liveness = this.lookup(LIVENESS_CHECKS);
    this.readiness = this.lookup(READINESS_CHECKS);
  }

  @Get('live')
  live(@Res({ passthrough: true }) res: Response): Promise<HealthCheckResult> {
    return this.run(this.liveness, res);
  }

  @Get('ready')
  ready(@Res({ passthrough: true }) res: Response): Promise<HealthCheckResult> {
    return this.run(this.readiness, res);
  }

  /** Answers the terminus body itself, so an app's error filter cannot reshape the 503. */
  private async run(checks: readonly HealthCheck[], res: Response): Promise<HealthCheckResult> {
    try {
      return await this.health.check(this.toIndicators(checks));
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      res.status(error.getStatus());
      return error.getResponse() as HealthCheckResult;
    }
  }

  private lookup(token: symbol): readonly HealthCheck[] {
    try {
      return this.moduleRef.get<HealthCheck[]>(token, { strict: false });
    } catch {
      return []; // the app registered no checks of this kind
    }
  }

  private toIndicators(checks: readonly HealthCheck[]): HealthIndicatorFunction[] {
    const timeoutMs = this.options.checkTimeoutMs ?? 3000;
    return checks.map((check) => async () => {
      const session = this.indicators.check(check.name);
      try {
        await withTimeout(check.check(), timeoutMs, check.name);
        return session.up();
      } catch (error) {
        return session.down({ message: error instanceof Error ? error.message : String(error) });
      }
    });
  }
}
