import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { newTraceparent, parseTraceparent } from '@payments/contracts';
import {
  activeTraceparent,
  inSpan,
  installTracing,
  messageTraceparent,
  redactedUrl,
  startSpan,
  stopTracing,
  tracingEnabled,
} from './tracing';

const ids = (tp: string | undefined) => {
  const parsed = tp === undefined ? undefined : parseTraceparent(tp);
  if (!parsed) throw new Error(`not a traceparent: ${String(tp)}`);
  return parsed;
};

describe('tracing off (the default)', () => {
  it('starts no span and continues the caller trace with a new span id', () => {
    expect(tracingEnabled()).toBe(false);
    const parent = newTraceparent();
    const span = startSpan('process x', { parent });
    expect(span.traceparent).toBeUndefined();
    expect(span.run(() => 7)).toBe(7);
    span.end();

    const next = ids(messageTraceparent('payments.events.v1', parent));
    expect(next.traceId).toBe(ids(parent).traceId);
    expect(next.parentId).not.toBe(ids(parent).parentId);
    expect(activeTraceparent()).toBeUndefined();
  });

  it('starts a new trace for a message without a parent', () => {
    const a = ids(messageTraceparent('t'));
    const b = ids(messageTraceparent('t'));
    expect(a.traceId).not.toBe(b.traceId);
  });
});

describe('tracing on', () => {
  let exporter: InMemorySpanExporter;
  const finished = (): ReadableSpan[] => exporter.getFinishedSpans();
  const named = (name: string): ReadableSpan => {
    const span = finished().find((s) => s.name === name);
    if (!span)
      throw new Error(
        `no span ${name} in ${finished()
          .map((s) => s.name)
          .join(', ')}`,
      );
    return span;
  };

  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    installTracing({ serviceName: 'test', exporter, processor: 'simple', instrument: false });
  });
  afterEach(async () => {
    await stopTracing();
  });

  it('makes a span the child of the traceparent it continues and reports its own context', () => {
    const parent = newTraceparent();
    const span = startSpan('process payments.commands.v1', { kind: 'consumer', parent });
    span.end();
    const exported = named('process payments.commands.v1');
    expect(exported.kind).toBe(SpanKind.CONSUMER);
    expect(exported.spanContext().traceId).toBe(ids(parent).traceId);
    expect(exported.parentSpanContext?.spanId).toBe(ids(parent).parentId);
    expect(ids(span.traceparent).parentId).toBe(exported.spanContext().spanId);
  });

  it("gives a message a create span under its input's span, or under the active span", async () => {
    const input = newTraceparent();
    const consume = startSpan('process in', { parent: input });
    const written = messageTraceparent('payments.events.v1', consume.traceparent);
    const fromActive = await inSpan('handle in', { parent: consume.traceparent }, (handle) => {
      expect(activeTraceparent()).toBe(handle.traceparent);
      return Promise.resolve(messageTraceparent('payments.gateway.requests.v1'));
    });
    consume.end();

    const create = finished().filter((s) => s.name === 'create payments.events.v1');
    expect(create).toHaveLength(1);
    expect(create[0]?.kind).toBe(SpanKind.PRODUCER);
    expect(create[0]?.parentSpanContext?.spanId).toBe(ids(consume.traceparent).parentId);
    expect(ids(written).parentId).toBe(create[0]?.spanContext().spanId);

    const handle = named('handle in');
    const created = named('create payments.gateway.requests.v1');
    expect(created.parentSpanContext?.spanId).toBe(handle.spanContext().spanId);
    expect(ids(fromActive).parentId).toBe(created.spanContext().spanId);
    // One trace throughout.
    expect(new Set(finished().map((s) => s.spanContext().traceId))).toEqual(
      new Set([ids(input).traceId]),
    );
    expect(activeTraceparent()).toBeUndefined();
  });

  it('starts a new trace for a missing or malformed parent', () => {
    const span = startSpan('root', { parent: 'not-a-traceparent' });
    span.end();
    expect(named('root').parentSpanContext).toBeUndefined();
  });

  it("links a batch span to every message's trace and marks a failure without its message", async () => {
    const [a, b, c] = [newTraceparent(), newTraceparent(), newTraceparent()];
    await expect(
      inSpan('handle batch', { parent: a, links: [b, c, undefined, 'junk'] }, () =>
        Promise.reject(new TypeError('card 4111111111111111 refused')),
      ),
    ).rejects.toThrow(TypeError);
    const batch = named('handle batch');
    expect(batch.links.map((l) => l.context.traceId)).toEqual([ids(b).traceId, ids(c).traceId]);
    expect(batch.status).toEqual({ code: SpanStatusCode.ERROR, message: 'TypeError' });
  });
});

describe('tracing on with new traces unsampled', () => {
  let exporter: InMemorySpanExporter;
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    installTracing({
      serviceName: 'test',
      exporter,
      processor: 'simple',
      instrument: false,
      sampleRatio: 0,
    });
  });
  afterEach(async () => {
    await stopTracing();
  });

  it("drops new traces but keeps a sampled caller's decision", () => {
    const root = startSpan('root');
    root.end();
    expect(ids(root.traceparent).flags).toBe('00');

    const sampledParent = newTraceparent();
    const child = startSpan('child', { parent: sampledParent });
    child.end();
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['child']);
    // The unsampled decision travels on: what continues the root is not sampled either.
    expect(ids(messageTraceparent('t', root.traceparent)).flags).toBe('00');
  });
});

describe('redactedUrl', () => {
  it("keeps a callback's query string (control checksum, BIN, last four) out of a span", () => {
    const attributes = redactedUrl(
      'http://127.0.0.1:3003',
      '/callbacks/1111?status=approved&control=0123456789abcdef&bin=444444&last-four-digits=4448',
    );
    expect(attributes).toEqual({
      'url.full': 'http://127.0.0.1:3003/callbacks/1111?REDACTED',
      'url.query': 'REDACTED',
    });
    expect(redactedUrl('http://gw', '/paynet/api/v2/sale/1')).toEqual({});
  });
});
