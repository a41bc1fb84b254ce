import type { SagaDetail } from '../../application/admin-api.client';
import {
  actionNotOfferedPage,
  confirmPage,
  detailPage,
  inTimeOrder,
  progressFragment,
  sagaPath,
  searchPage,
} from './pages';

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

describe('detailPage money and requests', () => {
  const REQ = '11111111-2222-4333-8444-555555555555';
  const STATUS_REQ = '11111111-2222-4333-8444-666666666666';
  const unknownSale = detail({
    saga: {
      ...detail().saga,
      flow: 'card-payment',
      kind: 'sale',
      status: 'outcome-unknown',
      amount: { minor: 6_150, currency: 'USD' },
      state: {
        inFlight: {
          operation: 'sale',
          requestId: REQ,
          amount: { minor: 6_150, currency: 'USD' },
          stage: 'outcome-unknown',
        },
      },
    },
    money: { currency: 'USD', authorized: 0, captured: 0, returned: 0, remaining: 0 },
    gatewayRequests: [
      {
        requestId: REQ,
        operation: 'sale',
        createdAt: '2026-11-27T12:00:00.000Z',
        request: {},
        answer: {
          result: 'outcome-unknown',
          serial: null,
          code: null,
          at: '2026-11-27T12:00:05.000Z',
        },
      },
      {
        requestId: STATUS_REQ,
        operation: 'status',
        createdAt: '2026-11-27T12:01:00.000Z',
        request: { subjectRequestId: REQ },
        answer: null,
      },
    ],
  });

  it('says an unknown sale may have charged its amount, never 0.00', () => {
    const page = detailPage(unknownSale, viewer, undefined).text;
    expect(page).toContain('unknown — the gateway may have charged 61.50 USD');
    expect(page).toContain('status: outcome-unknown');
    expect(page).toContain('last asked at 2026-11-27T12:01:00.000Z');
    expect(page).not.toContain('0.00 USD');
  });

  it('lists each gateway request with its answer', () => {
    const declined = detail({
      gatewayRequests: [
        {
          requestId: REQ,
          operation: 'sale',
          createdAt: '2026-11-27T12:00:00.000Z',
          request: {},
          answer: {
            result: 'declined',
            serial: 'SN-7',
            code: '05',
            at: '2026-11-27T12:00:02.000Z',
          },
        },
      ],
    });
    const page = detailPage(declined, viewer, undefined).text;
    expect(page).toContain('<strong>declined</strong> (gateway code <code>05</code>:');
    // Beside the code, its meaning (or that none is known: the gateway publishes no table).
    expect(page).toMatch(
      /class="declineReason">no plain-language meaning is known[^<]*<\/span>\), serial SN-7/,
    );
    expect(detailPage(unknownSale, viewer, undefined).text).toContain('no answer recorded');
  });
});

describe('saga paths', () => {
  const CRAFTED = '../../B/actions/reject';

  it('encodes every segment, so a crafted action cannot climb to another saga', () => {
    expect(sagaPath(ID, 'actions', CRAFTED)).toBe(
      `/sagas/${ID}/actions/..%2F..%2FB%2Factions%2Freject`,
    );
    const form = confirmPage(detail().saga, CRAFTED, 'csrf').text;
    expect(form).toContain(`action="/sagas/${ID}/actions/..%2F..%2FB%2Factions%2Freject"`);
    expect(form).not.toContain('action="/sagas/' + ID + '/actions/../');
  });

  it('says in plain words which actions the saga offers instead', () => {
    const page = actionNotOfferedPage({ id: ID, status: 'paid' }, 'reject', []).text;
    expect(page).toContain('does not offer “reject” to you now');
    expect(page).toContain('It offers you no action in this state.');
    expect(
      actionNotOfferedPage({ id: ID, status: 'registered' }, 'x', ['approve', 'reject']).text,
    ).toContain('What it offers now: approve, reject.');
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

  it('a poll brings the summary out of band; a whole page showing the box has one summary only', () => {
    const moved = progressFragment(ID, 1, 5, answer, 120);
    expect(moved.text).toContain('hx-swap-oob="true"');
    const inPage = progressFragment(ID, 1, 0, answer, 120, false);
    expect(inPage.text).not.toContain('id="summary"');
    const page = detailPage(detail(), operator, inPage).text;
    expect(page.match(/id="sagaStatus"/g)).toHaveLength(1);
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
    const query = new URLSearchParams({ flow: 'payout', endpoint: '"><b>' });
    const page = searchPage(
      query,
      { ok: true, status: 200, body: { items: [detail().saga], nextCursor: 'abc' } },
      '/sagas?flow=payout&cursor=abc',
    ).text;
    expect(page).toContain('name="endpoint" value="&quot;&gt;&lt;b&gt;"');
    expect(page).toContain('<option value="payout" selected>payout</option>');
    expect(page).toContain('href="/sagas?flow=payout&amp;cursor=abc"');
    expect(page).toContain('42.00 USD');
  });
});

describe('events published', () => {
  it('are listed in time order, those not yet published last', () => {
    const e = (id: string, publishedAt: string | null, sequence: string) => ({
      id,
      type: id,
      publishedAt,
      sequence,
    });
    const ordered = inTimeOrder([
      e('c', null, '1'),
      e('b', '2026-11-27T12:00:02.000Z', '3'),
      e('a', '2026-11-27T12:00:01.000Z', '9'),
      e('b2', '2026-11-27T12:00:02.000Z', '4'),
    ]);
    expect(ordered.map((x) => x.id)).toEqual(['a', 'b', 'b2', 'c']);
  });
});
