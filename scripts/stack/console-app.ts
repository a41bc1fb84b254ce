import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { tokenHash } from '../../apps/orchestrator/src/domain/admin/admin-tokens';
import { freePort, type RunningApp, startApp, waitForReady } from './processes';

/** A viewer's and an operator's admin API token, made up for a local stack (never reused). */
export interface ConsoleTokens {
  readonly viewer: string;
  readonly operator: string;
}

/** Two fresh tokens and the orchestrator's ADMIN_TOKENS naming them (hashes only). */
export function freshAdminTokens(): { tokens: ConsoleTokens; adminTokens: string } {
  const tokens = {
    viewer: `viewer-${randomBytes(18).toString('base64url')}`,
    operator: `operator-${randomBytes(18).toString('base64url')}`,
  };
  const adminTokens = JSON.stringify([
    { name: 'demo-viewer', role: 'viewer', sha256: tokenHash(tokens.viewer) },
    { name: 'demo-operator', role: 'operator', sha256: tokenHash(tokens.operator) },
  ]);
  return { tokens, adminTokens };
}

export interface RunningConsole {
  readonly app: RunningApp;
  readonly url: string;
  /** The tokens the stack made up, when it made them (not when the caller gave ADMIN_TOKENS). */
  readonly tokens?: ConsoleTokens;
}

/** Starts the console in front of `adminApiUrl` (plain HTTP on 127.0.0.1) and waits until ready. */
export async function startConsole(options: {
  readonly adminApiUrl: string;
  readonly workDir: string;
  readonly port?: number;
  readonly logLevel?: string;
  readonly tokens?: ConsoleTokens;
}): Promise<RunningConsole> {
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const app = startApp({
    app: 'console',
    env: {
      HTTP_PORT: String(port),
      LOG_LEVEL: options.logLevel ?? 'info',
      CONSOLE_ADMIN_API_URL: options.adminApiUrl,
      CONSOLE_SESSION_SECRET: randomBytes(32).toString('hex'),
      // Plain HTTP on 127.0.0.1; the default (true) sends the cookie over HTTPS only.
      CONSOLE_SECURE_COOKIE: 'false',
    },
    readyUrl: `${url}/health/ready`,
    logFile: path.join(options.workDir, 'logs', 'console.log'),
  });
  await waitForReady(app, 60_000);
  return { app, url, ...(options.tokens ? { tokens: options.tokens } : {}) };
}
