/**
 * PostgreSQL for integration tests: a fresh database per suite, named payments_test_*, on the
 * server of DATABASE_URL (default the local one). Every helper refuses a database whose name
 * lacks "test".
 */
import { Client } from 'pg';
import { assertTestDatabase, createTestDatabase, TestDatabase } from '@payments/testing';

export { assertTestDatabase, createTestDatabase };
export type { TestDatabase };

/** Runs `work` with a connected pg client on a test database (refusing any other). */
export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  assertTestDatabase(url);
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
