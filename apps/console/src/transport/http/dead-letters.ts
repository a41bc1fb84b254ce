import type { DeadLetterPage, DeadLetterView } from '../../application/admin-api.client';
import type { SignedInUser } from '../../application/session';
import { Html, html, tableHead } from './html';
import { type ApiError, apiError, CSRF_FIELD, reasonField } from './pages';

function replayLink(letter: DeadLetterView): Html {
  return html`<a
    class="replay"
    data-at="${letter.at}"
    href="/dead-letters/replay?at=${encodeURIComponent(letter.at)}"
    >replay</a
  >`;
}

/**
 * The dead letters, newest first: where each came from, its key, the `dlq-reason` and `dlq-error`
 * headers and its size — never its value (a command may carry card data, masked or not). Only an
 * operator sees the replay links; the API refuses a viewer's replay anyway.
 */
export function deadLettersPage(
  page: DeadLetterPage,
  user: SignedInUser,
  replayed?: { at: string; audit: string },
): Html {
  const operator = user.role !== 'viewer';
  return html`<h1>Dead letters</h1>
    ${
      replayed
        ? html`<p class="notice" id="replayed">
            Replayed <code>${replayed.at}</code> (audit ${replayed.audit}).
          </p>`
        : ''
    }
    <p>
      Records a consumer could not process, on ${page.topics.length} topic(s)
      (${page.topics.join(', ') || 'none'}): ${page.total} in all, the newest ${page.items.length}
      shown. A replay sends one back to its original topic as <code>payments dlq replay</code> does;
      a record whose card data was masked fails again, by design.
    </p>
    ${
      page.items.length === 0
        ? html`<p id="deadLettersEmpty">None.</p>`
        : html`<table id="deadLetters">
            ${tableHead(
              'time',
              'dead letter',
              'from topic',
              'key',
              'reason',
              'error',
              'bytes',
              ...(operator ? [''] : []),
            )}
            <tbody>
              ${page.items.map(
                (l) =>
                  html`<tr class="dead-letter" data-at="${l.at}" data-key="${l.key ?? ''}">
                    <td>${l.time}</td>
                    <td>
                      <code>${l.at}</code
                      >${l.replayedFrom ? ` (replayed from ${l.replayedFrom})` : ''}
                    </td>
                    <td>${l.originalTopic ?? 'unknown'}</td>
                    <td><code>${l.key ?? '-'}</code></td>
                    <td class="reason">${l.reason}</td>
                    <td>${l.error}</td>
                    <td>${String(l.bytes)}</td>
                    ${operator ? html`<td>${replayLink(l)}</td>` : ''}
                  </tr>`,
              )}
            </tbody>
          </table>`
    }`;
}

/** The confirmation before a replay: the operator says why (recorded with their name). */
export function replayConfirmPage(at: string, csrf: string, error?: ApiError, reason = ''): Html {
  return html`<h1>Confirm: replay <code>${at}</code></h1>
    <p class="notice" id="willHappen">
      The dead letter goes back to its original topic with its key, value and original headers (plus
      <code>dlq-replayed-from</code>); its consumer processes it again.
    </p>
    ${error ? apiError(error) : ''}
    <form method="post" action="/dead-letters/replay" id="confirmForm">
      <input type="hidden" name="${CSRF_FIELD}" value="${csrf}" />
      <input type="hidden" name="at" value="${at}" />
      ${reasonField(reason)}
      <button type="submit" id="confirm">replay</button>
      <a href="/dead-letters">Cancel</a>
    </form>`;
}
