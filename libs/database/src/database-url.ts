/**
 * A PostgreSQL URL with one or more hosts, libpq's multi-host form:
 * `postgres://user:password@host1:5432,host2:5433/db?target_session_attrs=read-write`.
 * node-postgres (pg 8) and TypeORM read one host only (the WHATWG URL parser refuses the list), so
 * the list is read here, once, and the writable host is found by {@link FailoverClient}.
 */
export interface DatabaseHost {
  readonly host: string;
  readonly port: number;
}

export interface DatabaseUrl {
  readonly hosts: readonly DatabaseHost[];
  readonly user?: string;
  readonly password?: string;
  readonly database?: string;
  /** `any` (libpq's default) or `read-write` (only a host that accepts writes). */
  readonly targetSessionAttrs: 'any' | 'read-write';
  /** Query parameters other than target_session_attrs (sslmode, ...), as given. */
  readonly params: Readonly<Record<string, string>>;
}

const URL_SHAPE = /^postgres(?:ql)?:\/\/(?:([^@/]*)@)?([^/?#]*)(?:\/([^?#]*))?(?:\?([^#]*))?$/;

function hostOf(text: string): DatabaseHost {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const [host, port] = bracketed
    ? [bracketed[1] ?? '', bracketed[2]]
    : ((): [string, string | undefined] => {
        const at = text.lastIndexOf(':');
        return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
      })();
  if (host === '') throw new Error('database URL: empty host');
  const number = port === undefined || port === '' ? 5432 : Number(port);
  if (!Number.isInteger(number) || number < 1 || number > 65535) {
    throw new Error(`database URL: invalid port '${port ?? ''}'`);
  }
  return { host: decodeURIComponent(host), port: number };
}

/** Parses a postgres:// URL with one or more comma-separated hosts; throws on anything else. */
export function parseDatabaseUrl(url: string): DatabaseUrl {
  const match = URL_SHAPE.exec(url.trim());
  if (!match)
    throw new Error(
      'database URL: expected postgres://[user[:password]@]host[:port][,host[:port]...]/db',
    );
  const [, credentials, hostList = '', database, query] = match;
  const hosts = hostList.split(',').map(hostOf);
  const params: Record<string, string> = {};
  let targetSessionAttrs: DatabaseUrl['targetSessionAttrs'] = 'any';
  for (const [key, value] of new URLSearchParams(query ?? '')) {
    if (key !== 'target_session_attrs') params[key] = value;
    else if (value === 'read-write' || value === 'any') targetSessionAttrs = value;
    else
      throw new Error(
        `database URL: target_session_attrs=${value} is not supported (any, read-write)`,
      );
  }
  const [user, password] = credentials === undefined ? [] : credentials.split(/:(.*)/s);
  return {
    hosts,
    ...(user ? { user: decodeURIComponent(user) } : {}),
    ...(password !== undefined && password !== ''
      ? { password: decodeURIComponent(password) }
      : {}),
    ...(database ? { database: decodeURIComponent(database) } : {}),
    targetSessionAttrs,
    params,
  };
}

/** True when the URL needs {@link FailoverClient}: several hosts, or only a writable one will do. */
export function needsPrimaryResolution(url: DatabaseUrl): boolean {
  return url.hosts.length > 1 || url.targetSessionAttrs === 'read-write';
}
