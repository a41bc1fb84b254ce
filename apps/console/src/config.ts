import { z } from 'zod';
import {
  bool,
  commonVars,
  envVar,
  httpUrl,
  port,
  positiveInt,
  ResolvedConfig,
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
  session: {
    secret: envVar(
      'CONSOLE_SESSION_SECRET',
      z.string().min(32, 'at least 32 characters (e.g. openssl rand -hex 32)'),
      {
        secret: true,
        description: 'at least 32 random characters: the key sealing session cookies',
      },
    ),
    ttlSeconds: envVar('CONSOLE_SESSION_TTL_SECONDS', positiveInt(8 * 3600), {
      description: 'a positive whole number of seconds a sign-in lasts (default 8 hours)',
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
