export { type HealthCheck } from './health-check';
export { provideHealthChecks } from './provide-health-checks';
export { DatabaseHealthCheck } from './database.health-check';
export { ObservabilityModule } from './observability.module';
export { type ErrorBody, HttpErrorFilter } from './http-error.filter';
export { counterMetric, gaugeMetric, histogramMetric } from './metric-factory';
export {
  activeTraceparent,
  inSpan,
  installTracing,
  messageTraceparent,
  type SpanScope,
  startSpan,
  stopTracing,
  tracingEnabled,
} from './tracing';
