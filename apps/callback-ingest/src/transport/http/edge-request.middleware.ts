import { randomUUID } from 'node:crypto';
import { HttpStatus } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { ErrorBody } from '@payments/observability';

const rawQueries = new WeakMap<Request, string>();

/** The raw query string (after `?`, undecoded) that edgeRequestMiddleware took off the URL. */
export function takenQuery(req: Request): string | undefined {
  return rawQueries.get(req);
}

/**
 * Express-level middleware, installed before anything else (before the request logger):
 *  - refuses a path + query longer than `maxUrlBytes` with 414 in the JSON error shape (Node
 *    itself refuses request heads over 16 KiB with a bare 431);
 *  - keeps the query string out of the logs. pino-http serialises the request (URL and parsed
 *    query) when it first sees it, and a callback's query holds the control and the payer's name
 *    and e-mail. The raw query is kept aside for the handlers (`takenQuery`); the URL seen by
 *    everything after this middleware is the path, which is all the routing needs.
 * It answers the 414 itself: an error passed on from here would reach Express's default handler,
 * not Nest's filters.
 */
export function edgeRequestMiddleware(maxUrlBytes: number) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const url = req.url;
    const at = url.indexOf('?');
    const path = at < 0 ? url : url.slice(0, at);
    if (at >= 0) {
      rawQueries.set(req, url.slice(at + 1));
      req.url = path;
      req.originalUrl = path;
    }
    if (Buffer.byteLength(url, 'utf8') > maxUrlBytes) {
      const body: ErrorBody = {
        error: {
          code: 'uri-too-long',
          message: `path and query longer than ${maxUrlBytes} bytes`,
          errorId: randomUUID(),
        },
      };
      res.status(HttpStatus.URI_TOO_LONG).json(body);
      return;
    }
    next();
  };
}
