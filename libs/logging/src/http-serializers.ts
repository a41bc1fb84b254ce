import { scrubValue } from './scrub';

/**
 * What an HTTP request line in the log may carry. pino-http's default serializer writes the whole
 * URL, the parsed query and every header; on the callback edge the query holds checksums, names
 * and e-mails. Request logs keep the method, the path, the names (not values) of query
 * parameters and a short allow-list of headers, all through the scrubber: pino-http binds the
 * serialised request to a child logger, and a child's bindings never reach the logger's
 * `formatters.log` (the scrubber every other line goes through), so a card number typed into a
 * path or a user-agent would otherwise be written as it came.
 */
export interface SerializableRequest {
  readonly id?: unknown;
  readonly method?: string;
  readonly url?: string;
  readonly headers?: Readonly<Record<string, string | string[] | undefined>>;
  readonly raw?: { readonly url?: string };
}

const LOGGED_HEADERS = ['user-agent', 'content-type', 'content-length', 'x-correlation-id'];

export function serializeRequest(req: SerializableRequest): Record<string, unknown> {
  const url = req.url ?? req.raw?.url ?? '';
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  const queryKeys =
    queryStart === -1 ? [] : [...new Set(new URLSearchParams(url.slice(queryStart + 1)).keys())];
  const headers: Record<string, unknown> = {};
  for (const name of LOGGED_HEADERS) {
    const value = req.headers?.[name];
    if (value !== undefined) headers[name] = value;
  }
  return scrubValue({
    id: req.id,
    method: req.method,
    path,
    ...(queryKeys.length > 0 ? { queryKeys } : {}),
    headers,
  }) as Record<string, unknown>;
}

export function serializeResponse(res: { readonly statusCode?: number }): Record<string, unknown> {
  return { statusCode: res.statusCode };
}
