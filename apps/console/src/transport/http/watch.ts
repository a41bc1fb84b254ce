import type { LiveEvent, LiveMinutes } from '../../application/admin-api.client';
import { formatMoney } from './format';
import { Html, html, tableHead } from './html';

/** Minutes the chart shows. */
export const CHART_MINUTES = 30;

/** The Watch page: the live list (filled by /assets/console.js from /watch/events) and the chart. */
export function watchPage(): Html {
  return html`<h1>Watch</h1>
    <p>Records a consumer could not process: <a href="/dead-letters">dead letters</a>.</p>
    <section>
      <h2>Per minute</h2>
      <div id="minutes" hx-get="/watch/minutes" hx-trigger="load, every 5s" hx-swap="innerHTML">
        loading…
      </div>
    </section>
    <section>
      <h2>
        Live outcome events <small id="liveStatus" data-state="connecting">connecting…</small>
      </h2>
      <p>Events published while this page is open, newest first (the last 200).</p>
      <table>
        ${tableHead('time', 'event', 'saga', 'amount')}
        <tbody id="liveEvents" data-stream="/watch/events" data-keep="200"></tbody>
      </table>
    </section>`;
}

/** One row of the live list, escaped like every page (it is inserted as markup by the script). */
export function liveRow(event: LiveEvent): Html {
  const amount = event.amount ? formatMoney(event.amount.minor, event.amount.currency) : '';
  return html`<tr
    class="live-event${event.moneyMoved ? ' moved' : ''}"
    data-type="${event.type}"
    data-saga="${event.sagaId}"
  >
    <td>${event.occurredAt}</td>
    <td>${event.type}</td>
    <td><a href="/sagas/${encodeURIComponent(event.sagaId)}">${event.sagaId}</a></td>
    <td>${amount}${event.moneyMoved ? ' moved' : ''}</td>
  </tr>`;
}

const WIDTH = 600;
const HEIGHT = 80;

/** A small bar chart as SVG markup: attributes only (the CSP allows no style attribute). */
function bars(title: string, id: string, values: readonly number[], labels: readonly string[]) {
  const max = Math.max(1, ...values);
  const step = WIDTH / Math.max(1, values.length);
  return html`<figure class="chart" id="${id}">
    <figcaption>${title}</figcaption>
    <svg
      viewBox="0 0 ${WIDTH} ${HEIGHT}"
      width="${WIDTH}"
      height="${HEIGHT}"
      role="img"
      aria-label="${title}"
    >
      <line class="axis" x1="0" y1="${HEIGHT - 0.5}" x2="${WIDTH}" y2="${HEIGHT - 0.5}"></line>
      ${values.map((v, i) => {
        const h = Math.round((v / max) * (HEIGHT - 4));
        return html`<rect
          class="bar"
          x="${(i * step + 1).toFixed(1)}"
          y="${HEIGHT - h}"
          width="${(step - 2).toFixed(1)}"
          height="${h}"
          data-value="${v}"
          ><title>${labels[i] ?? ''}</title></rect
        >`;
      })}
    </svg>
  </figure>`;
}

/**
 * The per-minute counts: events, and money moved in each currency (minor units summed as
 * integers, written by the currency's exponent), with their totals over the window.
 */
export function minutesFragment(counts: LiveMinutes): Html {
  const { minutes } = counts;
  const hhmm = (iso: string) => iso.slice(11, 16);
  const events = minutes.map((m) => m.events);
  const total = events.reduce((a, b) => a + b, 0);
  const currencies = [...new Set(minutes.flatMap((m) => Object.keys(m.moved)))].sort();
  const moved = currencies.map((currency) => {
    const values = minutes.map((m) => m.moved[currency] ?? 0);
    return { currency, values, total: values.reduce((a, b) => a + b, 0) };
  });
  return html`<p id="minuteTotals" data-events="${total}">
      ${total} events in the last ${minutes.length}
      minutes${moved.map(
        (m) =>
          html`;
            <span class="moved-total" data-currency="${m.currency}" data-minor="${m.total}"
              >${formatMoney(m.total, m.currency)} moved</span
            >`,
      )}
      <small>(counted since ${counts.since})</small>
    </p>
    ${bars(
      'Outcome events per minute',
      'chartEvents',
      events,
      minutes.map((m) => `${hhmm(m.minute)}: ${m.events} events`),
    )}
    ${moved.map((m) =>
      bars(
        `Money moved per minute, ${m.currency}`,
        `chartMoved${m.currency}`,
        m.values,
        minutes.map((x, i) => `${hhmm(x.minute)}: ${formatMoney(m.values[i] ?? 0, m.currency)}`),
      ),
    )}`;
}
