import type { CloseReport } from '../../apps/cli/src/commands/close';
import {
  chaosDayClose,
  checksPerSecond,
  CHECKS_PER_MONEY_EVENT,
  dayCloseBound,
  dayCloseEnv,
  OFFERED_TIMES_BUDGET,
  SERVED_SHARE,
  dayCloseFigures,
  dayCloseTiesOut,
  daysBetween,
} from './day-close';

type Line = NonNullable<CloseReport['lines']>[number];

const line = (over: Partial<Line>): Line => ({
  sagaId: 's-1',
  flow: 'card-payment',
  requestId: 'r-1',
  operation: 'sale',
  type: 'approved',
  currency: 'USD',
  oursMinor: '3000',
  gatewayMinor: '3000',
  differenceMinor: '0',
  status: 'matched',
  verdict: 'match',
  ...over,
});

const report = (over: Partial<CloseReport>): CloseReport => ({
  endpointId: '1113',
  day: '2026-11-29',
  version: 1,
  runId: '00000000-0000-4000-8000-000000000001',
  timeZone: 'UTC',
  from: '2026-11-29T00:00:00.000Z',
  to: '2026-11-30T00:00:00.000Z',
  state: 'closed',
  trigger: 'close',
  requestedBy: 'chaos',
  startedAt: '2026-11-30T00:01:00.000Z',
  completedAt: '2026-11-30T00:02:00.000Z',
  totals: [
    {
      currency: 'USD',
      type: 'approved',
      count: 1,
      oursMinor: '3000',
      gatewayMinor: '3000',
      differenceMinor: '0',
    },
  ],
  lines: [line({})],
  exceptions: [],
  ...over,
});

const mismatched = line({
  sagaId: 's-2',
  requestId: 'r-2',
  gatewayMinor: '0',
  differenceMinor: '3000',
  status: 'mismatched',
  verdict: 'reported-charged-but-not',
});
const twoLines = {
  lines: [line({}), mismatched],
  totals: [
    {
      currency: 'USD',
      type: 'approved',
      count: 2,
      oursMinor: '6000',
      gatewayMinor: '3000',
      differenceMinor: '3000',
    },
  ],
};
const listedMismatch = {
  kind: 'mismatched',
  sagaId: 's-2',
  requestId: 'r-2',
  operation: 'sale',
  verdict: 'reported-charged-but-not',
};

describe('the chaos run’s day close ties out', () => {
  it('a closed day with every line matched ties out', () => {
    expect(dayCloseTiesOut([report({})])).toEqual({ ok: true, problems: [], listed: [] });
  });

  it('a difference where a case is open, listed: ties out, and the run lists it', () => {
    const verdict = dayCloseTiesOut([
      report({
        state: 'open-with-exceptions',
        ...twoLines,
        exceptions: [
          listedMismatch,
          {
            kind: 'case-open',
            sagaId: 's-2',
            requestId: 'r-2',
            caseId: 'c-2',
            concern: 'no-trace',
          },
        ],
      }),
    ]);
    expect(verdict.problems).toEqual([]);
    expect(verdict.listed).toEqual([
      '2026-11-29 endpoint 1113 v1: card-payment s-2 sale USD ours 3000 gateway 0 (mismatched, reported-charged-but-not) case c-2',
      '2026-11-29 endpoint 1113 v1: case c-2 open (no-trace) on s-2',
    ]);
  });

  it('a difference with no open case is a problem; so is one not listed among the exceptions', () => {
    const noCase = dayCloseTiesOut([
      report({ state: 'open-with-exceptions', ...twoLines, exceptions: [listedMismatch] }),
    ]);
    expect(noCase.ok).toBe(false);
    expect(noCase.problems).toEqual([expect.stringContaining('a difference with no open case')]);
    const unlisted = dayCloseTiesOut([
      report({
        state: 'open-with-exceptions',
        ...twoLines,
        exceptions: [{ kind: 'case-open', sagaId: 's-2', requestId: 'r-2', caseId: 'c-2' }],
      }),
    ]);
    expect(unlisted.problems).toEqual([
      expect.stringContaining('a difference not listed among the exceptions'),
    ]);
  });

  it('an operation still unknown needs an open case', () => {
    const unknown = {
      kind: 'unknown',
      sagaId: 's-9',
      requestId: 'r-9',
      minor: '4500',
      currency: 'USD',
    };
    expect(
      dayCloseTiesOut([report({ state: 'open-with-exceptions', exceptions: [unknown] })]).problems,
    ).toEqual([expect.stringContaining('still unknown (4500 USD held): no open case')]);
    expect(
      dayCloseTiesOut([
        report({
          state: 'open-with-exceptions',
          exceptions: [
            unknown,
            { kind: 'case-open', sagaId: 's-9', requestId: 'r-9', caseId: 'c-9' },
          ],
        }),
      ]).ok,
    ).toBe(true);
  });

  it('totals that do not add up to their lines, a report still reconciling, a state that contradicts its exceptions: each a problem', () => {
    expect(
      dayCloseTiesOut([
        report({
          totals: [
            {
              currency: 'USD',
              type: 'approved',
              count: 1,
              oursMinor: '3000',
              gatewayMinor: '2000',
              differenceMinor: '1000',
            },
          ],
        }),
      ]).problems,
    ).toEqual([
      expect.stringContaining('total difference 1000 over 1 line(s), its lines say 0 over 1'),
    ]);
    expect(
      dayCloseTiesOut([report({ state: 'reconciling', totals: undefined, lines: undefined })])
        .problems,
    ).toEqual(['2026-11-29 endpoint 1113 v1: still reconciling']);
    expect(dayCloseTiesOut([report({ state: 'open-with-exceptions' })]).problems).toEqual([
      '2026-11-29 endpoint 1113 v1: open with exceptions, none listed',
    ]);
  });
});

