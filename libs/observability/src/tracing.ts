import {
  type Attributes,
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import { loadConfigOrExit, type ResolvedConfig, tracingVars, versionVar } from '@payments/config';
import { childTraceparent } from '@payments/contracts';
import type * as TracingSdk from './tracing-sdk';
import type { TracingSetup } from './tracing-sdk';
import { redactedUrl } from './tracing-redaction';

export { redactedUrl };
export type { TracingSetup };

/*
 * Tracing: one OpenTelemetry TracerProvider per process, started by the app's
 * `src/tracing.ts` before anything else is loaded (the HTTP, undici and pg instrumentations patch
 * those modules as they load). Off by default (OTEL_TRACES_EXPORTER=none): no provider, no
 * instrumentation, no span, and every helper below falls back to today's W3C `traceparent`
 * continuation (`childTraceparent`), so a disabled process costs nothing and still passes its
 * callers' trace ids on.
 *
 * Where the context travels, so that one trace runs from a command to its final event:
 *  - Kafka: a consumed message's `traceparent` is the parent of its `process <topic>` span (libs/kafka
 *    consumer runner), and the runner hands the handler the message with `traceparent` rewritten to
 *    that span; every message a process writes gets the context of a `create <topic>` producer span
 *    (`messageTraceparent`), made a child of that rewritten `traceparent`;
 *  - outbox rows keep the create span's `traceparent` until the relay sends them; timers keep the
 *    `traceparent` of the input that set them and fire under a `timer <kind>` span (orchestrator);
 *  - HTTP: the instrumentations continue an incoming `traceparent` (server spans) and send the
 *    active one on outgoing requests (undici and fetch), so adapter → sandbox → callback-ingest
 *    stays one trace.
 */

const TRACER = '@payments/observability';

/**
 * The SDK, its exporter and the instrumentations, loaded only when tracing is turned on: a
 * process with tracing off (the default) never loads them (≈ 8 MiB of resident memory each).
 */
function sdk(): typeof TracingSdk {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./tracing-sdk') as typeof TracingSdk;
}

/** The process's provider and propagator while tracing is on; undefined when off (the default). */
let provider: { shutdown(): Promise<void> } | undefined;
let propagator: TextMapPropagator | undefined;

export type TracingConfig = ResolvedConfig<{ tracing: typeof tracingVars }>['tracing'];

/**
 * Starts tracing for this process from its environment (`tracingVars`; a bad variable exits 78
 * naming it, like every other configuration error). Returns whether spans are exported. Call it
 * once, first thing in the app's entry point.
 */
export function startTracing(service: string): boolean {
  const { tracing, version } = loadConfigOrExit(service, {
    tracing: tracingVars,
    version: versionVar,
  });
  const exporter = tracingExporter(tracing);
  if (exporter === undefined) return false;
  installTracing({
    serviceName: tracing.serviceName ?? service,
    serviceVersion: version,
    exporter,
    exportDelayMs: tracing.exportDelayMs,
    sampleRatio: tracing.sampleRatio,
  });
  return true;
}

/** The exporter the configuration asks for, or undefined when tracing is off. */
export function tracingExporter(config: TracingConfig): SpanExporter | undefined {
  if (config.exporter === 'none') return undefined;
  if (config.endpoint === undefined) {
    process.stderr.write(
      'Invalid configuration: OTEL_EXPORTER_OTLP_ENDPOINT is required when OTEL_TRACES_EXPORTER=otlp\n',
    );
    process.exit(78);
  }
  return sdk().otlpExporter(`${config.endpoint.replace(/\/+$/, '')}/v1/traces`);
}

/** Installs a provider (and, unless told not to, the instrumentations) as the process's own. */
export function installTracing(setup: TracingSetup): void {
  if (provider !== undefined) throw new Error('tracing is already started in this process');
  const started = sdk().startProvider(setup);
  provider = started.provider;
  propagator = started.propagator;
}

/** Exports what is buffered and stops the provider (at shutdown; tests). */
export async function stopTracing(): Promise<void> {
  const current = provider;
  if (current === undefined) return;
  provider = undefined;
  propagator = undefined;
  await current.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
}

/** Whether this process records spans. */
export function tracingEnabled(): boolean {
  return provider !== undefined;
}

export type TraceSpanKind = 'internal' | 'consumer' | 'producer' | 'client' | 'server';

const KINDS: Readonly<Record<TraceSpanKind, SpanKind>> = {
  internal: SpanKind.INTERNAL,
  consumer: SpanKind.CONSUMER,
  producer: SpanKind.PRODUCER,
  client: SpanKind.CLIENT,
  server: SpanKind.SERVER,
};

export interface SpanOptions {
  readonly kind?: TraceSpanKind;
  /** The W3C traceparent to continue; absent or invalid: the active context. */
  readonly parent?: string;
  /** Other traces this span belongs to (a batch's messages). */
  readonly links?: readonly (string | undefined)[];
  readonly attributes?: Attributes;
}

/** A started span: run work inside it, end it once. A no-op when tracing is off. */
export interface SpanScope {
  /** This span as a W3C traceparent; undefined when tracing is off. */
  readonly traceparent: string | undefined;
  /** Runs `fn` with this span as the active context (child spans, outgoing HTTP). */
  run<T>(fn: () => T): T;
  setAttributes(attributes: Attributes): void;
  /** Ends the span; an error marks it failed (its message only: no values, no card data). */
  end(error?: unknown): void;
}

const NO_SPAN: SpanScope = {
  traceparent: undefined,
  run: (fn) => fn(),
  setAttributes: () => undefined,
  end: () => undefined,
};

function tracer(): Tracer {
  return trace.getTracer(TRACER);
}

function contextOf(traceparent: string | undefined): Context | undefined {
  if (traceparent === undefined || propagator === undefined) return undefined;
  const extracted = propagator.extract(ROOT_CONTEXT, { traceparent }, headerGetter);
  return trace.getSpanContext(extracted) === undefined ? undefined : extracted;
}

const headerGetter = {
  keys: (carrier: Record<string, string>) => Object.keys(carrier),
  get: (carrier: Record<string, string>, key: string) => carrier[key],
};

const headerSetter = {
  set: (carrier: Record<string, string>, key: string, value: string) => {
    carrier[key] = value;
  },
};

function traceparentOf(ctx: Context): string | undefined {
  if (propagator === undefined) return undefined;
  const carrier: Record<string, string> = {};
  propagator.inject(ctx, carrier, headerSetter);
  return carrier.traceparent;
}

/** Starts a span (child of `parent`, else of the active context). */
export function startSpan(name: string, options: SpanOptions = {}): SpanScope {
  if (provider === undefined) return NO_SPAN;
  const parentContext = contextOf(options.parent) ?? context.active();
  const links: Link[] = [];
  for (const link of options.links ?? []) {
    const linked = contextOf(link);
    const spanContext = linked === undefined ? undefined : trace.getSpanContext(linked);
    if (spanContext !== undefined) links.push({ context: spanContext });
  }
  const span: Span = tracer().startSpan(
    name,
    {
      kind: KINDS[options.kind ?? 'internal'],
      ...(options.attributes === undefined ? {} : { attributes: options.attributes }),
      ...(links.length > 0 ? { links } : {}),
    },
    parentContext,
  );
  const spanContext = trace.setSpan(parentContext, span);
  let ended = false;
  return {
    // An unsampled span's context too: its flags tell the next process not to sample either.
    traceparent: traceparentOf(spanContext),
    run: (fn) => context.with(spanContext, fn),
    setAttributes: (attributes) => {
      span.setAttributes(attributes);
    },
    end: (error) => {
      if (ended) return;
      ended = true;
      if (error !== undefined) {
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: error instanceof Error ? error.name : 'error',
        });
      }
      span.end();
    },
  };
}

