import type { IncomingMessage } from 'node:http';

/**
 * Reads a request body up to `limit` bytes. The JSON/urlencoded body parsers are off (the
 * sandbox needs the exact bytes), so every handler that takes a body reads it here.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (Number.isFinite(declared) && declared > limit) return 'too-large';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > limit) return 'too-large';
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

export function headerMap(req: IncomingMessage): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}
