import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import {
  CORRELATION_ID_HEADER,
  correlationIdFromHeaders,
  runWithBoundCorrelationId,
  runWithCorrelationId,
} from './correlation';
import { type SerializableRequest, serializeRequest, serializeResponse } from './http-serializers';

/** Paths whose successful requests are not logged (probes and scrapes every few seconds). */
const QUIET_PATHS: readonly string[] = ['/health/live', '/health/ready', '/metrics'];

export function isQuietPath(url: string | undefined): boolean {
  return QUIET_PATHS.includes((url ?? '').split('?')[0]);
}

type RequestWithId = IncomingMessage & { id?: unknown; originalUrl?: string };
type Next = (error?: unknown) => void;

/** The correlation id of a request: chosen once, remembered on `req.id`, echoed to the caller. */
export function requestCorrelationId(req: RequestWithId, res: ServerResponse): string {
  if (typeof req.id === 'string') return req.id;
  const id = correlationIdFromHeaders(req.headers);
  req.id = id;
  if (!res.headersSent) res.setHeader(CORRELATION_ID_HEADER, id);
  return id;
}

/** The level of a finished request's line: an error or a 5xx error, a 4xx warn, the rest info. */
export function requestLogLevel(statusCode: number, error: unknown): 'error' | 'warn' | 'info' {
  return error || statusCode >= 500 ? 'error' : statusCode >= 400 ? 'warn' : 'info';
}

/**
 * With pino-http (`child-logger`): its request logger already binds the correlation id, so the
 * mixin must not add it again.
 */
export function boundCorrelationMiddleware(
  req: RequestWithId,
  res: ServerResponse,
  next: Next,
): void {
  runWithBoundCorrelationId(requestCorrelationId(req, res), next);
}

/**
 * `line`: the correlation id in AsyncLocalStorage (every line written while handling the
 * request gets it from the logger's mixin) and, when the request has finished, one line with
 * the fields and level pino-http would write — but no logger made per request, and nothing
 * serialised unless the line's level is enabled. `successLevel`: the level of a request that
 * neither failed nor was refused (`debug` leaves an app's own line the one line per request at
 * info).
 */
export function requestLineMiddleware(logger: Logger, successLevel: 'info' | 'debug' = 'info') {
  return (req: RequestWithId, res: ServerResponse, next: Next): void => {
    const correlationId = requestCorrelationId(req, res);
    // A mounted middleware sees req.url without its mount path; originalUrl is the whole one.
    const url = req.originalUrl ?? req.url;
    const start = Date.now();
    let done = false;
    const finished = (error?: unknown) => {
      if (done) return;
      done = true;
      res.off('finish', finished);
      res.off('close', finished);
      res.off('error', finished);
      const request = { id: req.id, method: req.method, url, headers: req.headers };
      logRequestLine(logger, successLevel, request, res, correlationId, start, error);
    };
    // As pino-http: a probe's or a scrape's request is logged only when its response fails.
    if (!isQuietPath(url)) {
      res.on('finish', finished);
      res.on('close', finished);
    }
    res.on('error', finished);
    runWithCorrelationId(correlationId, next);
  };
}

function logRequestLine(
  logger: Logger,
  successLevel: 'info' | 'debug',
  req: SerializableRequest,
  res: ServerResponse,
  correlationId: string,
  start: number,
  error: unknown,
): void {
  const failed = error !== undefined || res.statusCode >= 500;
  const byStatus = requestLogLevel(res.statusCode, error);
  const level = byStatus === 'info' ? successLevel : byStatus;
  if (!logger.isLevelEnabled(level)) return;
  const fields: Record<string, unknown> = {
    correlationId,
    req: serializeRequest(req),
    res: serializeResponse(res),
    responseTime: Date.now() - start,
  };
  if (failed) {
    fields.err = error ?? new Error(`failed with status code ${res.statusCode}`);
    logger[level](fields, 'request errored');
  } else {
    logger[level](fields, 'request completed');
  }
}
