import { z } from 'zod';
import {
  bool,
  commonVars,
  tracingVars,
  envVar,
  httpUrl,
  nonNegativeInt,
  port,
  positiveInt,
  versionVar,
} from '@payments/config';

/** Every variable the sandbox reads (README "Configuration"). */
export const sandboxConfigShape = {
  http: {
    port: envVar('HTTP_PORT', port(8080), { description: 'a TCP port (0 is not allowed here)' }),
    bodyLimitBytes: envVar('SANDBOX_BODY_LIMIT_BYTES', positiveInt(65536)),
  },
  merchantsFile: envVar(
    'SANDBOX_MERCHANTS_FILE',
    z.string().min(1).default('apps/gateway-sandbox/sandbox.merchants.json'),
    { description: 'a path to the merchants JSON file' },
  ),
  publicUrl: envVar('SANDBOX_PUBLIC_URL', httpUrl().optional(), {
    description: 'the http(s) origin merchants use to reach the sandbox',
  }),
  testControls: envVar('SANDBOX_TEST_CONTROLS', bool(false), {
    description: 'true to serve the test-only /_sandbox routes',
  }),
  // The spec: "The Accept header must be application/vnd.pay+json" — enforced by default; `form`
  // emulates the real gateway's legacy form-encoded answer to clients that omit it (facts §1).
  acceptMode: envVar('SANDBOX_ACCEPT_MODE', z.enum(['form', 'reject']).default('reject'), {
    description: 'reject (406 without the JSON Accept, the default) or form (answer form-encoded)',
  }),
  oauthFailureStatus: envVar(
    'SANDBOX_OAUTH_FAILURE_STATUS',
    z
      .enum(['401', '403'])
      .default('401')
      .transform((v) => (v === '403' ? 403 : 401)),
    { description: '401 or 403' },
  ),
  requireCustomerFields: envVar('SANDBOX_REQUIRE_CUSTOMER_FIELDS', bool(true)),
  settlementDelayMs: envVar('SANDBOX_SETTLEMENT_DELAY_MS', nonNegativeInt(86_400_000)),
  payoutCheckTtlMs: envVar('SANDBOX_PAYOUT_CHECK_TTL_MS', positiveInt(900_000)),
  tickMs: envVar('SANDBOX_TICK_MS', positiveInt(50)),
  callbacks: {
    maxAttempts: envVar('SANDBOX_CALLBACK_ATTEMPTS', positiveInt(30)),
    baseDelayMs: envVar('SANDBOX_CALLBACK_BASE_DELAY_MS', positiveInt(60_000)),
    maxDelayMs: envVar('SANDBOX_CALLBACK_MAX_DELAY_MS', positiveInt(61_200_000)),
    timeoutMs: envVar('SANDBOX_CALLBACK_TIMEOUT_MS', positiveInt(5_000)),
    reorderHoldMs: envVar('SANDBOX_CALLBACK_REORDER_HOLD_MS', positiveInt(500)),
  },
  version: versionVar,
  log: commonVars,
  tracing: tracingVars,
};

export type SandboxConfig = {
  readonly http: { readonly port: number; readonly bodyLimitBytes: number };
  readonly merchantsFile: string;
  readonly publicUrl: string | undefined;
  readonly testControls: boolean;
  readonly acceptMode: 'form' | 'reject';
  readonly oauthFailureStatus: 401 | 403;
  readonly requireCustomerFields: boolean;
  readonly settlementDelayMs: number;
  readonly payoutCheckTtlMs: number;
  readonly tickMs: number;
  readonly callbacks: {
    readonly maxAttempts: number;
    readonly baseDelayMs: number;
    readonly maxDelayMs: number;
    readonly timeoutMs: number;
    readonly reorderHoldMs: number;
  };
  readonly version: string;
  readonly log: {
    readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
    readonly logPretty: boolean;
  };
};
