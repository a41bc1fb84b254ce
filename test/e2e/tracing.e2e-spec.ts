import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Producer } from 'kafkajs';
import { newTraceparent, parseTraceparent, TOPICS } from '@payments/contracts';
import { kafkaClient, type ReceivedEvent } from '../../scripts/stack/kafka-io';
import {
  type AppName,
  APP_NAMES,
  PaymentStack,
  SANDBOX_MERCHANT,
  TEST_CARD_NUMBER,
} from '../../scripts/stack/payment-stack';
import { sleep } from '../../scripts/stack/processes';
import { type E2eStack, startE2eStack } from '../support/e2e-stack';

/**
 * Tracing across the processes: the four apps run with OTEL_TRACES_EXPORTER=otlp and
 * export to an OTLP/HTTP (JSON) receiver in this test. A sale sent with a traceparent must come
 * back as one trace: the final event's traceparent names a span every ancestor of which was
 * exported, up to the test's own root; the trace holds consume, handle, create (produce),
 * database and HTTP spans of every app, and a timer's firing continues it.
 */

interface ExportedSpan {
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
}

/** OTLP span kinds (JSON encoding). */
const KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

interface OtlpValue {
  readonly stringValue?: string;
  readonly intValue?: string | number;
  readonly boolValue?: boolean;
}
interface OtlpAttribute {
  readonly key: string;
  readonly value: OtlpValue;
}
interface OtlpRequest {
  readonly resourceSpans?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: readonly OtlpAttribute[] };
    readonly scopeSpans?: ReadonlyArray<{
      readonly spans?: ReadonlyArray<{
        readonly traceId: string;
        readonly spanId: string;
        readonly parentSpanId?: string;
        readonly name: string;
        readonly kind: number;
        readonly attributes?: readonly OtlpAttribute[];
      }>;
    }>;
  }>;
}

const valueOf = (v: OtlpValue): unknown => v.stringValue ?? v.intValue ?? v.boolValue;
const attributesOf = (list: readonly OtlpAttribute[] = []): Record<string, unknown> =>
  Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/** A minimal OTLP/HTTP trace receiver (JSON), keeping every span it is sent. */
class OtlpReceiver {
  readonly spans: ExportedSpan[] = [];
  readonly problems: string[] = [];
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      void this.receive(req).then(
        () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
        (error: unknown) => {
          this.problems.push(String(error));
          res.writeHead(400).end();
        },
      );
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async receive(req: IncomingMessage): Promise<void> {
    if (req.method !== 'POST' || req.url !== '/v1/traces')
      throw new Error(`${req.method} ${req.url}`);
    if (!String(req.headers['content-type']).startsWith('application/json')) {
      throw new Error(`content-type ${String(req.headers['content-type'])}`);
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpRequest;
    for (const rs of body.resourceSpans ?? []) {
      const service = String(attributesOf(rs.resource?.attributes)['service.name']);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            service,
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind,
            attributes: attributesOf(s.attributes),
          });
        }
      }
    }
  }

  inTrace(traceId: string): ExportedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }
}

const ids = (traceparent: string | undefined) => {
  const parsed = traceparent === undefined ? undefined : parseTraceparent(traceparent);
  if (!parsed) throw new Error(`not a traceparent: ${String(traceparent)}`);
  return parsed;
};

/**
 * The spans from `spanId` up to the span whose parent is `rootSpanId`; undefined while a link of
 * the chain has not been exported yet.
 */
function chainTo(
  spans: readonly ExportedSpan[],
  spanId: string,
  rootSpanId: string,
): ExportedSpan[] | undefined {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const chain: ExportedSpan[] = [];
  for (let id = spanId; id !== rootSpanId;) {
    const span = byId.get(id);
    if (!span || chain.length > 200) return undefined;
    chain.push(span);
    id = span.parentSpanId;
  }
  return chain;
}