describe('the chaos run’s day close: days, figures, pace and bound', () => {
  it('daysBetween: every UTC day from the first instant’s through the last’s', () => {
    const at = (iso: string) => Date.parse(iso);
    expect(daysBetween(at('2026-11-29T23:59:00Z'), at('2026-12-02T00:00:00Z'))).toEqual([
      '2026-11-29',
      '2026-11-30',
      '2026-12-01',
      '2026-12-02',
    ]);
    expect(daysBetween(at('2026-11-29T08:00:00Z'), at('2026-11-29T09:00:00Z'))).toEqual([
      '2026-11-29',
    ]);
  });

  it('dayCloseFigures counts the lines by status and the exceptions by kind, open cases once', () => {
    const decided = line({ sagaId: 's-3', type: 'settled-by-decision', status: 'decided' });
    const unconfirmed = line({ sagaId: 's-4', status: 'unconfirmed', verdict: 'unresolved' });
    const figures = dayCloseFigures([
      report({}),
      report({
        endpointId: '1111',
        state: 'open-with-exceptions',
        lines: [line({}), mismatched, decided, unconfirmed],
        exceptions: [
          listedMismatch,
          { kind: 'unknown', sagaId: 's-9', requestId: 'r-9' },
          { kind: 'case-open', sagaId: 's-2', requestId: 'r-2', caseId: 'c-2' },
          { kind: 'case-open', sagaId: 's-2', requestId: 'r-2', caseId: 'c-2' },
          { kind: 'case-open', sagaId: 's-9', requestId: 'r-9', caseId: 'c-9' },
        ],
      }),
    ]);
    expect(figures).toEqual({
      reports: 2,
      closed: 1,
      openWithExceptions: 1,
      operations: 5,
      matched: 2,
      decided: 1,
      mismatched: 1,
      unconfirmed: 1,
      unknown: 1,
      openCases: 2,
    });
  });

  it('dayCloseEnv offers reconciliation the whole status budget (the adapter’s background share is work-conserving, the rest it holds), over the orchestrator replicas, one query a tick, and leaves the close to the operator', () => {
    expect(OFFERED_TIMES_BUDGET).toBe(1);
    expect(dayCloseEnv(12, 2)).toEqual({
      DAY_CLOSE_ENABLED: 'false',
      DAY_CLOSE_TICK_MS: '1000',
      RECONCILIATION_RATE_PER_SECOND: '6',
      RECONCILIATION_TICK_MS: '166',
    });
    // The e2e's budget of 4/s over two replicas: 2/s each, a query every 500 ms.
    expect(dayCloseEnv(4, 2)).toMatchObject({
      RECONCILIATION_RATE_PER_SECOND: '2',
      RECONCILIATION_TICK_MS: '500',
    });
    // One replica offers it all; never below one a second.
    expect(dayCloseEnv(4)).toMatchObject({ RECONCILIATION_RATE_PER_SECOND: '4' });
    expect(dayCloseEnv(1, 2)).toMatchObject({
      RECONCILIATION_RATE_PER_SECOND: '1',
      RECONCILIATION_TICK_MS: '1000',
    });
  });

  it('dayCloseBound: from the money events of the busiest endpoint, its checks at half the pace, plus three minutes — and says so', () => {
    const close = (endpointId: string, count: number) => ({ merchant: { endpointId }, count });
    const bound = dayCloseBound([close('1111', 600), close('1111', 150), close('1112', 700)], 12);
    // 750 money events × 3 checks at 6/s: 375 s.
    expect(bound.ms).toBe(180_000 + (750 * CHECKS_PER_MONEY_EVENT * 1000) / (12 * SERVED_SHARE));
    expect(bound.busiest).toEqual({ endpointId: '1111', moneyEvents: 750 });
    expect(bound.text).toBe(
      '3 min + 750 money events of the busiest endpoint (1111) × 3 checks at 3/s (25 % of the status budget, 12/s) = 930 s',
    );
    // More money events, a longer bound; a faster pace, a shorter one.
    expect(dayCloseBound([close('1111', 751)], 12).ms).toBeGreaterThan(
      dayCloseBound([close('1111', 750)], 12).ms,
    );
    expect(dayCloseBound([close('1111', 750)], 4).ms).toBeGreaterThan(bound.ms);
    expect(dayCloseBound([], 3)).toMatchObject({ ms: 180_000 });
  });

  it('checksPerSecond: checks done between two progress points, a second', () => {
    expect(checksPerSecond([0, 0], [15, 45])).toBe('3.0');
    expect(checksPerSecond([15, 45], [30, 51])).toBe('0.4');
    expect(checksPerSecond([15, 45], [15, 45])).toBe('—');
  });
});

describe('chaosDayClose: the run’s day close only when asked for', () => {
  it('is nothing when the config does not ask (the default): no settings for the orchestrator', () => {
    expect(chaosDayClose({})).toBeUndefined();
    expect(chaosDayClose({ dayClose: false })).toBeUndefined();
  });

  it('asked for: the clock control, an operator token of its own and the pace for the orchestrator', () => {
    const close = chaosDayClose({ dayClose: true });
    expect(close?.env).toMatchObject({ TEST_CONTROLS_ENABLED: 'true', ...dayCloseEnv(5) });
    // The population's status budget over the orchestrator's replicas.
    expect(
      chaosDayClose({ dayClose: true, replicas: 2, population: { statusBudgetPerSecond: 12 } })
        ?.env,
    ).toMatchObject(dayCloseEnv(12, 2));
    const admins = JSON.parse(close?.env.ADMIN_TOKENS ?? '[]') as Array<{ role: string }>;
    expect(admins.map((a) => a.role)).toContain('operator');
  });
});
