import { Pool, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';

export interface TransportOptions {
  /** Max sockets per origin (default 16). */
  readonly connections?: number;
  /** TCP+TLS connect timeout (default 5 000 ms). */
  readonly connectTimeoutMs?: number;
  /** Time to receive the reply headers once sent (default 30 000 ms). */
  readonly headersTimeoutMs?: number;
  /** Max idle time between body chunks (default 30 000 ms). */
  readonly bodyTimeoutMs?: number;
  /** Keep-alive idle timeout (default 4 000 ms). */
  readonly keepAliveTimeoutMs?: number;
  /** Reply body limit (default 1 MiB); larger → `unknown` / reply-too-large. */
  readonly maxReplyBytes?: number;
}

export const DEFAULT_TRANSPORT: Required<TransportOptions> = {
  connections: 16,
  connectTimeoutMs: 5_000,
  headersTimeoutMs: 30_000,
  bodyTimeoutMs: 30_000,
  keepAliveTimeoutMs: 4_000,
  maxReplyBytes: 1024 * 1024,
};

export type TransportResult =
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly headers: IncomingHttpHeaders;
      readonly body: string;
    }
  | { readonly kind: 'too-large'; readonly status: number }
  | { readonly kind: 'error'; readonly error: unknown; readonly closedBeforeSend?: boolean };

/** Builds the undici Pool options from our transport options (shared with the benchmark). */
export function poolOptions(o: Required<TransportOptions>): Pool.Options {
  return {
    connections: o.connections,
    pipelining: 1,
    keepAliveTimeout: o.keepAliveTimeoutMs,
    headersTimeout: o.headersTimeoutMs,
    bodyTimeout: o.bodyTimeoutMs,
    connect: { timeout: o.connectTimeoutMs },
  };
}

/** Drops a reply body we refuse to read; the abort error it emits is expected and swallowed. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** The body's chunks, or 'too-large' (the body dropped) once they pass `max` bytes. */
function collect(
  body: Dispatcher.ResponseData['body'],
  max: number,
): Promise<Buffer[] | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        discard(body);
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    });
    body.once('end', () => resolve(chunks));
    body.once('error', reject);
  });
}

/** One keep-alive undici Pool per origin; never throws — errors come back as data. */
export class GatewayTransport {
  private readonly pools = new Map<string, Pool>();
  private closed = false;
  readonly options: Required<TransportOptions>;

  constructor(options: TransportOptions = {}) {
    this.options = { ...DEFAULT_TRANSPORT, ...options };
  }

  private pool(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, poolOptions(this.options));
      this.pools.set(origin, pool);
    }
    return pool;
  }

  post(
    url: URL,
    headers: Readonly<Record<string, string>>,
    body: string,
    signal?: AbortSignal,
  ): Promise<TransportResult> {
    return this.send(url.origin, url.pathname, headers, body, signal);
  }

  /** {@link post} by origin and path (the client keeps both per operation: no URL per call). */
  async send(
    origin: string,
    path: string,
    headers: Readonly<Record<string, string>>,
    body: string,
    signal?: AbortSignal,
  ): Promise<TransportResult> {
    if (this.closed) {
      return {
        kind: 'error',
        error: Object.assign(new Error('transport closed'), { code: 'UND_ERR_CLOSED' }),
        closedBeforeSend: true,
      };
    }
    let res: Dispatcher.ResponseData;
    try {
      res = await this.pool(origin).request(
        signal
          ? { method: 'POST', path, headers, body, signal }
          : { method: 'POST', path, headers, body },
      );
    } catch (error) {
      return { kind: 'error', error };
    }
    const max = this.options.maxReplyBytes;
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      discard(res.body);
      return { kind: 'too-large', status: res.statusCode };
    }
    // Collected from 'data' events (an async iterator over the body costs a promise per chunk).
    let chunks: Buffer[] | 'too-large';
    try {
      chunks = await collect(res.body, max);
    } catch (error) {
      return { kind: 'error', error };
    }
    if (chunks === 'too-large') return { kind: 'too-large', status: res.statusCode };
    return {
      kind: 'response',
      status: res.statusCode,
      headers: res.headers,
      body: (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8'),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close()));
  }
}