/** Runs `fn` inside a span, ending it when `fn` settles (failed if it throws). */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: SpanScope) => Promise<T>,
): Promise<T> {
  const span = startSpan(name, options);
  try {
    const result = await span.run(() => fn(span));
    span.end();
    return result;
  } catch (error) {
    span.end(error);
    throw error;
  }
}

/**
 * The `traceparent` for a message this process is about to write to `topic`: the context of a
 * `create <topic>` producer span, child of `parent` (the input's rewritten traceparent) or of the
 * active span. With tracing off: `childTraceparent(parent)`, the trace continued without a span.
 */
export function messageTraceparent(topic: string, parent?: string): string {
  if (provider === undefined) return childTraceparent(parent ?? activeTraceparent());
  const span = startSpan(`create ${topic}`, {
    kind: 'producer',
    ...(parent === undefined ? {} : { parent }),
    attributes: { 'messaging.system': 'kafka', 'messaging.destination.name': topic },
  });
  span.end();
  return span.traceparent ?? childTraceparent(parent ?? activeTraceparent());
}

/** The active span as a W3C traceparent (an HTTP request's server span), if any is recording. */
export function activeTraceparent(): string | undefined {
  if (provider === undefined) return undefined;
  const span = trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return undefined;
  return traceparentOf(trace.setSpan(ROOT_CONTEXT, span));
}
