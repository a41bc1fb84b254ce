import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { databaseVars, loadConfig, processEnvironment } from '@payments/config';

/** The database name of a postgres:// URL (URL-decoded), or undefined when it has none. */
export function databaseNameOf(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('not a valid database URL');
  }
  const name = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  return name.length > 0 ? name : undefined;
}

/**
 * Throws unless the URL names a database whose name contains `test` (STYLE.md practice 9).
 * Every test that connects to PostgreSQL calls this first, so no test ever truncates, migrates
 * or drops a real database by mistake. Returns the database name.
 */
export function assertTestDatabase(url: string): string {
  const name = databaseNameOf(url);
  if (!name || !name.toLowerCase().includes('test')) {
    throw new Error(
      `refusing to use database ${JSON.stringify(name ?? '')} in a test: its name must contain "test"`,
    );
  }
  return name;
}

export interface TestDatabase {
  /** Name, e.g. payments_test_outbox_k3x9q2. */
  readonly name: string;
  /** URL of the new database on the same server, same credentials. */
  readonly url: string;
  /** Drops the database (terminating leftover connections). Safe to call twice. */
  drop(): Promise<void>;
}

/** The server the tests use: DATABASE_URL, or the local default. */
export function serverUrl(): string {
  return loadConfig('tests', { url: databaseVars.url }, processEnvironment()).url;
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(name)}`;
  return parsed.toString();
}

async function admin<T>(server: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: withDatabase(server, 'postgres') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates a fresh, empty database `payments_test_<prefix>_<random>` on the server of
 * DATABASE_URL (default local) and returns its URL and a `drop()`.
 */
export async function createTestDatabase(
  prefix: string,
  server: string = serverUrl(),
): Promise<TestDatabase> {
  const safePrefix = prefix
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 30);
  const name = `payments_test_${safePrefix}_${randomBytes(4).toString('hex')}`;
  const url = withDatabase(server, name);
  assertTestDatabase(url);
  await admin(server, (client) => client.query(`CREATE DATABASE "${name}"`));
  let dropped = false;
  return {
    name,
    url,
    drop: async () => {
      if (dropped) return;
      dropped = true;
      assertTestDatabase(url);
      await admin(server, (client) =>
        client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
      );
    },
  };
}
