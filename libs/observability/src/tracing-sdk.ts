import { context, propagation, type TextMapPropagator, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { type Instrumentation, registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { REDACTED, redactedUrl, UNTRACED_PATH } from './tracing-redaction';

/** What `installTracing` starts. */
export interface TracingSetup {
  readonly serviceName: string;
  readonly serviceVersion?: string;
  readonly exporter: SpanExporter;
  /** `batch` (default) exports every `exportDelayMs`; `simple` exports each span as it ends. */
  readonly processor?: 'batch' | 'simple';
  readonly exportDelayMs?: number;
  /** Share of new traces sampled; a caller's sampled flag is always kept. Default 1. */
  readonly sampleRatio?: number;
  /** HTTP server/client, undici/fetch and pg spans (default true; unit tests pass false). */
  readonly instrument?: boolean;
}

/*
 * The OpenTelemetry SDK side of libs/observability's tracing: loaded by `tracing.ts` only when
 * tracing is turned on, so that a process with tracing off never loads it.
 */

/** OTLP over HTTP with JSON bodies, to `url` (…/v1/traces). */
export function otlpExporter(url: string): SpanExporter {
  return new OTLPTraceExporter({ url });
}

/**
 * A provider registered as the process's own (context manager, W3C propagator, tracer provider)
 * and, unless told not to, the HTTP, undici/fetch and pg instrumentations.
 */
export function startProvider(setup: TracingSetup): {
  provider: TracerProvider;
  propagator: TextMapPropagator;
} {
  const propagator = new W3CTraceContextPropagator();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: setup.serviceName,
      ...(setup.serviceVersion === undefined
        ? {}
        : { [ATTR_SERVICE_VERSION]: setup.serviceVersion }),
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(setup.sampleRatio ?? 1) }),
    spanProcessors: [
      setup.processor === 'simple'
        ? new SimpleSpanProcessor({ exporter: setup.exporter })
        : new BatchSpanProcessor({
            exporter: setup.exporter,
            scheduledDelayMillis: setup.exportDelayMs ?? 5_000,
          }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(propagator);
  trace.setGlobalTracerProvider(provider);
  if (setup.instrument ?? true) {
    const instrumentations: Instrumentation[] = [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATH.test(req.url ?? ''),
        startIncomingSpanHook: (req) => (req.url?.includes('?') ? { 'url.query': REDACTED } : {}),
        // Outgoing requests go through undici/fetch; the exporter's own requests are not traced.
        ignoreOutgoingRequestHook: () => true,
      }),
      new UndiciInstrumentation({
        requireParentforSpans: true,
        startSpanHook: (request) => redactedUrl(String(request.origin), request.path),
      }),
      // Queries outside a traced unit of work (relay and timer polls) would each be a trace.
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
    ];
    registerInstrumentations({ instrumentations, tracerProvider: provider });
  }
  return { provider, propagator };
}
