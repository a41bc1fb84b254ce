import type {
  ActionAccepted,
  ApiAnswer,
  SagaDetail,
  SagaPage,
  SagaSummary,
} from '../../application/admin-api.client';
import type { SignedInUser } from '../../application/session';
import { declineReason } from './decline-reasons';
import { eventFields, formatMoney } from './format';
import { CURRENCIES, FLOWS, STATUSES } from './filters';
import { Html, html, tableHead } from './html';

/** The form field every POST carries (checked against the session by CsrfGuard). */
export const CSRF_FIELD = '_csrf';

export type ApiError = Extract<ApiAnswer<unknown>, { ok: false }>;

export function apiError(error: ApiError): Html {
  return html`<div class="error" role="alert" id="apiError">
    <strong>${error.code}</strong> (HTTP ${error.status}):
    ${error.message}${error.errorId ? html` <small>error id ${error.errorId}</small>` : ''}
  </div>`;
}

export function layout(
  title: string,
  body: Html,
  session: { user?: SignedInUser; csrf: string },
): Html {
  const user = session.user;
  return html`<!DOCTYPE html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta
          name="htmx-config"
          content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"selfRequestsOnly":true}'
        />
        <title>${title} · payments console</title>
        <link rel="stylesheet" href="/assets/console.css" />
        <script src="/assets/htmx.min.js" defer></script>
        <script src="/assets/console.js" defer></script>
      </head>
      <body>
        <header>
          <strong>payments console</strong>
          ${
            user
              ? html`<a href="/sagas">Find</a>
                  <a href="/sagas?unknownOlderThanSeconds=3600" id="viewUnknown"
                    >Unknown for over an hour</a
                  >
                  <a href="/sagas?flow=payout&amp;status=registered" id="viewPayouts"
                    >Payouts awaiting approval</a
                  >
                  <a href="/sagas?flow=recurring-schedule" id="viewSchedules">Schedules</a>
                  <a href="/watch" id="viewWatch">Watch</a>
                  <a href="/dead-letters" id="viewDeadLetters">Dead letters</a>
                  <a href="/reconciliation" id="viewReconciliation">Reconciliation</a>
                  <a href="/cases" id="viewCases">Cases</a>
                  <a href="/day-close" id="viewDayClose">Day close</a>
                  <form method="post" action="/sign-out">
                    <input type="hidden" name="${CSRF_FIELD}" value="${session.csrf}" />
                    <span id="who">${user.name} (${user.role})</span>
                    <span id="scope" class="scope">${scopeText(user.scope)}</span>
                    <button type="submit" id="signOut">Sign out</button>
                  </form>`
              : ''
          }
        </header>
        <main>${body}</main>
      </body>
    </html> `;
}

export function signInPage(csrf: string, error?: ApiError | string): Html {
  return html`<h1>Sign in</h1>
    <p>
      Paste your admin API token. It is checked with the admin API and kept only in a sealed,
      HttpOnly session cookie: no script on a page can read it.
    </p>
    ${
      typeof error === 'string'
        ? html`<div class="error" role="alert" id="apiError">${error}</div>`
        : error
          ? apiError(error)
          : ''
    }
    <form method="post" action="/sign-in" id="signInForm">
      <input type="hidden" name="${CSRF_FIELD}" value="${csrf}" />
      <label
        >Admin API token <input type="password" name="token" autocomplete="off" required
      /></label>
      <button type="submit">Sign in</button>
    </form>`;
}

const FILTERS: ReadonlyArray<[name: string, label: string, type: string]> = [
  ['id', 'Saga id', 'text'],
  ['merchantOrderId', 'Merchant order id', 'text'],
  ['flow', 'Flow', 'select'],
  ['status', 'Status', 'select'],
  ['endpoint', 'Endpoint', 'text'],
  ['currency', 'Currency', 'select'],
  ['minAmount', 'Min amount (e.g. 42.00)', 'text'],
  ['maxAmount', 'Max amount (e.g. 42.00)', 'text'],
  ['from', 'Created from (ISO 8601)', 'text'],
  ['to', 'Created before (ISO 8601)', 'text'],
  ['unknownOlderThanSeconds', 'Unknown for more than (s)', 'text'],
  ['limit', 'Page size', 'text'],
];

function amountOf(s: SagaSummary): string {
  return s.amount === null ? '' : formatMoney(s.amount.minor, s.amount.currency);
}

