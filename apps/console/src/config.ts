import { z } from 'zod';
import {
  bool,
  ConfigError,
  commonVars,
  endpointIdList,
  envVar,
  httpUrl,
  port,
  positiveInt,
  ResolvedConfig,
  secretValueOrFile,
  tracingVars,
  versionVar,
} from '@payments/config';

/**
 * Everything the console reads from its environment, validated once at boot. It has no database
 * and no broker: every read and every action goes through the orchestrator's admin API, which
 * holds the rules and the roles. The session secret seals the session cookies: never printed.
 */
export const consoleConfigShape = {
  version: versionVar,
  http: { port: envVar('HTTP_PORT', port(3005)) },
  adminApi: {
    url: envVar('CONSOLE_ADMIN_API_URL', httpUrl(), {
      description: "an http(s) URL: the orchestrator's base URL serving /admin",
    }),
    timeoutMs: envVar('CONSOLE_ADMIN_API_TIMEOUT_MS', positiveInt(10_000), {
      description: 'a positive whole number of ms to wait for an admin API answer',
    }),
  },
  filters: {
    endpoints: envVar('CONSOLE_ENDPOINTS', endpointIdList, {
      description:
        'comma-separated endpoint ids the Endpoint filter offers a token that sees every merchant (empty: the field is typed); a merchant-scoped token is offered its own',
    }),
  },
  session: {
    secret: envVar(
      'CONSOLE_SESSION_SECRET',
      z.string().min(32, 'at least 32 characters (e.g. openssl rand -hex 32)').optional(),
      {
        secret: true,
        description: 'at least 32 random characters: the key sealing session cookies',
      },
    ),
    secretFile: envVar('CONSOLE_SESSION_SECRET_FILE', z.string().min(1).optional(), {
      description: 'a path to a file holding CONSOLE_SESSION_SECRET (a mounted Secret)',
    }),
    ttlSeconds: envVar('CONSOLE_SESSION_TTL_SECONDS', positiveInt(8 * 3600), {
      description: 'a positive whole number of seconds a sign-in lasts (default 8 hours)',
    }),
    idleSeconds: envVar('CONSOLE_SESSION_IDLE_SECONDS', positiveInt(30 * 60), {
      description:
        'a positive whole number of seconds without a request after which a session ends (default 30 minutes)',
    }),
    signInMaxFailures: envVar('CONSOLE_SIGN_IN_MAX_FAILURES', positiveInt(5), {
      description:
        'failed sign-ins allowed per client address and per token prefix within the window (default 5)',
    }),
    signInWindowSeconds: envVar('CONSOLE_SIGN_IN_WINDOW_SECONDS', positiveInt(15 * 60), {
      description: 'the window of the failed sign-in count, in seconds (default 15 minutes)',
    }),
    secureCookie: envVar('CONSOLE_SECURE_COOKIE', bool(true), {
      description:
        'true (default) sends the session cookie over HTTPS only (__Host- prefix); false for plain-HTTP local runs',
    }),
  },
  log: commonVars,
  tracing: tracingVars,
};

export type ConsoleConfig = ResolvedConfig<typeof consoleConfigShape>;

export const CONSOLE_CONFIG = Symbol('CONSOLE_CONFIG');

const SECRET_EXPECTED = 'at least 32 characters (e.g. openssl rand -hex 32)';

/**
 * The session secret from CONSOLE_SESSION_SECRET or the file CONSOLE_SESSION_SECRET_FILE names
 * (exactly one; trailing line breaks of the file dropped). Throws ConfigError naming the variable,
 * never the value.
 */
export function sessionSecret(config: ConsoleConfig, readFile?: (path: string) => string): string {
  const { text, variable } = secretValueOrFile({
    app: 'console',
    name: 'CONSOLE_SESSION_SECRET',
    value: config.session.secret,
    file: config.session.secretFile,
    expected: SECRET_EXPECTED,
    ...(readFile ? { readFile } : {}),
  });
  const secret = text.replace(/[\r\n]+$/, '');
  if (secret.length < 32) {
    throw new ConfigError('console', [{ variable, expected: SECRET_EXPECTED, got: undefined }]);
  }
  return secret;
}
