import { closeReport, type OperationFacts } from './close-report';

const op = (over: Partial<OperationFacts>): OperationFacts => ({
  sagaId: 's-1',
  flow: 'card-payment',
  requestId: 'r-1',
  operation: 'sale',
  type: 'approved',
  currency: 'USD',
  minor: 3_000,
  verdict: 'match',
  ...over,
});

const none = { unrecorded: [], unknown: [], openCases: [] };

describe('close report (the day tied out against the gateway)', () => {
  it('every operation matched, nothing unknown or open: closed, the totals per currency and type tie out', () => {
    const report = closeReport({
      ...none,
      operations: [
        op({}),
        op({
          sagaId: 's-2',
          requestId: 'r-2',
          type: 'captured',
          operation: 'capture',
          minor: 6_000,
        }),
        op({
          sagaId: 's-2',
          requestId: 'r-3',
          type: 'returned',
          operation: 'return',
          minor: 1_000,
        }),
        op({
          sagaId: 's-2',
          requestId: 'r-4',
          type: 'returned',
          operation: 'return',
          minor: 2_000,
        }),
        op({ sagaId: 's-3', requestId: 'r-5', type: 'approved', currency: 'EUR', minor: 700 }),
      ],
    });
    expect(report.state).toBe('closed');
    expect(report.exceptions).toEqual([]);
    expect(report.totals).toEqual([
      {
        currency: 'EUR',
        type: 'approved',
        count: 1,
        oursMinor: '700',
        gatewayMinor: '700',
        differenceMinor: '0',
      },
      {
        currency: 'USD',
        type: 'approved',
        count: 1,
        oursMinor: '3000',
        gatewayMinor: '3000',
        differenceMinor: '0',
      },
      {
        currency: 'USD',
        type: 'captured',
        count: 1,
        oursMinor: '6000',
        gatewayMinor: '6000',
        differenceMinor: '0',
      },
      {
        currency: 'USD',
        type: 'returned',
        count: 2,
        oursMinor: '3000',
        gatewayMinor: '3000',
        differenceMinor: '0',
      },
    ]);
    expect(report.lines.every((l) => l.status === 'matched' && l.differenceMinor === '0')).toBe(
      true,
    );
  });

  it('the gateway says a sale we reported charged was not: open with exceptions, the operation named, the difference its amount', () => {
    const report = closeReport({
      ...none,
      operations: [
        op({ verdict: 'reported-charged-but-not' }),
        op({ sagaId: 's-2', requestId: 'r-2' }),
      ],
    });
    expect(report.state).toBe('open-with-exceptions');
    expect(report.totals).toEqual([
      {
        currency: 'USD',
        type: 'approved',
        count: 2,
        oursMinor: '6000',
        gatewayMinor: '3000',
        differenceMinor: '3000',
      },
    ]);
    expect(report.exceptions).toEqual([
      {
        kind: 'mismatched',
        sagaId: 's-1',
        flow: 'card-payment',
        requestId: 'r-1',
        operation: 'sale',
        currency: 'USD',
        minor: '3000',
        verdict: 'reported-charged-but-not',
      },
    ]);
  });

  it('an amount the gateway reports differently, a second order charged: the gateway side shows them', () => {
    const report = closeReport({
      ...none,
      operations: [
        op({ verdict: 'amount-differs', gatewayMinor: 2_900 }),
        op({ sagaId: 's-2', requestId: 'r-2', verdict: 'paid-twice', otherOrderMinor: 3_000 }),
      ],
    });
    expect(report.lines.map((l) => [l.sagaId, l.gatewayMinor, l.differenceMinor])).toEqual([
      ['s-1', '2900', '100'],
      ['s-2', '6000', '-3000'],
    ]);
  });

  it('an operation without an answer of the gateway is unconfirmed: counted as nothing at the gateway, listed', () => {
    for (const verdict of [undefined, 'unresolved', 'unanswered']) {
      const report = closeReport({ ...none, operations: [op({ verdict })] });
      expect([
        verdict,
        report.state,
        report.lines[0]?.status,
        report.lines[0]?.gatewayMinor,
      ]).toEqual([verdict, 'open-with-exceptions', 'unconfirmed', null]);
      expect(report.exceptions.map((e) => e.kind)).toEqual(['unconfirmed']);
    }
  });

  it('settled by a decision whose case is closed: decided, tied out by the case; its case open again: unconfirmed', () => {
    const decided = op({
      type: 'settled-by-decision',
      verdict: undefined,
      minor: 9_000,
      caseId: 'c-1',
    });
    const closed = closeReport({ ...none, operations: [{ ...decided, caseStatus: 'closed' }] });
    expect(closed.state).toBe('closed');
    expect(closed.lines[0]).toMatchObject({
      status: 'decided',
      gatewayMinor: '9000',
      caseId: 'c-1',
    });
    const reopened = closeReport({
      ...none,
      operations: [{ ...decided, caseStatus: 'reopened' }],
      openCases: [
        { caseId: 'c-1', sagaId: 's-1', requestId: 'r-1', concern: 'no-trace', status: 'reopened' },
      ],
    });
    expect(reopened.state).toBe('open-with-exceptions');
    expect(reopened.exceptions.map((e) => e.kind)).toEqual(['case-open', 'unconfirmed']);
  });

  it('an operation still unknown and an open case keep the day open, each listed; money the gateway moved that we did not record is a line of its own', () => {
    const report = closeReport({
      operations: [op({})],
      unknown: [
        {
          sagaId: 's-9',
          flow: 'payout',
          requestId: 'r-9',
          operation: 'payout',
          currency: 'USD',
          heldMinor: 4_500,
          caseId: 'c-9',
        },
      ],
      openCases: [
        { caseId: 'c-9', sagaId: 's-9', requestId: 'r-9', concern: 'no-trace', status: 'open' },
      ],
      unrecorded: [
        {
          sagaId: 's-8',
          flow: 'card-payment',
          requestId: 'r-8',
          operation: 'sale',
          verdict: 'charged-but-reported-declined',
          currency: 'USD',
          gatewayMinor: 1_200,
        },
      ],
    });
    expect(report.state).toBe('open-with-exceptions');
    expect(report.exceptions.map((e) => [e.kind, e.sagaId, e.caseId])).toEqual([
      ['case-open', 's-9', 'c-9'],
      ['mismatched', 's-8', undefined],
      ['unknown', 's-9', 'c-9'],
    ]);
    expect(report.totals).toEqual([
      {
        currency: 'USD',
        type: 'approved',
        count: 1,
        oursMinor: '3000',
        gatewayMinor: '3000',
        differenceMinor: '0',
      },
      {
        currency: 'USD',
        type: 'sale',
        count: 1,
        oursMinor: '0',
        gatewayMinor: '1200',
        differenceMinor: '-1200',
      },
    ]);
  });

  it('is the same report for the same facts in any order (stored versions compare)', () => {
    const operations = [op({}), op({ sagaId: 's-2', requestId: 'r-2', minor: 10 })];
    expect(closeReport({ ...none, operations: [...operations].reverse() })).toEqual(
      closeReport({ ...none, operations }),
    );
  });
});
