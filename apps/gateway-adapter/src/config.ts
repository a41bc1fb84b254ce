import { z } from 'zod';
import {
  bool,
  commonVars,
  tracingVars,
  databaseVars,
  envVar,
  httpUrl,
  kafkaVars,
  loadConfig,
  nonNegativeInt,
  port,
  positiveInt,
  ResolvedConfig,
  versionVar,
} from '@payments/config';

/**
 * Everything the gateway-adapter reads from its environment, validated once at boot. The signing
 * secrets (credentials registry) and the card-opening key are read from the files or values
 * named here and checked by `loadAdapterSecrets` (secrets.ts) before the app starts.
 */
export const gatewayAdapterConfigShape = {
  version: versionVar,
  http: { port: envVar('HTTP_PORT', port(3002)) },
  log: commonVars,
  tracing: tracingVars,
  kafka: kafkaVars,
  database: databaseVars,
  credentials: {
    file: envVar('GATEWAY_CREDENTIALS_FILE', z.string().min(1).optional(), {
      description: 'a path to the gateway credentials JSON file',
    }),
    inline: envVar('GATEWAY_CREDENTIALS', z.string().min(1).optional(), {
      description: 'the gateway credentials as inline JSON',
      secret: true,
    }),
  },
  cardKey: {
    inline: envVar('CARD_SEALING_PRIVATE_KEY', z.string().min(1).optional(), {
      description: 'the PEM RSA private key that opens sealed card data',
      secret: true,
    }),
    file: envVar('CARD_SEALING_PRIVATE_KEY_FILE', z.string().min(1).optional(), {
      description: 'a path to the PEM RSA private key that opens sealed card data',
    }),
  },
  callbackBaseUrl: envVar('CALLBACK_BASE_URL', httpUrl().default('http://127.0.0.1:3003'), {
    description:
      'the public http(s) base URL of callback-ingest (server_callback_url = <base>/callbacks/gateway/<endpointId>)',
  }),
  /** Defaults for every endpoint; a credentials entry may override them under `limits`. */
  limits: {
    maxConcurrent: envVar('GATEWAY_MAX_CONCURRENT', positiveInt(8), {
      description: 'a positive whole number of calls in flight per endpoint',
    }),
    ratePerSecond: envVar('GATEWAY_RATE_PER_SECOND', positiveInt(20), {
      description: 'a positive whole number of calls per second per endpoint',
    }),
    burst: envVar('GATEWAY_RATE_BURST', positiveInt(20), {
      description: 'a positive whole number of calls allowed at once after a quiet period',
    }),
    maxWaitMs: envVar('GATEWAY_LIMIT_MAX_WAIT_MS', nonNegativeInt(2000), {
      description: 'milliseconds a call may wait for a rate token or a slot before not-sent',
    }),
    // The endpoint's lane: beyond it a request is answered not-sent with retryAt, never queued.
    maxQueued: envVar('GATEWAY_MAX_QUEUED', positiveInt(1_000), {
      description:
        'a positive whole number of requests per endpoint accepted and not yet answered (waiting or in flight)',
    }),
    breakerFailures: envVar('GATEWAY_BREAKER_FAILURES', positiveInt(5), {
      description: 'consecutive transport failures that open an endpoint circuit breaker',
    }),
    breakerCooldownMs: envVar('GATEWAY_BREAKER_COOLDOWN_MS', positiveInt(30_000), {
      description: 'milliseconds an open breaker waits before one trial call',
    }),
    // Status queries (polls) share a bounded budget and never hold up money operations.
    statusRatePerSecond: envVar('GATEWAY_STATUS_RATE_PER_SECOND', positiveInt(5), {
      description: 'a positive whole number of status queries per second per endpoint',
    }),
    statusBurst: envVar('GATEWAY_STATUS_BURST', positiveInt(5), {
      description: 'a positive whole number of status queries allowed at once after a quiet period',
    }),
    moneyReservedTokens: envVar(
      'GATEWAY_MONEY_RESERVED_TOKENS',
      z.coerce
        .number({ error: 'a whole number >= 0, less than the rate burst' })
        .int('a whole number >= 0, less than the rate burst')
        .min(0, 'a whole number >= 0, less than the rate burst')
        .optional(),
      {
        description:
          'tokens of the endpoint rate limit a status query never takes (default: half the burst, rounded down)',
      },
    ),
    statusMinIntervalMs: envVar('GATEWAY_STATUS_MIN_INTERVAL_MS', nonNegativeInt(1_000), {
      description: 'milliseconds between two status queries for one payment',
    }),
  },
  /**
   * The gateway sees one rate per endpoint, whatever the number of adapter replicas: each replica
   * holds its share (README "Status queries").
   */
  replicas: envVar('GATEWAY_ADAPTER_REPLICAS', positiveInt(1), {
    description:
      "how many replicas of the adapter run: each takes 1/n of every endpoint's rate, burst and status rate, so together they stay within what the gateway allows",
  }),
  handoff: {
    leaseMs: envVar('GATEWAY_HANDOFF_LEASE_MS', positiveInt(15_000), {
      description:
        'milliseconds a replica that stopped renewing still owns the requests it accepted; then another answers them unknown',
    }),
    finishBatch: envVar('GATEWAY_HANDOFF_FINISH_BATCH', positiveInt(100), {
      description:
        'most answered hand-off rows removed by one statement: answers finishing while a removal is in flight wait and go in the next one (1 = a statement per answer)',
    }),
    preparedStatements: envVar('GATEWAY_PREPARED_STATEMENTS', bool(true), {
      description:
        'true: the hand-off and the removal of answered hand-offs run as named prepared statements (parsed and planned once per connection); false: through TypeORM, parsed and planned every time',
    }),
    claimAtHandoff: envVar('GATEWAY_CLAIM_AT_HANDOFF', bool(true), {
      description:
        "true: a money operation's sent-requests claim is written by the hand-off's own statement (one statement and commit per request; released if the request is then not sent); false: by a statement of its own just before the call",
    }),
  },
  transport: {
    connectTimeoutMs: envVar('GATEWAY_CONNECT_TIMEOUT_MS', positiveInt(5_000)),
    responseTimeoutMs: envVar('GATEWAY_RESPONSE_TIMEOUT_MS', positiveInt(30_000), {
      description: 'milliseconds to wait for reply headers (and between body chunks)',
    }),
  },
};

export type GatewayAdapterConfig = ResolvedConfig<typeof gatewayAdapterConfigShape>;

/** The hand-off settings alone, from `env` (defaults for what it leaves out): for the db-specs. */
export function handoffSettings(
  env: Readonly<Record<string, string>> = {},
): Pick<GatewayAdapterConfig, 'handoff'> {
  return loadConfig('gateway-adapter', { handoff: gatewayAdapterConfigShape.handoff }, env);
}

export const GATEWAY_ADAPTER_CONFIG = Symbol('GATEWAY_ADAPTER_CONFIG');
