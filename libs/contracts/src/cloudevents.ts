import { z } from 'zod';
import { Instant } from './primitives';
import { isValidTraceparent, newTraceparent } from './traceparent';

/**
 * CloudEvents 1.0 Kafka protocol binding, binary content mode: the data is the record value (JSON),
 * the context attributes are `ce_`-prefixed headers, `content-type` is the datacontenttype.
 */
export const CE_SPECVERSION = '1.0';
export const CE_CONTENT_TYPE = 'application/json';

/** Namespace of our `ce_type` values: `com.example.payments.<kind>.<name>.v<major>`. */
export const CE_TYPE_PREFIX = 'com.example.payments';

export const ceType = {
  command: (type: string) => `${CE_TYPE_PREFIX}.command.${type}.v1`,
  event: (type: string) => `${CE_TYPE_PREFIX}.payment.${type}.v1`,
  gatewayRequest: (operation: string) => `${CE_TYPE_PREFIX}.gateway.request.${operation}.v1`,
  gatewayResult: (operation: string) => `${CE_TYPE_PREFIX}.gateway.result.${operation}.v1`,
  callback: (kind: string) => `${CE_TYPE_PREFIX}.gateway.${kind}.v1`,
  admin: (type: string) => `${CE_TYPE_PREFIX}.admin.${type}.v1`,
  reconciliation: (type: string) => `${CE_TYPE_PREFIX}.reconciliation.${type}.v1`,
} as const;

/** `ce_source` values: URI-references naming the producing service. */
export const CE_SOURCES = {
  orchestrator: '/payments/orchestrator',
  gatewayAdapter: '/payments/gateway-adapter',
  callbackIngest: '/payments/callback-ingest',
  /** The orchestrator's admin API (operator actions and their audit). */
  admin: '/payments/orchestrator/admin',
  /** The orchestrator's reconciliation runs. */
  reconciliation: '/payments/orchestrator/reconciliation',
} as const;

export const CloudEventEnvelope = z.strictObject({
  /** Stable across redelivery (e.g. the outbox row id), so consumers can deduplicate. */
  id: z.string().min(1).max(256),
  type: z
    .string()
    .regex(/^[a-z0-9]+(\.[a-z0-9-]+)+\.v\d+$/, 'a reverse-DNS type ending in .v<major>'),
  source: z.string().min(1).max(256),
  /** The payment id. */
  subject: z.string().min(1).max(256),
  time: Instant,
  /** W3C trace context. Optional on input: an absent or invalid one starts a new trace (W3C §4.3). */
  traceparent: z.string().refine(isValidTraceparent, 'a W3C traceparent').optional(),
  tracestate: z.string().max(512).optional(),
});
export type CloudEventEnvelope = z.infer<typeof CloudEventEnvelope>;

export const CE_HEADERS = {
  specversion: 'ce_specversion',
  id: 'ce_id',
  type: 'ce_type',
  source: 'ce_source',
  subject: 'ce_subject',
  time: 'ce_time',
  contentType: 'content-type',
  traceparent: 'traceparent',
  tracestate: 'tracestate',
} as const;

/**
 * Headers for a record, as strings (kafkajs accepts strings and encodes them as UTF-8). Without a
 * traceparent a new trace is started; pass `childTraceparent(incoming)` to continue one.
 */
export function toKafkaHeaders(envelope: CloudEventEnvelope): Record<string, string> {
  const e = CloudEventEnvelope.parse(envelope);
  const headers: Record<string, string> = {
    [CE_HEADERS.specversion]: CE_SPECVERSION,
    [CE_HEADERS.id]: e.id,
    [CE_HEADERS.type]: e.type,
    [CE_HEADERS.source]: e.source,
    [CE_HEADERS.subject]: e.subject,
    [CE_HEADERS.time]: e.time,
    [CE_HEADERS.contentType]: CE_CONTENT_TYPE,
    [CE_HEADERS.traceparent]: e.traceparent ?? newTraceparent(),
  };
  if (e.tracestate !== undefined) headers[CE_HEADERS.tracestate] = e.tracestate;
  return headers;
}

/** The shape kafkajs hands a consumer (`IHeaders`), without importing kafkajs. */
export type KafkaHeaderValue = string | Uint8Array | ReadonlyArray<string | Uint8Array> | undefined;
export type KafkaHeaders = Readonly<Record<string, KafkaHeaderValue>>;

export type FromHeadersResult =
  | { ok: true; envelope: CloudEventEnvelope }
  | {
      ok: false;
      reason:
        | 'MISSING_HEADER'
        | 'UNSUPPORTED_SPECVERSION'
        | 'UNSUPPORTED_CONTENT_TYPE'
        | 'INVALID_HEADER';
      details: string[];
    };

function headerText(value: KafkaHeaderValue): string | undefined {
  if (value === undefined) return undefined;
  // A repeated header: the binding allows one value; take the first.
  const single = typeof value === 'string' || value instanceof Uint8Array ? value : value[0];
  if (single === undefined) return undefined;
  return typeof single === 'string' ? single : Buffer.from(single).toString('utf8');
}

/** The headers every message carries (the content type is written too, but not required to read). */
export const REQUIRED_CE_HEADERS = [
  CE_HEADERS.specversion,
  CE_HEADERS.id,
  CE_HEADERS.type,
  CE_HEADERS.source,
  CE_HEADERS.subject,
  CE_HEADERS.time,
] as const;

export function fromKafkaHeaders(headers: KafkaHeaders): FromHeadersResult {
  const read = (name: string) => headerText(headers[name]);
  const missing = REQUIRED_CE_HEADERS.filter((name) => read(name) === undefined);
  if (missing.length > 0) return { ok: false, reason: 'MISSING_HEADER', details: missing };
  if (read(CE_HEADERS.specversion) !== CE_SPECVERSION) {
    return {
      ok: false,
      reason: 'UNSUPPORTED_SPECVERSION',
      details: [String(read(CE_HEADERS.specversion))],
    };
  }
  const contentType = read(CE_HEADERS.contentType);
  if (
    contentType !== undefined &&
    contentType.split(';')[0]?.trim().toLowerCase() !== CE_CONTENT_TYPE
  ) {
    return { ok: false, reason: 'UNSUPPORTED_CONTENT_TYPE', details: [contentType] };
  }
  const candidate: Record<string, string | undefined> = {
    id: read(CE_HEADERS.id),
    type: read(CE_HEADERS.type),
    source: read(CE_HEADERS.source),
    subject: read(CE_HEADERS.subject),
    time: read(CE_HEADERS.time),
    traceparent: read(CE_HEADERS.traceparent),
    tracestate: read(CE_HEADERS.tracestate),
  };
  // A broken trace context must not make a message unreadable: drop it (and its tracestate).
  if (candidate.traceparent !== undefined && !isValidTraceparent(candidate.traceparent)) {
    delete candidate.traceparent;
    delete candidate.tracestate;
  }
  for (const key of ['traceparent', 'tracestate']) {
    if (candidate[key] === undefined) delete candidate[key];
  }
  const parsed = CloudEventEnvelope.safeParse(candidate);
  if (!parsed.success) {
    return {
      ok: false,
      reason: 'INVALID_HEADER',
      details: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
    };
  }
  return { ok: true, envelope: parsed.data };
}
