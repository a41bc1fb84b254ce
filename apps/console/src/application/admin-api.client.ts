import { Inject, Injectable } from '@nestjs/common';
import { CONSOLE_CONFIG, type ConsoleConfig } from '../config';
import type { SagaDetail, SagaPage, SagaSummary } from '@payments/contracts';

export type { SagaDetail, SagaPage, SagaSummary };

/** An answer of the admin API: its body when 2xx, else its status and its error as it states it. */
export type ApiAnswer<T> =
  | { readonly ok: true; readonly status: number; readonly body: T }
  | {
      readonly ok: false;
      readonly status: number;
      readonly code: string;
      readonly message: string;
      readonly errorId?: string;
    };

export interface Principal {
  readonly name: string;
  readonly role: 'viewer' | 'operator';
}

export interface ActionAccepted {
  readonly auditId: string;
  readonly commandId: string;
  readonly commandType: string;
}

/**
 * The orchestrator's admin API, called with the signed-in person's own token: the API decides
 * who may read and act, and validates every input; the console passes answers on as they are.
 */
@Injectable()
export class AdminApiClient {
  constructor(@Inject(CONSOLE_CONFIG) private readonly config: ConsoleConfig) {}

  whoami(token: string): Promise<ApiAnswer<Principal>> {
    return this.call('GET', '/admin/whoami', token);
  }

  /** `query` is passed as the person typed it: the API validates each filter and says what is wrong. */
  search(token: string, query: URLSearchParams): Promise<ApiAnswer<SagaPage>> {
    const text = query.toString();
    return this.call('GET', `/admin/sagas${text === '' ? '' : `?${text}`}`, token);
  }

  detail(token: string, id: string): Promise<ApiAnswer<SagaDetail>> {
    return this.call('GET', `/admin/sagas/${encodeURIComponent(id)}`, token);
  }

  act(
    token: string,
    id: string,
    action: string,
    reason: string,
  ): Promise<ApiAnswer<ActionAccepted>> {
    return this.call(
      'POST',
      `/admin/sagas/${encodeURIComponent(id)}/actions/${encodeURIComponent(action)}`,
      token,
      { reason },
    );
  }

  /** Whether the API answers at all (the console's readiness). */
  async reachable(): Promise<void> {
    const response = await fetch(new URL('/health/live', this.config.adminApi.url), {
      signal: AbortSignal.timeout(this.config.adminApi.timeoutMs),
    });
    if (!response.ok) throw new Error(`admin API health answered HTTP ${response.status}`);
  }

  private async call<T>(
    method: 'GET' | 'POST',
    path: string,
    token: string,
    body?: unknown,
  ): Promise<ApiAnswer<T>> {
    let response: Response;
    try {
      response = await fetch(new URL(path, this.config.adminApi.url), {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.config.adminApi.timeoutMs),
      });
    } catch (error) {
      return {
        ok: false,
        status: 502,
        code: 'ADMIN_API_UNREACHABLE',
        message: `the admin API did not answer: ${(error as Error).message}`,
      };
    }
    const parsed: unknown = await response.json().catch(() => undefined);
    if (response.ok) return { ok: true, status: response.status, body: parsed as T };
    const error = (parsed as { error?: { code?: unknown; message?: unknown; errorId?: unknown } })
      ?.error;
    return {
      ok: false,
      status: response.status,
      code: typeof error?.code === 'string' ? error.code : `HTTP_${response.status}`,
      message:
        typeof error?.message === 'string'
          ? error.message
          : `the admin API answered HTTP ${response.status}`,
      ...(typeof error?.errorId === 'string' ? { errorId: error.errorId } : {}),
    };
  }
}
