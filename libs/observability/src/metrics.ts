import { Controller, Get, Header } from '@nestjs/common';
import { collectDefaultMetrics, register, Registry } from 'prom-client';

/** The process-wide registry every library registers its metrics in. */
export const metricsRegistry: Registry = register;

let defaultsCollected = false;

/** Labels every metric with the service and starts process metrics, once per process. */
export function initialiseMetrics(service: string): void {
  metricsRegistry.setDefaultLabels({ service });
  if (defaultsCollected) return;
  collectDefaultMetrics({ register: metricsRegistry });
  defaultsCollected = true;
}

@Controller('metrics')
export class MetricsController {
  @Get()
  @Header('Content-Type', register.contentType)
  @Header('Cache-Control', 'no-store')
  metrics(): Promise<string> {
    return metricsRegistry.metrics();
  }
}
