import { type ChaosReport, DEFAULT_POPULATION, type FailoverRecord } from './chaos-config';
import { formatReport, passed, zeroLines } from './report';

/** A passing report of a population run, but what each test changes. */
function report(
  change: {
    judged?: number;
    failovers?: FailoverRecord[];
    dayClose?: ChaosReport['dayClose'];
  } = {},
): ChaosReport {
  const judged = change.judged ?? 300;
  return {
    config: { population: DEFAULT_POPULATION, maxAlertedShare: 0.18, commands: 10 },
    seconds: { sending: 10, quiet: 5 },
    eventTypes: {},
    scenarios: {},
    callbackAttempts: { total: 0, dropped: 0 },
    payers: { byAnswer: {}, failed: [], acsWindowsExpired: 0 },
    scenarioEnds: {},
    quiescent: true,
    checks: {
      commandsSent: 10,
      payments: 10,
      paymentsFinal: 10,
      rejected: [],
      lost: [],
      doubleCharges: [],
      misreported: [],
      openMismatches: [],
      unknown: [],
      overLimit: [],
      versionProblems: [],
      alertedByConcern: {},
      alertedThenSettled: { byEvidence: 0, byDecision: 0 },
    },
    actions: [],
    dlq: {},
    outboxBacklog: 0,
    livenessRestarts: [],
    truth: {
      byFamily: {},
      judged,
      judgedWithCallback: judged,
      problems: [],
      slowest: [],
      status: { problems: [], maxPerSecond: 3 },
      population: { processing: 1, abandon: 1 },
    },
    invalidEvents: 0,
    unreadable: [],
    collectorInvalid: 0,
    audit: { findings: [], logLines: 1, rows: 1, tables: 1, messages: 1, topics: 1 },
    workDir: '/tmp',
    ...(change.failovers === undefined ? {} : { failovers: change.failovers }),
    ...(change.dayClose === undefined ? {} : { dayClose: change.dayClose }),
  } as unknown as ChaosReport;
}

describe('the report of a run', () => {
  it('fails a run whose time-to-truth bound judged fewer movements than the minimum', () => {
    expect(passed(report())).toBe(true);
    const few = report({ judged: DEFAULT_POPULATION.minJudged - 1 });
    expect(passed(few)).toBe(false);
    expect(
      zeroLines(few)[`time to truth: fewer than ${DEFAULT_POPULATION.minJudged} movements judged`],
    ).toBe(1);
    expect(formatReport(few)).toContain(
      `judged against the bounds: ${DEFAULT_POPULATION.minJudged - 1} movements`,
    );
  });

  it('fails a run whose PostgreSQL failover found no writable primary, and prints each failover', () => {
    const T0 = 1_800_000_000_000;
    const recovered: FailoverRecord = {
      killedAt: T0,
      killedNode: 1,
      newPrimaryPort: '25483',
      writableAt: T0 + 12_300,
      rejoinedAt: T0 + 34_700,
      figures: {
        noWritableMs: 12_300,
        firstSaleFinalMs: 35_600,
        backlogDrainedMs: 19_100,
        backlogCommands: 122,
      },
    };
    const ok = report({ failovers: [recovered] });
    expect(passed(ok)).toBe(true);
    expect(formatReport(ok)).toContain(
      'no writable primary 12.3 s; first sale sent after the kill final at +35.6 s; backlog (122 commands sent without a primary) drained at +19.1 s; lost node rejoined as a standby at +34.7 s',
    );
    const lost = report({
      failovers: [{ killedAt: T0, killedNode: 1, error: 'no writable primary' }],
    });
    expect(passed(lost)).toBe(false);
    expect(formatReport(lost)).toContain('FAILED: no writable primary');
  });

  it('prints the day close with its figures and listed exceptions, and fails a run whose close does not tie out or was not made', () => {
    const figures = {
      reports: 2,
      closed: 1,
      openWithExceptions: 1,
      operations: 7,
      matched: 6,
      decided: 0,
      mismatched: 0,
      unconfirmed: 0,
      unknown: 1,
      openCases: 1,
    };
    const close = (problems: string[]) => ({
      days: ['2026-11-29', '2026-11-30'],
      closes: 2,
      moneyEvents: 7,
      advancedSeconds: 3_600,
      reports: [],
      figures,
      verdict: {
        ok: problems.length === 0,
        problems,
        listed: ['2026-11-29 endpoint 1111 v1: case c-1 open (no-trace) on s-1'],
      },
      seconds: 95.4,
      boundSeconds: 400,
      bound:
        '3 min + 7 money events of the busiest endpoint (1111) × 3 checks at 2/s (50 % of the status budget, 4/s) = 191 s',
      checks: 18,
      checksDone: 18,
      queries: 30,
      held: 9,
    });
    const ok = report({ dayClose: close([]) });
    expect(passed(ok)).toBe(true);
    expect(formatReport(ok)).toContain(
      'day close ties out: 2 day(s) (2026-11-29, 2026-11-30), 2 close(s), 2 report(s): 1 closed, 1 open with exceptions; 7 operations: 6 matched, 0 decided, 0 mismatched, 0 unconfirmed; 1 unknown, 1 open case(s); 95 s (bound 400 s',
    );
    expect(formatReport(ok)).toContain(
      '    2026-11-29 endpoint 1111 v1: case c-1 open (no-trace) on s-1',
    );
    expect(formatReport(ok)).toContain(
      "    reconciliation: 18 checks for 7 money events (2.57 a money event), 18 done, 0.2 done a second; 30 status queries asked, 9 held by the adapter's budget; bound 3 min + 7 money events",
    );
    const off = report({ dayClose: close(['2026-11-29 endpoint 1111 v1: still reconciling']) });
    expect(passed(off)).toBe(false);
    expect(formatReport(off)).toContain('day close does NOT tie out');
    expect(formatReport(off)).toContain('problem: 2026-11-29 endpoint 1111 v1: still reconciling');
    const failed = report({ dayClose: { error: 'POST /admin/days/2026-11-29/close: 409' } });
    expect(passed(failed)).toBe(false);
    expect(formatReport(failed)).toContain(
      'day close FAILED: POST /admin/days/2026-11-29/close: 409',
    );
  });

  it('says the day close was not run when it was off (the default), with no zero line of its own', () => {
    const notRun = report({});
    expect(formatReport(notRun)).toContain('  day close: not run (enable with --day-close)');
    expect(Object.keys(zeroLines(notRun)).filter((l) => l.startsWith('day close'))).toEqual([]);
    expect(formatReport(report({ dayClose: { error: 'x' } }))).not.toContain('not run');
  });
});
