import { DynamicModule, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';
import { MetricsController, initialiseMetrics } from './metrics';
import { OBSERVABILITY_OPTIONS, ObservabilityOptions } from './options';
import { stopTracing } from './tracing';

/** Exports the spans still buffered when the app stops (a no-op when tracing is off). */
@Injectable()
class TracingShutdown implements OnApplicationShutdown {
  onApplicationShutdown(): Promise<void> {
    return stopTracing();
  }
}

/**
 * Health endpoints (`/health/live`, `/health/ready`) and Prometheus metrics (`/metrics`).
 * Checks come from the app through `provideHealthChecks(...)`.
 */
@Module({})
export class ObservabilityModule {
  static forRoot(options: ObservabilityOptions): DynamicModule {
    initialiseMetrics(options.service);
    return {
      module: ObservabilityModule,
      imports: [TerminusModule.forRoot({ errorLogStyle: 'json' })],
      controllers: [HealthController, MetricsController],
      providers: [{ provide: OBSERVABILITY_OPTIONS, useValue: options }, TracingShutdown],
    };
  }
}
