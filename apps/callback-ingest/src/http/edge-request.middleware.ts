import { HttpStatus } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { edgeError } from './edge-errors';

/**
 * Runs before every route:
 *  - refuses a path + query longer than `maxUrlBytes` with 414 (Node itself refuses request
 *    heads over 16 KiB with a bare 431);
 *  - keeps the query string out of the request log: pino-http logs `req.originalUrl` when the
 *    response ends, and a callback's query holds the control and the payer's name and e-mail.
 *    Routing and the handlers read `req.url`, which stays intact.
 */
export function edgeRequestMiddleware(maxUrlBytes: number) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const url = req.originalUrl || req.url;
    if (Buffer.byteLength(url, 'utf8') > maxUrlBytes) {
      req.originalUrl = url.split('?')[0]?.slice(0, 256) ?? '';
      throw edgeError(
        HttpStatus.URI_TOO_LONG,
        'uri-too-long',
        `path and query longer than ${maxUrlBytes} bytes`,
      );
    }
    const at = url.indexOf('?');
    if (at >= 0) req.originalUrl = `${url.slice(0, at)}?[query not logged]`;
    next();
  };
}
