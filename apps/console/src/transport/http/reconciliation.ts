import type {
  ReconciliationRunDetail,
  ReconciliationRunSummary,
} from '../../application/admin-api.client';
import { Html, html, tableHead } from './html';

function window(run: ReconciliationRunSummary): string {
  return `${run.from} – ${run.to}${run.endpointId === null ? '' : ` (endpoint ${run.endpointId})`}`;
}

/** The latest runs, newest first: what each checked and how many operations differ. */
export function runsPage(runs: readonly ReconciliationRunSummary[]): Html {
  return html`<h1>Reconciliation</h1>
    <p>
      Runs compare what the sagas reported with the gateway's answer about each operation; they
      report and never change a saga. Start one with <code>payments reconcile</code> (see the
      operations guide).
    </p>
    ${
      runs.length === 0
        ? html`<p id="noRuns">No run yet.</p>`
        : html`<table id="runs">
            ${tableHead('started', 'window', 'trigger', 'status', 'checked', 'mismatched')}
            <tbody>
              ${runs.map(
                (run) =>
                  html`<tr data-run="${run.id}" data-mismatched="${run.mismatched}">
                    <td>
                      <a href="/reconciliation/${encodeURIComponent(run.id)}">${run.startedAt}</a>
                    </td>
                    <td>${window(run)}</td>
                    <td>${run.trigger} by ${run.requestedBy}</td>
                    <td>${run.status}</td>
                    <td>${run.checked}</td>
                    <td class="${run.mismatched > 0 ? 'late' : ''}">${run.mismatched}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }`;
}

/** One run and the operations it found differing, each linked to its saga's story. */
export function runPage(detail: ReconciliationRunDetail): Html {
  const { run, mismatches } = detail;
  return html`<h1>Reconciliation run</h1>
    <dl class="money" id="run" data-status="${run.status}">
      <dt>id</dt>
      <dd>${run.id}</dd>
      <dt>window</dt>
      <dd>${window(run)}</dd>
      <dt>trigger</dt>
      <dd>${run.trigger} by ${run.requestedBy}</dd>
      <dt>status</dt>
      <dd>${run.status}${run.completedAt === null ? '' : ` at ${run.completedAt}`}</dd>
      <dt>checked</dt>
      <dd>${run.checked}</dd>
      <dt>mismatched</dt>
      <dd>${run.mismatched}</dd>
    </dl>
    <h2>Mismatches</h2>
    ${
      mismatches.length === 0
        ? html`<p id="noMismatches">None.</p>`
        : html`<table id="mismatches">
            ${tableHead('kind', 'saga', 'flow', 'endpoint')}
            <tbody>
              ${mismatches.map(
                (m) =>
                  html`<tr data-saga="${m.sagaId}" data-kind="${m.kind}">
                    <td>${m.kind}</td>
                    <td><a href="/sagas/${encodeURIComponent(m.sagaId)}">${m.sagaId}</a></td>
                    <td>${m.flow}</td>
                    <td>${m.endpointId}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }`;
}