async function eventually<T>(what: string, probe: () => T | undefined, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

let stack: PaymentStack;
let e2e: E2eStack;
let producer: Producer;
const receiver = new OtlpReceiver();

beforeAll(async () => {
  const endpoint = await receiver.start();
  const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  const tracing = {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '200',
  };
  const env: Record<AppName, Record<string, string>> = {
    'gateway-sandbox': tracing,
    'gateway-adapter': tracing,
    'callback-ingest': tracing,
    orchestrator: tracing,
  };
  // A hold expires 3 s after its authorization: a timer fires within the test.
  env.orchestrator = { ...env.orchestrator, HOLD_EXPIRY_SECONDS: '3', HOLD_EXPIRY_ACTION: 'void' };
  e2e = await startE2eStack('tracing', { env });
  stack = e2e.stack;
  producer = kafkaClient(brokers, 'e2e-tracing').producer();
  await producer.connect();
});

afterAll(async () => {
  await producer?.disconnect();
  await e2e?.stop();
  await receiver.stop();
});

/** Sends a command as a traced producer would: with its own root span as `traceparent`. */
async function sendTraced(command: {
  paymentId: string;
}): Promise<{ traceId: string; rootSpanId: string }> {
  const root = newTraceparent();
  await producer.send({
    topic: TOPICS.commands,
    messages: [
      {
        key: command.paymentId,
        value: JSON.stringify(command),
        headers: { 'content-type': 'application/json', traceparent: root },
      },
    ],
  });
  const { traceId, parentId } = ids(root);
  return { traceId, rootSpanId: parentId };
}

describe('one trace from command to final event', () => {
  it('follows a sale through every process: consume, handle, create, database, HTTP', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 4_321 });
    const { traceId, rootSpanId } = await sendTraced(sale);
    const final: ReceivedEvent = await stack.events.waitFor(
      sale.paymentId,
      (e) => e.type === 'approved',
      90_000,
    );

    // The event continues the command's trace, from a span that was exported ...
    const eventContext = ids(final.traceparent);
    expect(eventContext.traceId).toBe(traceId);
    // ... and whose every ancestor was exported too, up to the command's own root.
    const chain = await eventually('the chain from the final event to the command', () =>
      chainTo(receiver.inTrace(traceId), eventContext.parentId, rootSpanId),
    );
    expect(chain[0]).toMatchObject({
      service: 'orchestrator',
      name: `create ${TOPICS.events}`,
      kind: KIND.producer,
    });
    expect(chain[chain.length - 1]).toMatchObject({
      service: 'orchestrator',
      name: `process ${TOPICS.commands}`,
      kind: KIND.consumer,
    });
    // The orchestrator's request went to the adapter and its answer came back, in the chain.
    const chainNames = chain.map((s) => `${s.service}: ${s.name}`);
    expect(chainNames).toContain(`orchestrator: create ${TOPICS.gatewayRequests}`);
    expect(chainNames).toContain(`gateway-adapter: process ${TOPICS.gatewayRequests}`);

    // Let the last exports arrive (the callbacks and status answers after the final event).
    await sleep(1_500);
    const trace = receiver.inTrace(traceId);
    const services = new Set(trace.map((s) => s.service));
    expect([...services].sort()).toEqual([...APP_NAMES].sort());

    // Handle spans under consume spans, in the orchestrator and the adapter.
    for (const service of ['orchestrator', 'gateway-adapter']) {
      const handle = trace.find((s) => s.service === service && s.name.startsWith('handle '));
      const parent = trace.find((s) => s.spanId === handle?.parentSpanId);
      expect(parent).toMatchObject({ service, kind: KIND.consumer });
    }
    // Database spans inside the units of work of both apps that have a database.
    for (const service of ['orchestrator', 'gateway-adapter']) {
      expect(
        trace.some((s) => s.service === service && s.attributes['db.system.name'] === 'postgresql'),
      ).toBe(true);
    }
    // HTTP: the adapter's call to the sandbox is a client span, the sandbox's server span its
    // child; the sandbox's callback reaches callback-ingest as a server span of the same trace.
    const sandboxServers = trace.filter(
      (s) => s.service === 'gateway-sandbox' && s.kind === KIND.server,
    );
    expect(sandboxServers.length).toBeGreaterThan(0);
    for (const server of sandboxServers) {
      expect(trace.find((s) => s.spanId === server.parentSpanId)).toMatchObject({
        service: 'gateway-adapter',
        kind: KIND.client,
      });
    }
    const ingestServer = trace.find(
      (s) => s.service === 'callback-ingest' && s.kind === KIND.server,
    );
    const callbackClient = trace.find((s) => s.spanId === ingestServer?.parentSpanId);
    expect(callbackClient).toMatchObject({ service: 'gateway-sandbox', kind: KIND.client });
    expect(
      trace.some(
        (s) => s.service === 'callback-ingest' && s.name === `create ${TOPICS.gatewayCallbacks}`,
      ),
    ).toBe(true);

    // No query string (a callback's control checksum, BIN, last four), no card number.
    const exported = JSON.stringify(receiver.spans);
    expect(exported).not.toContain('control=');
    expect(exported).not.toContain(SANDBOX_MERCHANT.controlKey);
    expect(exported).not.toContain(TEST_CARD_NUMBER);
    expect(trace.some((s) => s.attributes['url.query'] === 'REDACTED')).toBe(true);
    // Probes and scrapes are not traced.
    expect(
      receiver.spans.some((s) => /\/(health|metrics)/.test(String(s.attributes['url.path']))),
    ).toBe(false);
    expect(receiver.problems).toEqual([]);
  });

  it("continues the trace through a timer: the hold's expiry fires in the authorization's trace", async () => {
    const preauth = stack.preauth({ cvv: '123', amountMinor: 1_500 });
    const { traceId, rootSpanId } = await sendTraced(preauth);
    const expired = await stack.events.waitFor(
      preauth.paymentId,
      (e) => e.type === 'hold-expired',
      90_000,
    );
    const context = ids(expired.traceparent);
    expect(context.traceId).toBe(traceId);
    const chain = await eventually('the chain from the hold-expired event to the command', () =>
      chainTo(receiver.inTrace(traceId), context.parentId, rootSpanId),
    );
    const names = chain.map((s) => `${s.service}: ${s.name}`);
    const timerAt = names.indexOf('orchestrator: timer hold-expiry');
    expect(timerAt).toBeGreaterThan(0);
    // Set while the authorization (the adapter's answer or the gateway's callback) was handled:
    // that consume span is its parent.
    expect([
      `orchestrator: process ${TOPICS.gatewayResults}`,
      `orchestrator: process ${TOPICS.gatewayCallbacks}`,
    ]).toContain(names[timerAt + 1]);
    expect(names).toContain(`gateway-adapter: process ${TOPICS.gatewayRequests}`);
  });
});
