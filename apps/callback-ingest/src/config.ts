import { z } from 'zod';
import {
  commonVars,
  tracingVars,
  ConfigError,
  envVar,
  httpUrl,
  kafkaVars,
  port,
  positiveInt,
  ResolvedConfig,
  secretValueOrFile,
  versionVar,
} from '@payments/config';
import { ControlKeyStore } from './domain/control-keys';

/**
 * Everything callback-ingest reads from its environment, validated once at boot. No database
 * (DESIGN.md). The control keys are secrets: never printed, never echoed in errors.
 */
export const callbackIngestConfigShape = {
  version: versionVar,
  http: {
    port: envVar('HTTP_PORT', port(3003)),
    maxBodyBytes: envVar('CALLBACK_MAX_BODY_BYTES', positiveInt(16_384), {
      description: 'a positive whole number of bytes (largest accepted form body)',
    }),
    maxUrlBytes: envVar('CALLBACK_MAX_URL_BYTES', positiveInt(8_192), {
      description: 'a positive whole number of bytes (longest accepted path + query)',
    }),
    maxParameters: envVar('CALLBACK_MAX_PARAMETERS', positiveInt(64), {
      description: 'a positive whole number of query/form parameters',
    }),
    requestLog: envVar(
      'HTTP_REQUEST_LOG',
      z.enum(['line', 'line-debug', 'child-logger']).default('line'),
      {
        description:
          'line (one line per finished request, no logger made per request), line-debug (the same, a successful request at debug) or child-logger (pino-http)',
      },
    ),
  },
  callbacks: {
    controlKeys: envVar('CALLBACK_CONTROL_KEYS', z.string().optional(), {
      secret: true,
      description: 'a JSON object {"<endpointId>": "<control key>"}',
    }),
    controlKeysFile: envVar('CALLBACK_CONTROL_KEYS_FILE', z.string().min(1).optional(), {
      description: 'a path to a JSON file {"<endpointId>": "<control key>"}',
    }),
    merchantReturnUrl: envVar('MERCHANT_RETURN_URL', httpUrl(), {
      description: 'an http(s) URL of the merchant page payers are sent back to',
    }),
    publishTimeoutMs: envVar('CALLBACK_PUBLISH_TIMEOUT_MS', positiveInt(5_000), {
      description: 'a positive whole number of ms to wait for the broker acknowledgement',
    }),
    hintWindowMs: envVar('CALLBACK_HINT_WINDOW_MS', positiveInt(60_000), {
      description:
        'a positive whole number of ms: at most one status-check hint per payment per window',
    }),
    hintCapacity: envVar('CALLBACK_HINT_CAPACITY', positiveInt(10_000), {
      description: 'a positive whole number of payments the hint limiter remembers',
    }),
  },
  log: commonVars,
  tracing: tracingVars,
  kafka: {
    ...kafkaVars,
    startWaitMs: envVar('KAFKA_START_WAIT_MS', positiveInt(10_000), {
      description:
        'a positive whole number of ms boot waits for the broker before serving anyway (503s until it is reachable)',
    }),
  },
};

export type CallbackIngestConfig = ResolvedConfig<typeof callbackIngestConfigShape>;

/** The validated configuration plus what boot derived from it (the control keys). */
export interface CallbackIngestSettings {
  readonly config: CallbackIngestConfig;
  readonly controlKeys: ControlKeyStore;
}

export const CALLBACK_INGEST_CONFIG = Symbol('CALLBACK_INGEST_CONFIG');

const APP = 'callback-ingest';

/**
 * Resolves the control keys from CALLBACK_CONTROL_KEYS or CALLBACK_CONTROL_KEYS_FILE (exactly
 * one). Throws ConfigError naming the variable; the key values never appear in the message.
 */
export function resolveControlKeys(
  config: CallbackIngestConfig,
  readFile?: (path: string) => string,
): ControlKeyStore {
  const { text, variable } = secretValueOrFile({
    app: APP,
    name: 'CALLBACK_CONTROL_KEYS',
    value: config.callbacks.controlKeys,
    file: config.callbacks.controlKeysFile,
    expected: 'the control keys',
    ...(readFile ? { readFile } : {}),
  });
  const result = ControlKeyStore.fromJson(text);
  if (!result.ok) {
    throw new ConfigError(APP, [{ variable, expected: result.problem, got: undefined }]);
  }
  return result.store;
}
