/**
 * Loaded first by main.ts: tracing must start before the HTTP, undici and pg modules load (their
 * instrumentations patch them as they do). Off unless OTEL_TRACES_EXPORTER=otlp
 * (docs/operations.md "Tracing").
 */
import { startTracing } from '@payments/observability/tracing';

startTracing('gateway-sandbox');
