import { Inject, Injectable } from '@nestjs/common';
import { CONSOLE_CONFIG, type ConsoleConfig } from '../config';
import type {
  LiveEvent,
  LiveMinutes,
  ReconciliationRunDetail,
  ReconciliationRunSummary,
  SagaDetail,
  SagaPage,
  SagaSummary,
  AdminIdentity,
  CaseProposeBody,
} from '@payments/contracts';

export type {
  LiveEvent,
  LiveMinutes,
  ReconciliationRunDetail,
  ReconciliationRunSummary,
  SagaDetail,
  SagaPage,
  SagaSummary,
};

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

export type Principal = AdminIdentity;

export interface ActionAccepted {
  readonly auditId: string;
  readonly commandId: string;
  readonly commandType: string;
}

/** A dead letter as the admin API lists it: where, when and why — never the record's value. */
export interface DeadLetterView {
  readonly at: string;
  readonly time: string;
  readonly key: string | null;
  readonly reason: string;
  readonly error: string;
  readonly originalTopic?: string;
  readonly consumerGroup?: string;
  readonly replayedFrom?: string;
  readonly bytes: number;
}

export interface DeadLetterPage {
  readonly items: readonly DeadLetterView[];
  readonly total: number;
  readonly topics: readonly string[];
}

export interface ReplayDone {
  readonly auditId: string;
  readonly deadLetter: string;
  readonly replayedTo: string;
  readonly key: string | null;
}

interface MoneyView {
  readonly minor: number;
  readonly currency: string;
}

/** A case as `GET /admin/cases` answers it (issue 33): the operation a person must decide. */
export interface CaseView {
  readonly caseId: string;
  readonly flow: string;
  readonly sagaId: string;
  readonly endpointId: string;
  readonly requestId: string;
  readonly operation: string;
  readonly concern: string;
  readonly status: 'open' | 'proposed' | 'closed' | 'reopened';
  readonly requestedAmount?: MoneyView;
  readonly reportedAmount?: MoneyView;
  readonly evidence: ReadonlyArray<{
    readonly at: string;
    readonly source: string;
    readonly ref: string;
    readonly summary: string;
    readonly reportedAmount?: MoneyView;
  }>;
  readonly proposal?: CaseProposalView;
  readonly decided?: CaseProposalView & {
    readonly approvedBy: string;
    readonly approvedAt: string;
  };
  readonly audit: ReadonlyArray<{
    readonly at: string;
    readonly actor: string;
    readonly action: string;
    readonly decision?: string;
    readonly reason?: string;
    readonly evidenceSeen: number;
  }>;
  readonly openedAt: string;
  readonly updatedAt: string;
}

export interface CaseProposalView {
  readonly proposal: {
    readonly decision: string;
    readonly amount?: MoneyView;
    readonly amountWhy?: string;
  };
  readonly reason: string;
  readonly by: string;
  readonly at: string;
}

/**
 * One merchant's close of a day as `GET /admin/days/:day` answers it (its day-closed event, who
 * closed it). Fields this console does not know yet (a report extended with the gateway's totals,
 * differences, exceptions …) are passed on as they come and rendered generically.
 */
export interface DayCloseView {
  readonly closeId: string;
  readonly merchant: { readonly endpointId: string; readonly merchantId?: string };
  readonly day: string;
  readonly timeZone: string;
  readonly from: string;
  readonly to: string;
  readonly totals: ReadonlyArray<{
    readonly eventType: string;
    readonly currency: string;
    readonly count: number;
    readonly sumMinor: string;
  }>;
  readonly count: number;
  readonly lastMerchantSeq: number;
  readonly occurredAt: string;
  readonly closedBy: string;
  readonly [field: string]: unknown;
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

  reconciliationRuns(token: string): Promise<ApiAnswer<ReconciliationRunSummary[]>> {
    return this.call('GET', '/admin/reconciliation/runs?limit=50', token);
  }

  reconciliationRun(token: string, id: string): Promise<ApiAnswer<ReconciliationRunDetail>> {
    return this.call('GET', `/admin/reconciliation/runs/${encodeURIComponent(id)}`, token);
  }

  deadLetters(token: string): Promise<ApiAnswer<DeadLetterPage>> {
    return this.call('GET', '/admin/dead-letters?limit=200', token);
  }

