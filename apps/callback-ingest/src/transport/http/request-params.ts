import { HttpStatus } from '@nestjs/common';
import type { Request } from 'express';
import { collectParams } from '../../domain/params';
import { edgeError } from './edge-errors';
import { takenQuery } from './edge-request.middleware';

export interface EdgeLimits {
  readonly maxBodyBytes: number;
  readonly maxParameters: number;
}

const FORM = 'application/x-www-form-urlencoded';

/** The raw query string of the request (the part after `?`, undecoded). */
export function rawQuery(req: Request): string {
  const taken = takenQuery(req);
  if (taken !== undefined) return taken;
  const at = req.url.indexOf('?');
  return at < 0 ? '' : req.url.slice(at + 1);
}

/**
 * Reads the raw body (Nest's body parser is off: the edge reads and verifies the raw request),
 * refusing more than `maxBytes` — early from Content-Length, or while streaming a chunked body.
 */
export async function readRawBody(req: Request, maxBytes: number): Promise<Buffer> {
  const tooLarge = () => {
    // The rest of the body is not read: close the connection after the answer.
    req.res?.setHeader('Connection', 'close');
    return edgeError(
      HttpStatus.PAYLOAD_TOO_LARGE,
      'payload-too-large',
      `body larger than ${maxBytes} bytes`,
    );
  };
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function decodeUtf8(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw edgeError(HttpStatus.BAD_REQUEST, 'malformed-callback', 'body is not UTF-8');
  }
}

/**
 * Every parameter of a GET (query) or POST (query, then form body) request. A POST must be
 * form-encoded (415 otherwise); limits give 413 (body) and 400 (parameter count).
 */
export async function requestParams(
  req: Request,
  limits: EdgeLimits,
): Promise<Readonly<Record<string, string>>> {
  const parts = [rawQuery(req)];
  if (req.method === 'POST') {
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    const body = await readRawBody(req, limits.maxBodyBytes);
    if (body.length > 0 && type !== FORM) {
      throw edgeError(
        HttpStatus.UNSUPPORTED_MEDIA_TYPE,
        'unsupported-media-type',
        `a POST body must be ${FORM}`,
      );
    }
    parts.push(decodeUtf8(body));
  }
  const result = collectParams(parts, limits.maxParameters);
  if (!result.ok) throw edgeError(HttpStatus.BAD_REQUEST, result.code, result.message);
  return result.params;
}
