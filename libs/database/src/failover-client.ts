import { Client, type ClientConfig } from 'pg';
import {
  type DatabaseHost,
  type DatabaseUrl,
  needsPrimaryResolution,
  parseDatabaseUrl,
} from './database-url';

/** No host of a multi-host URL accepted a read-write session (a failover in progress, or all down). */
export class NoWritablePrimaryError extends Error {
  readonly code = 'NO_WRITABLE_PRIMARY';
  constructor(hosts: readonly DatabaseHost[], cause: unknown) {
    const last = cause instanceof Error ? `: ${cause.message}` : '';
    super(
      `no writable PostgreSQL primary among ${hosts.map((h) => `${h.host}:${h.port}`).join(',')}${last}`,
    );
    this.name = 'NoWritablePrimaryError';
  }
}

/** How long one host may take to accept a probe connection before the next is tried. */
const PROBE_TIMEOUT_MS = 2000;

type ConnectCallback = ((err: Error) => void) | ((err: null, client: Client) => void);

/** The pg settings of a parsed URL, without its hosts. */
export function baseClientConfig(url: DatabaseUrl): ClientConfig {
  const sslmode = url.params['sslmode'];
  return {
    ...(url.user === undefined ? {} : { user: url.user }),
    ...(url.password === undefined ? {} : { password: url.password }),
    ...(url.database === undefined ? {} : { database: url.database }),
    ...(sslmode === 'require' || sslmode === 'verify-ca' || sslmode === 'verify-full'
      ? { ssl: { rejectUnauthorized: sslmode !== 'require' } }
      : {}),
    keepAlive: true,
  };
}

/**
 * A node-postgres `Client` class that connects to the writable host of a multi-host URL, as
 * libpq's `target_session_attrs=read-write` does (node-postgres has no multi-host support): before
 * connecting it asks each host in turn — the one that was primary last time first — with a short
 * probe connection whether `transaction_read_only` is off, and connects to the first that says so.
 * After a failover the old primary's connections are dead (the pool drops them: pg-pool discards
 * a client that is no longer queryable) and new ones find the promoted standby. No host writable:
 * {@link NoWritablePrimaryError}, which the retry rules treat as "not applied" (retry.ts).
 *
 * The probe costs one extra short connection per pooled connection opened; single-host URLs
 * without target_session_attrs never use this class.
 */
export function failoverClientClass(url: DatabaseUrl): typeof Client {
  const hosts = url.hosts;
  const base = baseClientConfig(url);
  let lastPrimary = 0;

  async function findPrimary(): Promise<number> {
    let lastError: unknown;
    for (let k = 0; k < hosts.length; k++) {
      const index = (lastPrimary + k) % hosts.length;
      const target = hosts[index];
      const probe = new Client({
        ...base,
        host: target.host,
        port: target.port,
        connectionTimeoutMillis: PROBE_TIMEOUT_MS,
        application_name: 'primary-probe',
      });
      probe.on('error', () => undefined); // a probe that dies is simply not the primary
      try {
        await probe.connect();
        const { rows } = await probe.query<{ transaction_read_only: string }>(
          'SHOW transaction_read_only',
        );
        if (rows[0]?.transaction_read_only === 'off') {
          lastPrimary = index;
          return index;
        }
        lastError = new Error(`${target.host}:${target.port} is read-only (a standby)`);
      } catch (error) {
        lastError = error;
      } finally {
        await probe.end().catch(() => undefined);
      }
    }
    throw new NoWritablePrimaryError(hosts, lastError);
  }

  class FailoverClient extends Client {
    override connect(): Promise<Client>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<Client> | void {
      const connecting = findPrimary().then((index) => {
        const target = hosts[index];
        // Client#connect dials this.host/this.port (read from connectionParameters at construction).
        const self = this as unknown as {
          host: string;
          port: number;
          connectionParameters: { host: string; port: number };
        };
        self.host = target.host;
        self.port = target.port;
        self.connectionParameters.host = target.host;
        self.connectionParameters.port = target.port;
        return super.connect();
      });
      if (callback === undefined) return connecting;
      const done = callback as (err: Error | null, client?: Client) => void;
      connecting.then(
        (client) => done(null, client),
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
    }
  }
  return FailoverClient;
}

/**
 * A single (unpooled) pg Client for `url`: a plain Client for a single-host URL, a
 * {@link failoverClientClass} one for a multi-host or read-write URL. For the few dedicated
 * connections outside the pool (the outbox relay's LISTEN and leadership lock).
 */
export function newPgClient(url: string, extra: ClientConfig = {}): Client {
  const parsed = parseDatabaseUrl(url);
  if (!needsPrimaryResolution(parsed)) return new Client({ connectionString: url, ...extra });
  const first = parsed.hosts[0];
  const FailoverClient = failoverClientClass(parsed);
  return new FailoverClient({
    ...baseClientConfig(parsed),
    host: first.host,
    port: first.port,
    ...extra,
  });
}
