import { z } from 'zod';
import { envVar } from './config';

/** Reusable value schemas with readable expectations. */
export const port = (fallback: number) =>
  z.coerce
    .number({ error: 'a TCP port number (1-65535)' })
    .int('a TCP port number (1-65535)')
    .min(1, 'a TCP port number (1-65535)')
    .max(65535, 'a TCP port number (1-65535)')
    .default(fallback);

/** Comma-separated gateway endpoint ids (digits); empty: none. */
export const endpointIdList = z
  .string()
  .default('')
  .transform((text) =>
    text
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part !== ''),
  )
  .pipe(z.array(z.string().regex(/^\d{1,19}$/, 'an endpoint id (digits)')).max(1000));

export const positiveInt = (fallback: number, what = 'a positive whole number') =>
  z.coerce.number({ error: what }).int(what).positive(what).default(fallback);

export const nonNegativeInt = (fallback: number, what = 'a whole number >= 0') =>
  z.coerce.number({ error: what }).int(what).min(0, what).default(fallback);

export const bool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'one of true, false, 1, 0, yes, no' })
    .transform((v) => v === 'true' || v === '1' || v === 'yes')
    .default(fallback);

const HOST_PORT = /^[A-Za-z0-9.-]+:\d{1,5}$/;

export const brokerList = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((s) =>
      s
        .split(',')
        .map((b) => b.trim())
        .filter((b) => b.length > 0),
    )
    .pipe(
      z
        .array(z.string().regex(HOST_PORT, 'host:port'))
        .min(1, 'a comma-separated list of host:port'),
    );

export const postgresUrl = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .refine((s) => /^postgres(ql)?:\/\/[^\s]+$/.test(s), 'a postgres:// connection URL');

export const httpUrl = () =>
  z.string().refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'an http(s) URL');

export const logLevel = () =>
  z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info');

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/payments';
export const DEFAULT_KAFKA_BROKERS = '127.0.0.1:9092';

/** Variables every app shares. */
export const commonVars = {
  logLevel: envVar('LOG_LEVEL', logLevel(), {
    description: 'one of fatal, error, warn, info, debug, trace, silent',
  }),
  logPretty: envVar('LOG_PRETTY', bool(false), { description: 'true for human-readable logs' }),
};

/**
 * OpenTelemetry tracing (libs/observability `startTracing`), standard OTel variable names. Off by
 * default: spans are recorded and exported only with OTEL_TRACES_EXPORTER=otlp and an endpoint.
 */
export const tracingVars = {
  exporter: envVar(
    'OTEL_TRACES_EXPORTER',
    z.enum(['none', 'otlp'], { error: 'one of none, otlp' }).default('none'),
    {
      description:
        'none (default: no spans) or otlp (OTLP/HTTP JSON to OTEL_EXPORTER_OTLP_ENDPOINT)',
    },
  ),
  endpoint: envVar('OTEL_EXPORTER_OTLP_ENDPOINT', httpUrl().optional(), {
    description: 'the collector base URL (spans go to <url>/v1/traces); needed when exporting',
  }),
  serviceName: envVar('OTEL_SERVICE_NAME', z.string().min(1).optional(), {
    description: "the spans' service.name (default: the app's name)",
  }),
  sampleRatio: envVar(
    'OTEL_TRACES_SAMPLER_ARG',
    z.coerce
      .number({ error: 'a number from 0 to 1' })
      .min(0, 'a number from 0 to 1')
      .max(1, 'a number from 0 to 1')
      .default(1),
    { description: "a number from 0 to 1: the share of new traces sampled (a caller's is kept)" },
  ),
  exportDelayMs: envVar('OTEL_BSP_SCHEDULE_DELAY', positiveInt(5_000), {
    description: 'a positive whole number of ms between span exports',
  }),
};

export const kafkaVars = {
  brokers: envVar('KAFKA_BROKERS', brokerList(DEFAULT_KAFKA_BROKERS), {
    description: 'a comma-separated list of host:port (e.g. 127.0.0.1:9092)',
  }),
  clientId: envVar('KAFKA_CLIENT_ID', z.string().optional()),
  topicPartitions: envVar('KAFKA_TOPIC_PARTITIONS', positiveInt(6), {
    description: 'a positive whole number of partitions for topics created at start',
  }),
  partitionsConsumedConcurrently: envVar('KAFKA_CONSUMER_CONCURRENCY', positiveInt(3), {
    description: 'a positive whole number of partitions handled at once',
  }),
  // The names below match libs/kafka's KafkaModuleOptions: apps pass them on as they are.
  replicationFactor: envVar('KAFKA_REPLICATION_FACTOR', positiveInt(1), {
    description: 'a positive whole number of replicas for topics created at start (3 on a cluster)',
  }),
  minInsyncReplicas: envVar('KAFKA_MIN_INSYNC_REPLICAS', positiveInt(1), {
    description: 'a positive whole number: min.insync.replicas of topics created at start',
  }),
  sessionTimeoutMs: envVar('KAFKA_SESSION_TIMEOUT_MS', positiveInt(6_000), {
    description: 'a positive whole number of ms before a silent group member is dropped',
  }),
  heartbeatIntervalMs: envVar('KAFKA_HEARTBEAT_INTERVAL_MS', positiveInt(1_000), {
    description: 'a positive whole number of ms between consumer heartbeats',
  }),
  maxMessageBytes: envVar('KAFKA_MAX_MESSAGE_BYTES', positiveInt(1_048_576), {
    description: 'a positive whole number of bytes: larger consumed values are dead-lettered',
  }),
  maxValueDepth: envVar('KAFKA_MAX_VALUE_DEPTH', positiveInt(64), {
    description: 'a positive whole number: values nested deeper are dead-lettered',
  }),
};

export const databaseVars = {
  url: envVar('DATABASE_URL', postgresUrl(DEFAULT_DATABASE_URL), {
    description: 'a postgres:// connection URL',
    secret: false,
  }),
  poolSize: envVar('DATABASE_POOL_SIZE', positiveInt(10), {
    description: 'a positive whole number of connections',
  }),
  migrateOnBoot: envVar('DATABASE_MIGRATE_ON_BOOT', bool(true), {
    description: 'true to apply pending migrations at boot (one of true, false, 1, 0, yes, no)',
  }),
};

/** The build version every log line carries. */
export const versionVar = envVar('APP_VERSION', z.string().min(1).default('0.1.0-dev'), {
  description: 'the build version shown in logs',
});

/**
 * A variable that holds JSON, with its default as JSON text: parsed ("not valid JSON" otherwise),
 * then checked by the schema given to `.pipe(...)`.
 */
export function jsonText(defaultJson: string) {
  return z
    .string()
    .default(defaultJson)
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'not valid JSON' });
        return z.NEVER;
      }
    });
}