function deadline(at: string | null): Html | string {
  return at === null
    ? ''
    : html`<time datetime="${at}">${at}</time>
        <span class="countdown" data-deadline="${at}"></span>`;
}

const SELECTS: Readonly<Record<string, readonly string[]>> = {
  flow: FLOWS,
  status: STATUSES,
  currency: CURRENCIES,
};

/**
 * The search page: `answer` is the API's page, or the console's own refusal of a filter (text).
 * Pages: `nextHref` and `previousHref` (the console keeps the cursors it came by in `back`).
 */
export function searchPage(
  query: URLSearchParams,
  answer: ApiAnswer<SagaPage> | string | undefined,
  nextHref: string | undefined,
  previousHref?: string,
  endpoints?: readonly string[],
): Html {
  const filters = FILTERS.map(([name, label, type]) => {
    const value = query.get(name) ?? '';
    const choices = name === 'endpoint' ? endpoints : SELECTS[name];
    if (type === 'select' || choices !== undefined) {
      const options = choices ?? [];
      return html`<label
        >${label}<select name="${name}">
          <option value="">any</option>
          ${options.map(
            (o) => html`<option value="${o}" ${o === value ? 'selected' : ''}>${o}</option>`,
          )}
        </select></label
      >`;
    }
    return html`<label>${label}<input type="${type}" name="${name}" value="${value}" /></label>`;
  });
  let results: Html | string = '';
  if (typeof answer === 'string') {
    results = html`<div class="error" role="alert" id="filterError">${answer}</div>`;
  } else if (answer && !answer.ok) results = apiError(answer);
  if (typeof answer === 'object' && answer.ok) {
    const items = answer.body.items;
    results = html`<table id="results">
        ${tableHead('Saga', 'Flow', 'Status', 'Amount', 'Merchant order', 'Endpoint', 'Unknown since', 'Approval deadline', 'Created')}
        <tbody>
          ${items.map(
            (s) =>
              html`<tr data-saga="${s.id}">
                <td><a href="${sagaPath(s.id)}">${s.id}</a></td>
                <td>${s.flow}${s.kind ? ` (${s.kind})` : ''}</td>
                <td class="status">${s.status}</td>
                <td>${amountOf(s)}</td>
                <td>${s.merchantOrderId ?? ''}</td>
                <td>${s.endpointId}</td>
                <td>${when(s.unknownSince)}</td>
                <td>${deadline(s.approvalDeadline)}</td>
                <td>${when(s.createdAt)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      <p>
        ${items.length === 0 ? 'No saga matches.' : `${items.length} shown, newest first.`}
        ${previousHref ? html` <a href="${previousHref}" id="previousPage">Previous page</a>` : ''}
        ${nextHref ? html` <a href="${nextHref}" id="nextPage">Next page</a>` : ''}
      </p>`;
  }
  return html`<h1>Find sagas</h1>
    <form method="get" action="/sagas" class="filters" id="searchForm">
      ${filters}
      <button type="submit">Search</button>
    </form>
    ${results}`;
}

/** What each action will do, said before it is sent. */
const WILL_HAPPEN: Readonly<Record<string, string>> = {
  'refresh-status':
    'The orchestrator asks the gateway for the status of this payment’s operation in flight. The gateway’s answer settles it; no money moves on this request alone.',
  'resolve-unknown':
    'The outcome of this payment is unknown. The orchestrator asks the gateway for the status; whatever the gateway answers (approved, declined, …) becomes the outcome. Money never moves on an operator’s word.',
  approve:
    'The payout is approved: the day’s payout budget is reserved and the gateway is asked to pay it to the registered card. The approval window and the daily limit still apply.',
  reject: 'The payout is rejected: nothing is paid, and it cannot be approved afterwards.',
  pause: 'The schedule is paused: no charge is made until it is resumed.',
  resume: 'The schedule is resumed: charges continue from its next due date.',
  cancel: 'The schedule is cancelled for good: no further charge is made.',
};

export function willHappen(action: string): string {
  return WILL_HAPPEN[action] ?? `The action ${action} is sent to the admin API, which decides.`;
}

/** Published first to last (by time, then outbox order); those not yet published last. */
export function inTimeOrder(events: SagaDetail['events']): SagaDetail['events'] {
  return [...events].sort((a, b) => {
    if (a.publishedAt === null || b.publishedAt === null) {
      return a.publishedAt === b.publishedAt ? 0 : a.publishedAt === null ? 1 : -1;
    }
    const byTime = Date.parse(a.publishedAt) - Date.parse(b.publishedAt);
    return byTime !== 0 ? byTime : Number(BigInt(a.sequence) - BigInt(b.sequence));
  });
}

/**
 * A time: UTC in the markup and on hover (`title`); console.js writes it in the viewer's own time
 * zone in place.
 */
export function when(at: string | null, none = ''): Html | string {
  return at === null
    ? none
    : html`<time datetime="${at}" title="${at} (UTC)" class="local">${at}</time>`;
}

function summaryList(s: SagaSummary, oob = false): Html {
  return html`<dl class="money" id="summary" ${oob ? html`hx-swap-oob="true"` : ''}>
    <dt>Flow</dt>
    <dd>${s.flow}${s.kind ? ` (${s.kind})` : ''}</dd>
    <dt>Status</dt>
    <dd id="sagaStatus">${s.status}</dd>
    <dt>Version</dt>
    <dd id="sagaVersion">${s.version}</dd>
    <dt>Amount</dt>
    <dd>${amountOf(s)}</dd>
    <dt>Merchant order id</dt>
    <dd>${s.merchantOrderId ?? ''}</dd>
    <dt>Endpoint</dt>
    <dd>${s.endpointId}</dd>
    <dt>Unknown since</dt>
    <dd>${when(s.unknownSince)}</dd>
    <dt>Approval deadline</dt>
    <dd>${deadline(s.approvalDeadline)}</dd>
    <dt>Created</dt>
    <dd>${when(s.createdAt)}</dd>
    <dt>Updated</dt>
    <dd>${when(s.updatedAt)}</dd>
  </dl>`;
}

/** A declined or failed operation's gateway code in plain words, beside the code. */
function gatewayCodeReason(type: string, event: unknown): Html | string {
  const code = (event as { code?: unknown } | null)?.code;
  if (!/(declined|failed)$/.test(type) || typeof code !== 'string') return '';
  return html` <span class="field declineReason">meaning of ${code}: ${declineReason(code)}</span>`;
}

function timeline(history: SagaDetail['history']): Html {
  return html`<ol id="timeline">
    ${history.map(
      (h) =>
        html`<li data-type="${h.type}">
          <strong>${h.type}</strong> v${h.version} ${when(h.occurredAt)}
          ${eventFields(h.event).map(([k, v]) => html` <span class="field">${k}: ${v}</span>`)}
          ${gatewayCodeReason(h.type, h.event)}
        </li>`,
    )}
  </ol>`;
}

/** Polled after an action until the saga's version moves past `after` (and a while beyond). */
export function progressFragment(
  id: string,
  after: number,
  polls: number,
  answer: ApiAnswer<SagaDetail>,
  maxPolls: number,
  /** The summary out of band (a poll's answer); false inside a whole page, which has its own. */
  withSummary = true,
): Html {
  const more = polls < maxPolls;
  const every = 'every 1s';
  const poll = more
    ? html` hx-get="${sagaPath(id, 'progress')}?after=${after}&amp;polls=${polls + 1}"
      hx-trigger="${every}" hx-swap="outerHTML"`
    : '';
  if (!answer.ok) {
    return new Html(`<div id="progress"${poll.toString()}>${apiError(answer).text}</div>`);
  }
  const { saga, history } = answer.body;
  const since = history.filter((h) => h.version > after);
  const body =
    since.length === 0
      ? html`<p>Sent. Waiting for the saga to move on from version ${after}…</p>`
      : html`<p>
            The saga moved on: now <strong id="progressStatus">${saga.status}</strong> (version
            ${saga.version}).
          </p>
          <ol>
            ${since.map((h) => html`<li data-type="${h.type}"><strong>${h.type}</strong> ${when(h.occurredAt)}</li>`)}
          </ol>`;
  // The summary comes along out of band: the page never shows a new status in the progress box
  // above an old one in the summary.
  return html`<div id="progress" class="notice" data-version="${saga.version}" ${poll}>${body}</div>
    ${since.length === 0 || !withSummary ? '' : summaryList(saga, true)}`;
}

/** The operation a saga has in flight, as its state keeps it (every flow names it `inFlight`). */
interface InFlight {
  readonly operation: string;
  readonly requestId: string;
  readonly amount: { minor: number; currency: string } | null;
  readonly stage: string;
}

export function inFlightOf(state: unknown): InFlight | null {
  if (typeof state !== 'object' || state === null) return null;
  const f = (state as { inFlight?: unknown }).inFlight;
  if (typeof f !== 'object' || f === null) return null;
  const { operation, requestId, amount, stage } = f as Record<string, unknown>;
  if (typeof operation !== 'string' || typeof requestId !== 'string') return null;
  const money = amount as { minor?: unknown; currency?: unknown } | undefined;
  return {
    operation,
    requestId,
    stage: typeof stage === 'string' ? stage : 'in flight',
    amount:
      typeof money?.minor === 'number' && typeof money.currency === 'string'
        ? { minor: money.minor, currency: money.currency }
        : null,
  };
}

/** What the operation would have done to the money, in the words a support agent repeats. */
const MAY_HAVE: Record<string, string> = {
  sale: 'charged',
  rebill: 'charged',
  preauth: 'held',
  capture: 'captured',
  void: 'released',
  return: 'returned',
  payout: 'paid out',
  'payout-v4': 'paid out',
  'payout-check': 'registered',
  transfer: 'transferred',
  'transfer-by-ref': 'transferred',
};

/**
 * The caveat every money figure carries while an operation is in flight or its outcome unknown:
 * the gateway may have moved the money, and what the gateway last said of it and when it was
 * last asked (the latest status request about it, else the request itself).
 */
export function unknownMoney(detail: SagaDetail): string | null {
  const f = inFlightOf(detail.saga.state);
  if (f === null) return null;
  const amount = f.amount ?? detail.saga.amount;
  const verb = MAY_HAVE[f.operation] ?? 'moved';
  const what =
    amount === null
      ? `the gateway may have ${verb} money (${f.operation})`
      : `the gateway may have ${verb} ${formatMoney(amount.minor, amount.currency)}`;
  const request = detail.gatewayRequests.find((r) => r.requestId === f.requestId);
  const asked = detail.gatewayRequests
    .filter(
      (r) =>
        r.requestId === f.requestId ||
        (r.request as { subjectRequestId?: unknown } | null)?.subjectRequestId === f.requestId,
    )
    .at(-1);
  const status = request?.answer ? request.answer.result : 'no answer yet';
  const last = asked ? `, last asked at ${asked.createdAt}` : '';
  return `unknown — ${what} (${f.operation} ${f.stage}; the gateway's status: ${status}${last})`;
}

function moneyFigures(detail: SagaDetail): Html | string {
  const { money, saga } = detail;
  const caveat = unknownMoney(detail);
  if (money === null) {
    return caveat === null
      ? ''
      : html`<h2>Money</h2>
          <p class="notice" id="moneyCaveat">${caveat}</p>`;
  }
  // While the sale or preauth itself is in flight nothing is settled: a figure is not 0.00 but
  // unknown. A follow-up in flight (capture, return …) leaves the settled figures true.
  const pending =
    caveat !== null &&
    inFlightOf(saga.state)?.requestId !== undefined &&
    ['requested', 'processing', 'action-required', 'outcome-unknown'].includes(saga.status);
  const figure = (minor: number) => (pending ? 'unknown' : formatMoney(minor, money.currency));
  return html`<h2>Money</h2>
    ${caveat === null ? '' : html`<p class="notice" id="moneyCaveat">${caveat}</p>`}
    <dl class="money" id="money">
      <dt>Authorized</dt>
      <dd>${figure(money.authorized)}</dd>
      <dt>Captured</dt>
      <dd>${figure(money.captured)}</dd>
      <dt>Returned</dt>
      <dd>${figure(money.returned)}</dd>
      <dt>Remaining</dt>
      <dd>${figure(money.remaining)}</dd>
    </dl>`;
}

/** A gateway request and what the history made of its answer. */
function requestItem(r: SagaDetail['gatewayRequests'][number]): Html {
  const a = r.answer;
  return html`<li data-request="${r.requestId}">
    ${r.operation} <code>${r.requestId}</code> ${when(r.createdAt)} —
    ${
      a === null || a === undefined
        ? html`<span class="answer">no answer recorded</span>`
        : html`<span class="answer"
            ><strong>${a.result}</strong>${
              a.code === null
                ? ''
                : html` (gateway code <code>${a.code}</code>:
                    <span class="declineReason">${declineReason(a.code)}</span>)`
            }${a.serial === null ? '' : `, serial ${a.serial}`},
            at ${when(a.at)}</span
          >`
    }
  </li>`;
}

export function detailPage(
  detail: SagaDetail,
  user: SignedInUser,
  progress: Html | undefined,
): Html {
  const { saga } = detail;
  const actions =
    user.role !== 'viewer' && detail.actions.length > 0
      ? html`<section class="actions" id="actions">
          <h2>Act</h2>
          ${detail.actions.map(
            (a) =>
              html`<a class="action" data-action="${a}" href="${sagaPath(saga.id, 'actions', a)}"
                >${a}</a
              > `,
          )}
        </section>`
      : '';
  return html`<h1>Saga <code id="sagaId">${saga.id}</code></h1>
    ${progress ?? ''} ${summaryList(saga)} ${moneyFigures(detail)} ${actions}
    <h2>Timeline</h2>
    ${timeline(detail.history)}
    <h2>Admin actions</h2>
    ${
      detail.audit.length === 0
        ? html`<p id="auditEmpty">None.</p>`
        : html`<table id="audit">
            ${tableHead('When', 'Who', 'Role', 'Action', 'Why', 'Command')}
            <tbody>
              ${detail.audit.map(
                (a) =>
                  html`<tr data-action="${a.action}">
                    <td>${a.at}</td>
                    <td>${a.actor}</td>
                    <td>${a.role}</td>
                    <td>${a.action}</td>
                    <td class="reason">${a.reason}</td>
                    <td>${a.commandType} ${a.commandId}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    <h2>Events published</h2>
    <ol id="events">
      ${inTimeOrder(detail.events).map((e) => html`<li data-type="${e.type}">${e.type} ${when(e.publishedAt, 'not yet published')}</li>`)}
    </ol>
    <h2>Gateway requests</h2>
    <ol id="gatewayRequests">
      ${detail.gatewayRequests.map(requestItem)}
    </ol>`;
}

/** The reason an action asks for, recorded in the audit with the person's name. */
export function reasonField(reason: string): Html {
  return html`<label
      >Why (recorded in the audit with your name)<br /><textarea
        name="reason"
        required
        maxlength="1024"
      >
${reason}</textarea></label
    ><br />`;
}

export function confirmPage(
  saga: SagaSummary,
  action: string,
  csrf: string,
  error?: ApiError,
  reason = '',
): Html {
  return html`<h1>Confirm: ${action}</h1>
    <p>
      Saga <a href="${sagaPath(saga.id)}"><code>${saga.id}</code></a
      >: ${saga.flow}, ${saga.status}${saga.amount ? `, ${amountOf(saga)}` : ''}.
    </p>
    <p class="notice" id="willHappen">${willHappen(action)}</p>
    ${error ? apiError(error) : ''}
    <form method="post" action="${sagaPath(saga.id, 'actions', action)}" id="confirmForm">
      <input type="hidden" name="${CSRF_FIELD}" value="${csrf}" />
      ${reasonField(reason)}
      <button type="submit" id="confirm">${action}</button>
      <a href="${sagaPath(saga.id)}">Cancel</a>
    </form>`;
}

export function acceptedNotice(accepted: ActionAccepted): string {
  return `${accepted.commandType} sent as command ${accepted.commandId}`;
}

/**
 * A console path under /sagas with every segment encoded: an id or action is one segment whatever
 * it holds (`../` or `/` cannot climb to another saga's path).
 */
export function sagaPath(id: string, ...rest: string[]): string {
  return ['/sagas', ...[id, ...rest].map(encodeURIComponent)].join('/');
}

/** A path naming an action the saga does not offer now (to this person): refused in plain words. */
export function actionNotOfferedPage(
  saga: { id: string; status: string },
  action: string,
  offered: readonly string[],
): Html {
  return html`<h1>Not found</h1>
    <div class="error" role="alert" id="notOffered">
      <p>
        Saga <code>${saga.id}</code> (${saga.status}) does not offer “${action}” to you now.
        ${
          offered.length === 0
            ? 'It offers you no action in this state.'
            : `What it offers now: ${offered.join(', ')}.`
        }
      </p>
    </div>
    <p><a href="${sagaPath(saga.id)}">Back to the saga</a></p>`;
}

export function errorPage(error: ApiError): Html {
  return html`<h1>The admin API refused</h1>
    ${apiError(error)}
    <p><a href="/sagas">Back to search</a></p>`;
}

/** The merchants a signed-in token sees, as the header says it. */
export function scopeText(scope: SignedInUser['scope']): string {
  if (scope === undefined) return 'merchants: as the API allows';
  return scope === 'all' ? 'all merchants' : `merchants ${scope.endpoints.join(', ')}`;
}
