import { UsageError } from './errors';

export interface AdminOptions {
  readonly adminUrl?: string;
  readonly token?: string;
  readonly json?: boolean;
}

function endpoint(options: AdminOptions): { base: string; token: string } {
  const base = options.adminUrl;
  const token = options.token;
  if (base === undefined)
    throw new UsageError('no admin API: pass --admin-url or set PAYMENTS_ADMIN_URL');
  if (token === undefined)
    throw new UsageError('no admin token: pass --token or set PAYMENTS_ADMIN_TOKEN');
  return { base: base.replace(/\/+$/, ''), token };
}

/** GET on the orchestrator's admin API; a non-2xx answer is an error carrying the API's reason. */
export function adminGet(path: string, options: AdminOptions): Promise<unknown> {
  return adminCall('GET', path, options);
}

/** POST of a JSON body on the orchestrator's admin API (same errors as adminGet). */
export function adminPost(path: string, body: unknown, options: AdminOptions): Promise<unknown> {
  return adminCall('POST', path, options, body);
}

async function adminCall(
  method: 'GET' | 'POST',
  path: string,
  options: AdminOptions,
  body?: unknown,
): Promise<unknown> {
  const { base, token } = endpoint(options);
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new UsageError(`the admin API at ${base} did not answer: ${(error as Error).message}`);
  }
  const text = await response.text();
  if (!response.ok)
    throw new UsageError(`the admin API answered ${response.status}: ${text.slice(0, 500)}`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(
      `the admin API answered ${response.status} with something that is not JSON`,
    );
  }
}

function scalar(value: unknown): boolean {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/**
 * A JSON document as an operator reads it: scalar fields as `name: value`, each list as a titled
 * section with one compact line per element, nested objects as compact JSON.
 */
export function render(document: unknown): string[] {
  if (typeof document !== 'object' || document === null) return [JSON.stringify(document)];
  const lines: string[] = [];
  const lists: Array<[string, unknown[]]> = [];
  for (const [name, value] of Object.entries(document)) {
    if (Array.isArray(value)) lists.push([name, value]);
    else lines.push(`${name}: ${scalar(value) ? String(value) : JSON.stringify(value)}`);
  }
  for (const [name, items] of lists) {
    lines.push('', `${name} (${items.length})`);
    for (const item of items) lines.push(`  ${scalar(item) ? String(item) : JSON.stringify(item)}`);
  }
  return lines;
}

/** `payments saga <id>`: one saga with its history, events and gateway requests. */
export async function showSaga(
  id: string,
  options: AdminOptions,
  out: (line: string) => void,
): Promise<void> {
  const saga = await adminGet(`/admin/sagas/${encodeURIComponent(id)}`, options);
  if (options.json === true) out(JSON.stringify(saga));
  else for (const line of render(saga)) out(line);
}

/** `payments sagas`: the admin API's search, filters passed as they are. */
export async function listSagas(
  filters: Readonly<Record<string, string | undefined>>,
  options: AdminOptions,
  out: (line: string) => void,
): Promise<void> {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters))
    if (value !== undefined) query.set(name, value);
  const page = await adminGet(
    `/admin/sagas${query.size > 0 ? `?${query.toString()}` : ''}`,
    options,
  );
  if (options.json === true) out(JSON.stringify(page));
  else for (const line of render(page)) out(line);
}
