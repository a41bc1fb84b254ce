/**
 * Loaded first by main.ts: tracing must start before the HTTP and undici modules load (their
 * instrumentations patch them as they do). Off unless OTEL_TRACES_EXPORTER=otlp.
 */
import { startTracing } from '@payments/observability/tracing';

startTracing('console');
