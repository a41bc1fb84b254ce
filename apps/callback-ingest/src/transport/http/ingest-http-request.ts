import { HttpException } from '@nestjs/common';
import type { Request } from 'express';
import { activeTraceparent } from '@payments/observability';
import type {
  CallbackIngestService,
  IngestOutcome,
} from '../../application/callback-ingest.service';
import type { CallbackSource } from '../../domain/notification-id';
import { unknownEndpoint } from './edge-errors';
import { EdgeLimits, requestParams } from './request-params';

/**
 * What both entry points (gateway callback, browser return) do with a request before turning
 * the outcome into their own answer: refuse an unknown endpoint, read the parameters within the
 * edge limits, and hand them to the use case with the caller's `traceparent`. Each refusal here
 * is counted by its code, then thrown on to the controller's filter.
 */
export async function ingestHttpRequest(
  ingest: CallbackIngestService,
  limits: EdgeLimits,
  source: CallbackSource,
  endpointId: string,
  req: Request,
): Promise<IngestOutcome> {
  if (!ingest.isKnownEndpoint(endpointId)) {
    ingest.countRefused('unknown-endpoint');
    throw unknownEndpoint();
  }
  let params: Readonly<Record<string, string>>;
  try {
    params = await requestParams(req, limits);
  } catch (error) {
    ingest.countRefused(refusalCode(error));
    throw error;
  }
  // The request's server span when tracing is on (it continues the caller's traceparent).
  const header = req.headers.traceparent;
  const traceparent = activeTraceparent() ?? header;
  return ingest.ingest({
    endpointId,
    source,
    params,
    ...(typeof traceparent === 'string' ? { traceparent } : {}),
  });
}

/** The code of an edge refusal (`{ code }` body), for the refused-requests metric. */
function refusalCode(error: unknown): string {
  if (error instanceof HttpException) {
    const body = error.getResponse();
    if (typeof body === 'object' && body !== null && 'code' in body) {
      const code = body.code;
      if (typeof code === 'string') return code;
    }
  }
  return 'unreadable';
}
