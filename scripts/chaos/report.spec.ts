import { type ChaosReport, DEFAULT_POPULATION, type FailoverRecord } from './chaos-config';
import { formatReport, passed, zeroLines } from './report';

/** A passing report of a population run, but what each test changes. */
function report(
  change: {
    judged?: number;
    failovers?: FailoverRecord[];
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
});
