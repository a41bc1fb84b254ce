import type { DayCloseView } from '../../application/admin-api.client';
import type { SignedInUser } from '../../application/session';
import { formatMinorDigits, formatMoney } from './format';
import { Html, html, tableHead } from './html';
import { type ApiError, apiError, CSRF_FIELD, when } from './pages';

/** The fields of a close this console reads by name; any other is shown as it comes. */
const KNOWN = new Set([
  'type',
  'closeId',
  'merchant',
  'day',
  'timeZone',
  'from',
  'to',
  'totals',
  'count',
  'lastMerchantSeq',
  'occurredAt',
  'closedBy',
  'fresh',
]);

/** Yesterday in UTC (YYYY-MM-DD): the day the page opens on, the last one surely over. */
export function yesterday(now: Date): string {
  return new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10);
}

export function isDay(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`));
}

/** The day and merchant of a day-close page, or what is wrong with them in words. */
export function dayChoice(
  day: string | undefined,
  endpoint: string | undefined,
): { day: string; endpoint?: string } | string {
  const d = day === undefined || day.trim() === '' ? yesterday(new Date()) : day.trim();
  if (!isDay(d)) return `Day “${d}” is not a day (YYYY-MM-DD).`;
  const e = endpoint === undefined || endpoint.trim() === '' ? undefined : endpoint.trim();
  if (e !== undefined && !/^\d{1,19}$/.test(e))
    return `Endpoint “${e}” is not an endpoint id (digits).`;
  return { day: d, ...(e === undefined ? {} : { endpoint: e }) };
}

/** A value as plain text: scalars as they are, anything else as JSON. */
function scalarText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'boolean' ||
    typeof value === 'bigint'
  )
    return String(value);
  return JSON.stringify(value);
}

/** A value as text: money (minor + currency, or sumMinor + currency) in major units. */
function cell(key: string, value: unknown, row: Record<string, unknown>): string {
  if (value === null || value === undefined) return '';
  const currency = typeof row.currency === 'string' ? row.currency : undefined;
  if (typeof value === 'object') {
    const m = value as { minor?: unknown; currency?: unknown };
    if (typeof m.minor === 'number' && typeof m.currency === 'string')
      return formatMoney(m.minor, m.currency);
    if (
      (typeof m.minor === 'string' || typeof m.minor === 'bigint') &&
      typeof m.currency === 'string'
    )
      return formatMinorDigits(String(m.minor), m.currency);
    return JSON.stringify(value);
  }
  const text = scalarText(value);
  if (currency !== undefined && /minor$/i.test(key) && /^-?\d+$/.test(text)) {
    const negative = text.startsWith('-');
    return `${negative ? '-' : ''}${formatMinorDigits(negative ? text.slice(1) : text, currency)}`;
  }
  return text;
}

/** The columns of a list of objects: every key any row has, in first-seen order. */
function columns(rows: ReadonlyArray<Record<string, unknown>>): string[] {
  const keys: string[] = [];
  for (const row of rows)
    for (const key of Object.keys(row)) if (!keys.includes(key)) keys.push(key);
  return keys;
}

/** A field of the close this console does not know by name (gateway totals, differences …). */
function extraField(close: DayCloseView, key: string): Html {
  const value = close[key];
  const id = `${key}-${close.merchant.endpointId}`;
  if (Array.isArray(value)) {
    const rows = value.filter(
      (v): v is Record<string, unknown> => typeof v === 'object' && v !== null,
    );
    if (rows.length === 0)
      return html`<h4>${key}</h4>
        <p data-field="${key}" id="${id}">${value.length === 0 ? 'none' : value.join(', ')}</p>`;
    const keys = columns(rows);
    return html`<h4>${key}</h4>
      <table data-field="${key}" id="${id}" tabindex="0" aria-label="${key}">
        ${tableHead(...keys)}
        <tbody>
          ${rows.map(
            (row) =>
              html`<tr>
                ${keys.map((k) => html`<td>${cell(k, row[k], row)}</td>`)}
              </tr>`,
          )}
        </tbody>
      </table>`;
  }
  return html`<h4>${key}</h4>
    <p data-field="${key}" id="${id}">
      ${cell(key, value, typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {})}
    </p>`;
}

/** One merchant's close: its state, totals per currency and event type, and whatever else it says. */
function closeSection(close: DayCloseView): Html {
  const endpoint = close.merchant.endpointId;
  const extras = Object.keys(close).filter((k) => !KNOWN.has(k));
  const currencies = [...new Set(close.totals.map((t) => t.currency))];
  return html`<section class="close" data-endpoint="${endpoint}" data-close="${close.closeId}">
    <h2>
      Merchant ${endpoint}${close.merchant.merchantId ? ` (${close.merchant.merchantId})` : ''}
    </h2>
    <dl class="money">
      <dt>State</dt>
      <dd class="closeState">closed ${when(close.occurredAt)} by ${close.closedBy}</dd>
      <dt>Day</dt>
      <dd>${close.day} in ${close.timeZone}: ${when(close.from)} – ${when(close.to)}</dd>
      <dt>Money events</dt>
      <dd class="closeCount">${close.count} (last merchant sequence ${close.lastMerchantSeq})</dd>
    </dl>
    ${currencies.map(
      (currency) =>
        html`<h3>${currency}</h3>
          <table
            class="totals"
            data-currency="${currency}"
            tabindex="0"
            aria-label="${currency} totals"
          >
            ${tableHead('Event', 'Count', 'Sum')}
            <tbody>
              ${close.totals
                .filter((t) => t.currency === currency)
                .map(
                  (t) =>
                    html`<tr data-event-type="${t.eventType}">
                      <td>${t.eventType}</td>
                      <td>${t.count}</td>
                      <td class="sum">${formatMinorDigits(t.sumMinor, t.currency)}</td>
                    </tr>`,
                )}
            </tbody>
          </table>`,
    )}
    ${close.totals.length === 0 ? html`<p class="noTotals">No money event that day.</p>` : ''}
    ${extras.map((key) => extraField(close, key))}
  </section>`;
}

/**
 * The day close of one day: per merchant its state, totals per currency and the rest of the close
 * as the API reports it (differences, exceptions and the gateway's totals once the report carries
 * them), a CSV of it all, and for operators the close itself.
 */
export function dayClosePage(
  day: string,
  endpoint: string | undefined,
  closes: readonly DayCloseView[] | ApiError,
  user: SignedInUser,
  csrf: string,
  notice?: string,
): Html {
  const query = new URLSearchParams({ day, ...(endpoint ? { endpoint } : {}) });
  const refused = !Array.isArray(closes);
  // A merchant's day closed already answers what it published: no button to close it again.
  const closedAlready =
    endpoint !== undefined &&
    Array.isArray(closes) &&
    (closes as readonly DayCloseView[]).some((c) => c.merchant.endpointId === endpoint);
  return html`<h1>Day close</h1>
    <p>
      Once a merchant's day is over in its time zone, its close states the count and sum of that
      day's money events per type and currency. The scheduled close does it once a day; an operator
      may close a day that is over.
    </p>
    <form method="get" action="/day-close" class="filters" id="dayFilters">
      <label>Day (YYYY-MM-DD)<input type="text" name="day" value="${day}" required /></label>
      <label
        >Merchant endpoint (empty: all)<input type="text" name="endpoint" value="${endpoint ?? ''}"
      /></label>
      <button type="submit">Show</button>
    </form>
    ${notice ? html`<p class="notice" id="dayNotice">${notice}</p>` : ''}
    ${
      refused
        ? apiError(closes as ApiError)
        : html`<p>
              <a href="/day-close/csv?${query.toString()}" id="dayCsv" download>Download CSV</a>
            </p>
            ${
              (closes as readonly DayCloseView[]).length === 0
                ? html`<p id="notClosed">
                    State: not closed — no close of ${day}${endpoint ? ` for ${endpoint}` : ''} yet.
                  </p>`
                : (closes as readonly DayCloseView[]).map(closeSection)
            }`
    }
    ${
      user.role === 'viewer' || closedAlready
        ? ''
        : html`<form method="post" action="/day-close" id="closeDayForm">
            <input type="hidden" name="${CSRF_FIELD}" value="${csrf}" />
            <input type="hidden" name="day" value="${day}" />
            <input type="hidden" name="endpoint" value="${endpoint ?? ''}" />
            <button type="submit" id="closeDay">
              Close ${day}${endpoint ? ` for ${endpoint}` : ' for every merchant'}
            </button>
          </form>`
    }`;
}

/** A CSV field: quoted when needed; a leading formula character neutralised (spreadsheet safety). */
export function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

const CSV_COLUMNS = [
  'section',
  'day',
  'endpoint',
  'timeZone',
  'currency',
  'eventType',
  'count',
  'sumMinor',
  'sum',
  'closedAt',
  'closedBy',
  'detail',
];

/**
 * The closes as CSV, one row per total (section `totals`) and one per row of any other list the
 * close carries (its field name as the section: gateway totals, differences, exceptions …), the
 * fields not in a column kept in `detail` as `name=value` pairs. Sums in minor units and in major.
 */
export function dayCloseCsv(closes: readonly DayCloseView[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const close of closes) {
    const base = {
      day: close.day,
      endpoint: close.merchant.endpointId,
      timeZone: close.timeZone,
      closedAt: close.occurredAt,
      closedBy: close.closedBy,
    };
    const rows: Array<Record<string, string>> = close.totals.map((t) => ({
      ...base,
      section: 'totals',
      currency: t.currency,
      eventType: t.eventType,
      count: String(t.count),
      sumMinor: t.sumMinor,
      sum: formatMinorDigits(t.sumMinor, t.currency),
    }));
    for (const key of Object.keys(close).filter((k) => !KNOWN.has(k))) {
      const value = close[key];
      const items = Array.isArray(value) ? value : [value];
      for (const item of items) {
        const row: Record<string, unknown> =
          typeof item === 'object' && item !== null
            ? (item as Record<string, unknown>)
            : { value: item };
        const currency = typeof row.currency === 'string' ? row.currency : '';
        const sumMinor = row.sumMinor ?? row.minor;
        const detail = Object.entries(row)
          .filter(([k]) => !['currency', 'eventType', 'count', 'sumMinor', 'minor'].includes(k))
          .map(([k, v]) => `${k}=${cell(k, v, row)}`)
          .join('; ');
        rows.push({
          ...base,
          section: key,
          currency,
          eventType: typeof row.eventType === 'string' ? row.eventType : '',
          count: row.count === undefined ? '' : scalarText(row.count),
          sumMinor: sumMinor === undefined ? '' : scalarText(sumMinor),
          sum:
            sumMinor !== undefined && currency !== '' && /^\d+$/.test(scalarText(sumMinor))
              ? formatMinorDigits(scalarText(sumMinor), currency)
              : '',
          detail,
        });
      }
    }
    if (rows.length === 0)
      rows.push({ ...base, section: 'totals', count: '0', detail: 'no money event' });
    for (const row of rows) lines.push(CSV_COLUMNS.map((c) => csvField(row[c] ?? '')).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
