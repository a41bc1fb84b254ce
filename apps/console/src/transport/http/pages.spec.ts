import type { SagaDetail } from '../../application/admin-api.client';
import { detailPage, progressFragment, searchPage } from './pages';

const ID = '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f';

function detail(overrides: Partial<SagaDetail> = {}): SagaDetail {
  return {
    saga: {
      id: ID,
      flow: 'payout',
      kind: 'two-step',
      status: 'registered',
      endpointId: '1113',
      merchantOrderId: ID,
      version: 2,
      amount: { minor: 4_200, currency: 'USD' },
      unknownSince: null,
      approvalDeadline: '2026-11-27T14:00:00.000Z',
      createdAt: '2026-11-27T12:00:00.000Z',
      updatedAt: '2026-11-27T12:00:01.000Z',
      state: {},
    },
    money: null,
    actions: ['approve', 'reject'],
    history: [
      { version: 1, type: 'payout-requested', occurredAt: '2026-11-27T12:00:00.000Z', event: {} },
      { version: 2, type: 'payout-registered', occurredAt: '2026-11-27T12:00:01.000Z', event: {} },
    ],
    events: [],
    gatewayRequests: [],
    audit: [
      {
        id: 'a1',
        at: '2026-11-27T12:00:02.000Z',
        actor: 'mallory',
        role: 'operator',
        action: 'reject',
        reason: '<script>alert(1)</script>',
        commandId: 'c1',
        commandType: 'reject-payout',
      },
    ],
    ...overrides,
  };
}

const operator = { token: 't'.repeat(20), name: 'alice', role: 'operator' as const };
const viewer = { token: 'v'.repeat(20), name: 'bob', role: 'viewer' as const };

describe('detailPage', () => {
  it('offers an operator exactly the actions the API lists, a viewer none', () => {
    const forOperator = detailPage(detail(), operator, undefined).text;
    expect(forOperator.match(/data-action="(approve|reject)" href/g)).toHaveLength(2);
    expect(forOperator).toContain(`href="/sagas/${ID}/actions/approve"`);
    expect(forOperator).not.toContain('actions/pause');
    const forViewer = detailPage(detail(), viewer, undefined).text;
    expect(forViewer).not.toContain('id="actions"');
    expect(forViewer).not.toContain('/actions/');
    expect(detailPage(detail({ actions: [] }), operator, undefined).text).not.toContain(
      'id="actions"',
    );
  });

  it('escapes what the API says (an audit reason is text, never markup)', () => {
    const page = detailPage(detail(), viewer, undefined).text;
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).not.toContain('<script>alert(1)');
    expect(page).toContain('data-deadline="2026-11-27T14:00:00.000Z"');
  });
});

describe('progressFragment', () => {
  const answer = { ok: true as const, status: 200, body: detail() };

  it('keeps polling until told to stop, listing only the steps after the version acted on', () => {
    const waiting = progressFragment(ID, 2, 0, answer, 120).text;
    expect(waiting).toContain('hx-trigger="every 1s"');
    expect(waiting).toContain(`hx-get="/sagas/${ID}/progress?after=2&amp;polls=1"`);
    expect(waiting).toContain('Waiting for the saga to move on from version 2');
    const moved = progressFragment(ID, 1, 5, answer, 120).text;
    expect(moved).toContain('data-type="payout-registered"');
    expect(moved).not.toContain('data-type="payout-requested"');
    expect(progressFragment(ID, 1, 120, answer, 120).text).not.toContain('hx-trigger');
  });

  it('shows an API error as the API states it, and polls on', () => {
    const failed = progressFragment(
      ID,
      2,
      0,
      { ok: false, status: 404, code: 'SAGA_NOT_FOUND', message: `no saga ${ID}` },
      120,
    ).text;
    expect(failed).toContain('SAGA_NOT_FOUND');
    expect(failed).toContain(`no saga ${ID}`);
    expect(failed).toContain('hx-trigger');
  });
});

describe('searchPage', () => {
  it('keeps the filters typed and links the next page', () => {
    const query = new URLSearchParams({ flow: 'payout', status: '"><b>' });
    const page = searchPage(
      query,
      { ok: true, status: 200, body: { items: [detail().saga], nextCursor: 'abc' } },
      '/sagas?flow=payout&cursor=abc',
    ).text;
    expect(page).toContain('name="status" value="&quot;&gt;&lt;b&gt;"');
    expect(page).toContain('href="/sagas?flow=payout&amp;cursor=abc"');
    expect(page).toContain('42.00 USD');
  });
});
