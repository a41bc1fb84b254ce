import { CASE_DECISIONS } from '@payments/contracts';
import type { CaseView } from '../../application/admin-api.client';
import type { SignedInUser } from '../../application/session';
import { currencyExponent, formatMoney } from './format';
import { Html, html, tableHead } from './html';
import { type ApiError, apiError, CSRF_FIELD, reasonField, sagaPath, when } from './pages';

/** The case statuses the API filters on (`GET /admin/cases?status=`). */
export const CASE_STATUSES = ['open', 'proposed', 'closed', 'reopened'] as const;

/** A console path under /cases, every segment encoded. */
export function casePath(id: string, ...rest: string[]): string {
  return ['/cases', ...[id, ...rest].map(encodeURIComponent)].join('/');
}

function money(m: { minor: number; currency: string } | undefined): string {
  return m === undefined ? '' : formatMoney(m.minor, m.currency);
}

/** Why a person must look at the operation, in words. */
const CONCERNS: Readonly<Record<string, string>> = {
  'no-trace': 'the gateway shows no trace of the request',
  'amount-mismatch': 'the gateway reports another amount than the one asked',
  'reconciliation-mismatch': 'reconciliation found the gateway disagreeing with the saga',
  'alerted-too-long': 'the outcome stayed unknown long after its alert',
};

export function concernText(concern: string): string {
  return CONCERNS[concern] ?? concern;
}

/**
 * The rule every decision follows, said on every case page: two people, a reason, an audit, and no
 * money moved on a person's word.
 */
export const FOUR_EYES = html`<p class="notice" id="fourEyes">
  Four eyes: one person (operator role) proposes a decision with a reason; a
  <strong>different</strong> person with the approver role approves it. Only then does the saga
  settle, with its own <code>settled-by-decision</code> event; nothing is sent to the gateway. Every
  step is in the case's audit with the person's name.
</p>`;

