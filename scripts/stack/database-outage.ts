import { Client } from 'pg';

/**
 * A database out for a while, as an app sees it: new connections refused and open ones cut
 * (`ALLOW_CONNECTIONS false`, then every backend of it terminated), until `end()` lets them in
 * again. What a PostgreSQL failover or a network partition does to one app; its handlers' retries
 * run out, so what they were handling goes to the dead-letter topic (issue #32 item 8).
 */
export class DatabaseOutage {
  private constructor(
    private readonly admin: Client,
    private readonly database: string,
  ) {}

  /** Starts the outage of the database `url` names, from its server's `postgres` database. */
  static async start(url: string): Promise<DatabaseOutage> {
    const parsed = new URL(url);
    const database = decodeURIComponent(parsed.pathname.slice(1));
    parsed.pathname = '/postgres';
    const admin = new Client({ connectionString: parsed.toString() });
    await admin.connect();
    const outage = new DatabaseOutage(admin, database);
    const name = admin.escapeIdentifier(database);
    await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
    // A connection whose backend read `datallowconn` before the ALTER committed finishes its
    // start-up and shows in pg_stat_activity only afterwards: terminate until two rounds, 50 ms
    // apart, find none left (one such connection left in an app's pool would make the outage partial).
    // (A terminated backend may still be listed for a moment: bounded at 100 rounds.)
    for (let quiet = 0, round = 0; quiet < 2 && round < 100; round++) {
      const { rowCount } = await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database],
      );
      quiet = rowCount === 0 ? quiet + 1 : 0;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return outage;
  }

  /** Lets connections in again. */
  async end(): Promise<void> {
    try {
      const name = this.admin.escapeIdentifier(this.database);
      await this.admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
    } finally {
      await this.admin.end();
    }
  }
}
