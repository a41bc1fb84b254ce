import type { CaseView } from '../../application/admin-api.client';
import type { SignedInUser } from '../../application/session';
import { casePage, caseRefusal, casesPage } from './cases';

const proposed: CaseView = {
  caseId: '6f1d2c3b-0000-4000-8000-000000000001',
  flow: 'card-payment',
  sagaId: '6f1d2c3b-0000-4000-8000-000000000002',
  endpointId: '1111',
  requestId: '6f1d2c3b-0000-4000-8000-000000000003',
  operation: 'sale',
  concern: 'amount-mismatch',
  status: 'proposed',
  requestedAmount: { minor: 10_000, currency: 'USD' },
  reportedAmount: { minor: 9_000, currency: 'USD' },
  evidence: [
    { at: '2026-01-01T00:00:00Z', source: 'status-reply', ref: 'r1', summary: 'charged 90.00' },
  ],
  proposal: {
    proposal: { decision: 'done', amount: { minor: 9_000, currency: 'USD' } },
    reason: 'statement <b>',
    by: 'alice',
    at: '2026-01-01T00:01:00Z',
  },
  audit: [],
  openedAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:01:00Z',
};

const person = (name: string, role: SignedInUser['role']): SignedInUser => ({
  token: 't',
  name,
  role,
  scope: 'all',
});

describe('the case page', () => {
  it('shows the four-eyes rule, and the proposer is told why they cannot approve (no approve form)', () => {
    const page = casePage(proposed, person('alice', 'approver'), 'csrf').text;
    expect(page).toContain('id="fourEyes"');
    expect(page).toContain('data-why="same-person"');
    expect(page).toContain('a different person with the approver role must approve it');
    expect(page).not.toContain('id="approveForm"');
    expect(page).toContain('statement &lt;b&gt;');
  });

  it('offers approval to another approver only; an operator is told approving needs the role', () => {
    expect(casePage(proposed, person('bob', 'approver'), 'c').text).toContain('id="approveForm"');
    const operator = casePage(proposed, person('carol', 'operator'), 'c').text;
    expect(operator).toContain('data-why="role"');
    expect(operator).not.toContain('id="approveForm"');
  });

  it('offers a proposal with the gateway’s amount in major units on an open case, not to a viewer', () => {
    const open: CaseView = { ...proposed, status: 'open' };
    delete (open as { proposal?: unknown }).proposal;
    const page = casePage(open, person('carol', 'operator'), 'c').text;
    expect(page).toContain('id="proposeForm"');
    expect(page).toContain('value="90.00"');
    expect(casePage(open, person('sam', 'viewer'), 'c').text).toContain('id="cannotPropose"');
  });

  it('puts the refusal’s plain words before the API’s code and message', () => {
    const said = caseRefusal({ ok: false, status: 409, code: 'CASE_SAME_PERSON', message: 'm' });
    expect(said.message).toMatch(/^You proposed this decision/);
    expect(said.code).toBe('CASE_SAME_PERSON');
  });

  it('lists cases filtered by merchant, amounts in major units', () => {
    const other = { ...proposed, caseId: 'x', endpointId: '2222' };
    const page = casesPage([proposed, other], { endpoint: '1111' }, ['1111', '2222']).text;
    expect(page).toContain(`data-case="${proposed.caseId}"`);
    expect(page).not.toContain('data-case="x"');
    expect(page).toContain('100.00 USD');
  });
});