/** The cases the token sees, newest first, with the filters (status by the API, merchant here). */
export function casesPage(
  cases: readonly CaseView[],
  filters: { status?: string; endpoint?: string },
  endpoints: readonly string[],
): Html {
  const shown =
    filters.endpoint === undefined ? cases : cases.filter((c) => c.endpointId === filters.endpoint);
  const select = (
    name: string,
    label: string,
    options: readonly string[],
    value: string | undefined,
  ) =>
    html`<label
      >${label}<select name="${name}">
        <option value="">any</option>
        ${options.map(
          (o) => html`<option value="${o}" ${o === value ? 'selected' : ''}>${o}</option>`,
        )}
      </select></label
    >`;
  return html`<h1>Cases</h1>
    <p>
      Operations a person must decide: the gateway left them unsettled, or said something the saga
      could not take as it is.
    </p>
    ${FOUR_EYES}
    <form method="get" action="/cases" class="filters" id="caseFilters">
      ${select('status', 'Status', CASE_STATUSES, filters.status)}
      ${select('endpoint', 'Merchant endpoint', endpoints, filters.endpoint)}
      <button type="submit">Filter</button>
    </form>
    ${
      shown.length === 0
        ? html`<p id="noCases">No case matches.</p>`
        : html`<table id="cases" tabindex="0" aria-label="cases">
            ${tableHead('Opened', 'Status', 'Why', 'Operation', 'Asked', 'Gateway reported', 'Merchant', 'Saga')}
            <tbody>
              ${shown.map(
                (c) =>
                  html`<tr data-case="${c.caseId}" data-saga="${c.sagaId}">
                    <td><a href="${casePath(c.caseId)}">${when(c.openedAt)}</a></td>
                    <td class="status">${c.status}</td>
                    <td>${concernText(c.concern)}</td>
                    <td>${c.flow} ${c.operation}</td>
                    <td>${money(c.requestedAmount)}</td>
                    <td>${money(c.reportedAmount)}</td>
                    <td>${c.endpointId}</td>
                    <td><a href="${sagaPath(c.sagaId)}">${c.sagaId}</a></td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }`;
}

/** An amount in minor units as the major-unit text a form is prefilled with. */
function majorText(m: { minor: number; currency: string } | undefined): string {
  return m === undefined ? '' : (formatMoney(m.minor, m.currency).split(' ')[0] ?? '');
}

/** What the person before the page may do with the pending proposal, or why not. */
function proposalSteps(c: CaseView, user: SignedInUser, csrf: string): Html {
  const pending = c.proposal;
  if (pending === undefined) return html``;
  const withdraw = (label: string) =>
    html`<form method="post" action="${casePath(c.caseId, 'reject-proposal')}" id="rejectForm">
      <input type="hidden" name="${CSRF_FIELD}" value="${csrf}" />
      ${reasonField('')}
      <button type="submit" id="rejectProposal">${label}</button>
    </form>`;
  if (pending.by === user.name) {
    return html`<div class="notice" id="cannotApprove" data-why="same-person">
        <p>
          You proposed this decision: a different person with the approver role must approve it
          (four eyes). Your own approval would be refused.
        </p>
      </div>
      ${withdraw('Withdraw my proposal')}`;
  }
  if (user.role !== 'approver') {
    return html`<div class="notice" id="cannotApprove" data-why="role">
      <p>
        Approving needs the approver role; you are ${user.role === 'operator' ? 'an' : 'a'}
        ${user.role}. A person with the approver role other than ${pending.by} approves it.
      </p>
    </div>`;
  }
  return html`<form method="post" action="${casePath(c.caseId, 'approve')}" id="approveForm">
      <input type="hidden" name="${CSRF_FIELD}" value="${csrf}" />
      <p>
        Approve ${pending.by}'s decision “${pending.proposal.decision}”: the saga settles by it.
      </p>
      <button type="submit" id="approve">Approve</button>
    </form>
    ${withdraw('Reject the proposal')}`;
}

/** The proposal form: a decision, the amount the money moved at (done), a reason. */
function proposeForm(c: CaseView, user: SignedInUser, csrf: string): Html {
  if (c.status !== 'open' && c.status !== 'reopened') return html``;
  if (user.role === 'viewer') {
    return html`<p class="notice" id="cannotPropose">
      Proposing a decision needs the operator role; you are a viewer.
    </p>`;
  }
  const amount = c.reportedAmount ?? c.requestedAmount;
  const currency = amount?.currency ?? '';
  return html`<h2>Propose a decision</h2>
    <form method="post" action="${casePath(c.caseId, 'propose')}" id="proposeForm">
      <input type="hidden" name="${CSRF_FIELD}" value="${csrf}" />
      <label
        >Decision<select name="decision" required>
          ${CASE_DECISIONS.map((d) => html`<option value="${d}">${d}</option>`)}
        </select></label
      ><br />
      <label
        >Amount it was done at, in ${currency || 'the currency'} (for “done”; e.g.
        ${majorText(amount) || '42.00'})<input
          type="text"
          name="amount"
          value="${majorText(amount)}"
          inputmode="decimal"
      /></label>
      <input type="hidden" name="currency" value="${currency}" />
      <label
        >Why that amount (for “done”)<input type="text" name="amountWhy" maxlength="1024" /></label
      ><br />
      ${reasonField('')}
      <button type="submit" id="propose">Propose</button>
    </form>`;
}

/** One case: its concern, evidence, proposal or decision, audit, and what this person may do. */
export function casePage(
  c: CaseView,
  user: SignedInUser,
  csrf: string,
  refusal?: ApiError | string,
): Html {
  const refused =
    refusal === undefined
      ? ''
      : typeof refusal === 'string'
        ? html`<div class="error" role="alert" id="apiError">${refusal}</div>`
        : apiError(refusal);
  const exponent = c.requestedAmount ? currencyExponent(c.requestedAmount.currency) : 2;
  return html`<h1>Case <code id="caseId">${c.caseId}</code></h1>
    ${refused}
    <dl class="money" id="case" data-status="${c.status}" data-exponent="${exponent}">
      <dt>Status</dt>
      <dd id="caseStatus">${c.status}</dd>
      <dt>Why a person looks</dt>
      <dd>${concernText(c.concern)} (${c.concern})</dd>
      <dt>Saga</dt>
      <dd><a href="${sagaPath(c.sagaId)}" id="caseSaga">${c.sagaId}</a> (${c.flow})</dd>
      <dt>Operation</dt>
      <dd>${c.operation} <code>${c.requestId}</code></dd>
      <dt>Merchant endpoint</dt>
      <dd>${c.endpointId}</dd>
      <dt>Amount asked</dt>
      <dd>${money(c.requestedAmount)}</dd>
      <dt>Amount the gateway reported</dt>
      <dd>${money(c.reportedAmount) || 'none reported'}</dd>
      <dt>Opened</dt>
      <dd>${when(c.openedAt)}</dd>
      <dt>Updated</dt>
      <dd>${when(c.updatedAt)}</dd>
    </dl>
    ${FOUR_EYES}
    <h2>Evidence</h2>
    ${
      c.evidence.length === 0
        ? html`<p id="noEvidence">None gathered yet.</p>`
        : html`<table id="evidence" tabindex="0" aria-label="evidence">
            ${tableHead('When', 'Source', 'Reference', 'What it says', 'Amount reported')}
            <tbody>
              ${c.evidence.map(
                (e) =>
                  html`<tr data-source="${e.source}">
                    <td>${when(e.at)}</td>
                    <td>${e.source}</td>
                    <td><code>${e.ref}</code></td>
                    <td>${e.summary}</td>
                    <td>${money(e.reportedAmount)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    ${
      c.proposal
        ? html`<h2>Proposed</h2>
            <p id="proposal" data-by="${c.proposal.by}">
              <strong>${c.proposal.proposal.decision}</strong>${
                c.proposal.proposal.amount
                  ? ` at ${money(c.proposal.proposal.amount)}${c.proposal.proposal.amountWhy ? ` (${c.proposal.proposal.amountWhy})` : ''}`
                  : ''
              }
              by ${c.proposal.by} ${when(c.proposal.at)}: “${c.proposal.reason}”
            </p>`
        : ''
    }
    ${
      c.decided
        ? html`<h2>Decided</h2>
            <p id="decided" data-by="${c.decided.by}" data-approved-by="${c.decided.approvedBy}">
              <strong>${c.decided.proposal.decision}</strong>${
                c.decided.proposal.amount ? ` at ${money(c.decided.proposal.amount)}` : ''
              }:
              proposed by ${c.decided.by} ${when(c.decided.at)}, approved by ${c.decided.approvedBy}
              ${when(c.decided.approvedAt)}. “${c.decided.reason}”
            </p>`
        : ''
    }
    ${proposalSteps(c, user, csrf)} ${proposeForm(c, user, csrf)}
    <h2>Audit</h2>
    <table id="caseAudit" tabindex="0" aria-label="the case's audit">
      ${tableHead('When', 'Who', 'What', 'Decision', 'Why', 'Evidence seen')}
      <tbody>
        ${c.audit.map(
          (a) =>
            html`<tr data-action="${a.action}" data-actor="${a.actor}">
              <td>${when(a.at)}</td>
              <td>${a.actor}</td>
              <td>${a.action}</td>
              <td>${a.decision ?? ''}</td>
              <td class="reason">${a.reason ?? ''}</td>
              <td>${a.evidenceSeen}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    <p><a href="/cases">All cases</a></p>`;
}

/** The API's refusal of a step on a case, in plain words beside its code. */
const REFUSALS: Readonly<Record<string, string>> = {
  CASE_SAME_PERSON:
    'You proposed this decision: a different person with the approver role must approve it (four eyes).',
  CASE_APPROVER_ROLE_REQUIRED:
    'Approving, or rejecting another’s proposal, needs the approver role.',
  CASE_OPERATOR_ROLE_REQUIRED: 'Proposing needs the operator role.',
  CASE_PROPOSAL_PENDING: 'A proposal is already waiting: one at a time.',
  CASE_NO_PROPOSAL: 'There is no proposal to approve or reject now.',
  CASE_CLOSED: 'The case is closed.',
  CASE_REOPENED: 'The gateway contradicted the decision: the case was reopened.',
  CASE_OPERATION_SETTLED: 'The saga settled the operation meanwhile, by the gateway’s answer.',
};

/** The API's error with its plain words first (the code and message stay). */
export function caseRefusal(error: ApiError): ApiError {
  const words = REFUSALS[error.code];
  return words === undefined ? error : { ...error, message: `${words} (${error.message})` };
}