  replayDeadLetter(token: string, at: string, reason: string): Promise<ApiAnswer<ReplayDone>> {
    return this.call('POST', '/admin/dead-letters/replay', token, { at, reason });
  }

  cases(token: string, status?: string): Promise<ApiAnswer<CaseView[]>> {
    const query = status === undefined ? '' : `?${new URLSearchParams({ status }).toString()}`;
    return this.call('GET', `/admin/cases${query}`, token);
  }

  case(token: string, id: string): Promise<ApiAnswer<CaseView>> {
    return this.call('GET', `/admin/cases/${encodeURIComponent(id)}`, token);
  }

  proposeCase(token: string, id: string, body: CaseProposeBody): Promise<ApiAnswer<CaseView>> {
    return this.call('POST', `/admin/cases/${encodeURIComponent(id)}/propose`, token, body);
  }

  approveCase(token: string, id: string): Promise<ApiAnswer<CaseView>> {
    return this.call('POST', `/admin/cases/${encodeURIComponent(id)}/approve`, token, {});
  }

  rejectCaseProposal(token: string, id: string, reason: string): Promise<ApiAnswer<CaseView>> {
    const path = `/admin/cases/${encodeURIComponent(id)}/reject-proposal`;
    return this.call('POST', path, token, { reason });
  }

  /** The closes of a day (every merchant, or one). */
  day(token: string, day: string, endpointId?: string): Promise<ApiAnswer<DayCloseView[]>> {
    const query =
      endpointId === undefined ? '' : `?${new URLSearchParams({ endpointId }).toString()}`;
    return this.call('GET', `/admin/days/${encodeURIComponent(day)}${query}`, token);
  }

  closeDay(token: string, day: string, endpointId?: string): Promise<ApiAnswer<DayCloseView[]>> {
    const body = endpointId === undefined ? {} : { endpointId };
    return this.call('POST', `/admin/days/${encodeURIComponent(day)}/close`, token, body);
  }

  liveMinutes(token: string, minutes: number): Promise<ApiAnswer<LiveMinutes>> {
    return this.call('GET', `/admin/live/minutes?minutes=${minutes}`, token);
  }

  /**
   * The live outcome stream (server-sent events), open until `signal` aborts it or the API ends
   * it. Only the wait for the answer's headers is bounded by the API timeout.
   */
  async liveEvents(
    token: string,
    signal: AbortSignal,
  ): Promise<ApiAnswer<ReadableStream<Uint8Array>>> {
    const connecting = new AbortController();
    const timer = setTimeout(() => connecting.abort(), this.config.adminApi.timeoutMs);
    try {
      const response = await this.request('GET', '/admin/live/events', token, {
        accept: 'text/event-stream',
        signal: AbortSignal.any([signal, connecting.signal]),
      });
      if (!response.ok || response.body === null) return await this.failure(response);
      return { ok: true, status: response.status, body: response.body };
    } catch (error) {
      return unreachable(error);
    } finally {
      clearTimeout(timer);
    }
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
      response = await this.request(method, path, token, {
        accept: 'application/json',
        signal: AbortSignal.timeout(this.config.adminApi.timeoutMs),
        body,
      });
    } catch (error) {
      return unreachable(error);
    }
    if (!response.ok) return this.failure(response);
    const parsed: unknown = await response.json().catch(() => undefined);
    return { ok: true, status: response.status, body: parsed as T };
  }

  private request(
    method: 'GET' | 'POST',
    path: string,
    token: string,
    options: { accept: string; signal: AbortSignal; body?: unknown },
  ): Promise<Response> {
    const { accept, signal, body } = options;
    return fetch(new URL(path, this.config.adminApi.url), {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal,
    });
  }

  /** A non-2xx answer: its error as the API states it. */
  private async failure(response: Response): Promise<Extract<ApiAnswer<never>, { ok: false }>> {
    const parsed: unknown = await response.json().catch(() => undefined);
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

function unreachable(error: unknown): Extract<ApiAnswer<never>, { ok: false }> {
  return {
    ok: false,
    status: 502,
    code: 'ADMIN_API_UNREACHABLE',
    message: `the admin API did not answer: ${(error as Error).message}`,
  };
}
