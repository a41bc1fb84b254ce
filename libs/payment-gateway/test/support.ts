import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import OAuth from 'oauth-1.0a';
import type { OAuthSignInput } from '../src';

export interface Vector {
  id: string;
  kind: string;
  inputs: Record<string, unknown>;
  expected: Record<string, unknown>;
  signing_string?: string;
}

/** The published vectors, read from the shared docs next to the repository. */
export function loadVectors(): Vector[] {
  const file = path.resolve(__dirname, '../../../../shared/vectors/public-vectors.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { vectors: Vector[] }).vectors;
}

export function vector(id: string): Vector {
  const v = loadVectors().find((x) => x.id === id);
  if (!v) throw new Error(`vector ${id} missing`);
  return v;
}

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface TestServer {
  server: Server;
  port: number;
  baseUrl: string;
  requests: Recorded[];
  close(): Promise<void>;
}

/** A local HTTP server on 127.0.0.1 (port 0) whose handler gets the fully read request. */
export async function startServer(
  handler: (req: Recorded, res: ServerResponse, raw: IncomingMessage) => void,
): Promise<TestServer> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec: Recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(rec);
      handler(rec, res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    baseUrl: `http://127.0.0.1:${port}/paynet`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Parses `OAuth k="v", k2="v2"` into decoded values. */
export function parseOAuthHeader(header: string): Record<string, string> {
  if (!header.startsWith('OAuth ')) throw new Error('not an OAuth header');
  const out: Record<string, string> = {};
  for (const part of header.slice(6).split(/,\s*/)) {
    const m = /^([A-Za-z0-9_]+)="([^"]*)"$/.exec(part);
    if (!m) throw new Error(`bad header part ${part}`);
    out[m[1]] = decodeURIComponent(m[2]);
  }
  return out;
}

/** Independent RFC 3986 encoder for tests (byte-wise, not built on encodeURIComponent). */
export function refEncode(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Decodes an x-www-form-urlencoded body where `%20` is the space encoding. */
export function parseBody(body: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (body === '') return out;
  for (const pair of body.split('&')) {
    const eq = pair.indexOf('=');
    out[decodeURIComponent(pair.slice(0, eq))] = decodeURIComponent(pair.slice(eq + 1));
  }
  return out;
}

/**
 * The OAuth signing the client did through oauth-1.0a before it had its own RFC 5849 code: the
 * reference the new code is compared with (oauth.spec.ts) and measured against
 * (bench/payment-gateway.bench.ts). Repeated names go in as arrays (oauth-1.0a sorts them).
 */
export function oauth10aReferenceSign(input: OAuthSignInput): {
  baseString: string;
  authorization: string;
} {
  const data: Record<string, string | string[]> = {};
  const pairs = Array.isArray(input.params)
    ? (input.params as ReadonlyArray<readonly [string, string]>)
    : Object.entries(input.params as Readonly<Record<string, string>>);
  for (const [k, v] of pairs) {
    const seen = Object.prototype.hasOwnProperty.call(data, k) ? data[k] : undefined;
    data[k] = seen === undefined ? v : [...(Array.isArray(seen) ? seen : [seen]), v];
  }
  let baseString = '';
  const oauth = new OAuth({
    consumer: { key: input.consumerKey, secret: '' },
    signature_method: input.signer.method,
    hash_function: (base: string) => {
      baseString = base;
      return input.signer.sign(base);
    },
  });
  oauth.getNonce = () => input.nonce;
  oauth.getTimeStamp = () => input.timestampSeconds;
  const authorized = oauth.authorize({ url: input.url, method: 'POST', data }) as unknown as Record<
    string,
    string
  >;
  const header: Record<string, string> = {};
  for (const [k, v] of Object.entries(authorized)) if (k.startsWith('oauth_')) header[k] = v;
  return {
    baseString,
    authorization: oauth.toHeader(header as unknown as OAuth.Authorization).Authorization,
  };
}
