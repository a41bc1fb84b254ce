import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { newPgClient } from '@payments/database';
import { REPO_ROOT } from './processes';

/**
 * The replicated PostgreSQL of deploy/local/postgres-ha/pg-ha.sh (a pg_auto_failover monitor, a
 * primary and a synchronous standby), as the failover suite, the demo's `--ha` part and the
 * replication bench drive it: started around them by scripts/with-pg-ha.sh, which exports
 * DATABASE_HA_URL (the multi-host URL, target_session_attrs=read-write) and PG_HA_PORT (the
 * monitor's port, which pg-ha.sh's commands act on).
 */
const execFileAsync = promisify(execFile);
export const PG_HA_SH = path.join(REPO_ROOT, 'deploy/local/postgres-ha/pg-ha.sh');
export const WITH_PG_HA_SH = path.join(REPO_ROOT, 'scripts/with-pg-ha.sh');

/** DATABASE_HA_URL, or an error saying how to get one. */
export function haUrl(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const url = env['DATABASE_HA_URL'];
  if (url === undefined || url === '') {
    throw new Error(
      'DATABASE_HA_URL is not set: run inside scripts/with-pg-ha.sh (npm run test:failover, npm run demo -- --ha)',
    );
  }
  return url;
}

/** The URL with another database name (the path of a multi-host URL, which WHATWG URL refuses). */
export function withDatabase(url: string, name: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^/?#]*)(?:\/[^?#]*)?/, `$1/${name}`);
}

/** A pg-ha.sh command (`primary`, `kill-primary`, `rejoin N`, `heal`, ...); its stdout, trimmed. */
export async function pgHa(...args: string[]): Promise<string> {
  try {
    const { stdout } = await execFileAsync('bash', [PG_HA_SH, ...args], {
      cwd: REPO_ROOT,
      env: process.env,
      timeout: 180_000,
    });
    return stdout.trim();
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`pg-ha.sh ${args.join(' ')} failed:\n${stdout}${stderr}`);
  }
}

/**
 * Waits until a client of the multi-host URL gets a read-write session (as the apps' pools do
 * after a failover); resolves with the time it did (Date.now()).
 */
export async function waitForWritablePrimary(url: string, pollMs = 200): Promise<number> {
  for (;;) {
    const client = newPgClient(url);
    client.on('error', () => undefined);
    try {
      await client.connect();
      return Date.now();
    } catch {
      await new Promise((r) => setTimeout(r, pollMs));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
