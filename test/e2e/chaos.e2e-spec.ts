import { createTestDatabase, type TestDatabase } from '@payments/testing';
import {
  ChaosAction,
  ChaosReport,
  dayCloseRequested,
  DEFAULT_FAULTS,
  DEFAULT_POPULATION,
} from '../../scripts/chaos/chaos-config';
import { runChaos } from '../../scripts/chaos/chaos-run';
import { startReplicatedDatabase } from '../../scripts/chaos/infrastructure';
import { formatReport, zeroLines } from '../../scripts/chaos/report';
import { OwnBroker, startOwnBroker } from '../../scripts/stack/infra';
import { buildApps, freePortBlock } from '../../scripts/stack/processes';

/**
 * The chaos suite's small fixed-seed run inside `npm test`: 200 mixed commands at 10/s on a
 * broker of its own against two replicas of every app (as the Helm chart runs them), while one
 * replica each of the orchestrator, the adapter and callback-ingest is SIGKILLed once and the
 * broker is restarted (SIGTERM, data kept), with the sandbox's percentage faults (slow answers
 * beyond the adapter's timeout and refused status queries among them) and a reused client_orderid
 * charging again; card payments, payouts and transfers under a low daily payout limit, 3-D Secure
 * sales and preauths with scripted payers at the ACS (passed, failed, cancelled, abandoned), hosted
 * card forms (sale-form, preauth-form) a scripted payer fills, account verification, card
 * references with rebills and a PAN-eligibility check, transfer-by-ref and payout forms a scripted
 * payee completes; and the faults of issue #32 aimed at single payments (a first send slower than
 * the no-trace window whose resend is refused 429, a capture and a card reference held back by
 * 429s at once). Every saga, final or alerted, is compared with the ledger, and the sagas ending
 * alerted are bounded (`maxAlertedShare`). Then, on the same
 * stack and faults, recurring schedules (scripts/chaos/schedules.ts): three the orchestrator
 * charges itself and three registered with the gateway, four daily cycles each with both clocks
 * moved forward, while a replica of each app is SIGKILLed and faults aim at the charges
 * (callbacks dropped while a charge is due, status queries failing, a rebill's reply lost, a
 * rebill declined). With CHAOS_DAY_CLOSE=1 (off by default here, on in `npm run chaos`: ≈ 2 min
 * more for this run's ≈ 115 money events, above the 60 s CI can spare; it ties out since
 * test/chaos.md's run G) then the day close (scripts/chaos/day-close.ts): the orchestrator's
 * clock moved past the last day the run touched, every merchant's days closed by an operator, the
 * close reports awaited and judged — a difference only where a case is open, each listed. Then the
 * zero lines and the card-data audit.
 * `npm run chaos` is the large run (scripts/chaos/main.ts).
 *
 * On one broker by default. CHAOS_E2E_CLUSTER=1 runs it on a three-node Kafka cluster
 * (replication 3, min ISR 2, acks=all), its broker action hitting a node that is not the KRaft
 * controller and the controller's node SIGKILLed once (measured: 263 s for the file at load
 * 11–20; on one broker ≈ 190 s inside `npm test` on a quiet machine: test/chaos.md). Not the
 * default until the version gaps seen after a partition leader moved (two events marked
 * published, missing from the topic: test/chaos.md, run 3) are explained and fixed: CI would fail
 * now and then on them. The machine's PostgreSQL: the
 * failover phase is the standalone run's (it needs root and apt for pg-ha and adds ≥ 1 min);
 * CHAOS_E2E_FAILOVER=1 runs this file on the replicated PostgreSQL (pg-ha.sh) with its primary
 * lost mid-run — the same checks.
 */
const ON_CLUSTER = process.env.CHAOS_E2E_CLUSTER === '1';
const WITH_FAILOVER = process.env.CHAOS_E2E_FAILOVER === '1';
/** The day close at the end: CHAOS_DAY_CLOSE=1; off in `npm test` (on by default in `npm run chaos`). */
const WITH_DAY_CLOSE = dayCloseRequested([], process.env, false);
/** The main workload's quiet phase and the schedule phase outlast the default timeout; the day
 * close, when on, adds its bound (≈ 6 min for this run, from its money events:
 * scripts/chaos/day-close.ts `dayCloseBound`). */
const SETUP_TIMEOUT_MS = WITH_DAY_CLOSE ? 2_400_000 : 1_500_000;
const DAY_CLOSE_TEST = WITH_DAY_CLOSE
  ? 'closes its days at the end and the close report ties out: a difference only where a case is open, each listed'
  : 'does not close its days unless CHAOS_DAY_CLOSE=1, and says so';
let broker: OwnBroker;
let orchestratorDb: TestDatabase | undefined;
let adapterDb: TestDatabase | undefined;
let replicated: Awaited<ReturnType<typeof startReplicatedDatabase>> | undefined;
let report: ChaosReport;

beforeAll(async () => {
  await buildApps();
  // A cluster's three nodes take six ports (a client and a controller port each).
  broker = await startOwnBroker(await freePortBlock(ON_CLUSTER ? 6 : 2), ON_CLUSTER);
  const log = (line: string) => process.stdout.write(`${line}\n`);
  let urls: [string, string];
  if (WITH_FAILOVER) {
    const names = ['payments_test_e2e_chaos_orchestrator', 'payments_test_e2e_chaos_adapter'];
    replicated = await startReplicatedDatabase(names, log);
    urls = [replicated.urls[names[0]] ?? '', replicated.urls[names[1]] ?? ''];
  } else {
    orchestratorDb = await createTestDatabase('e2e_chaos_orchestrator');
    adapterDb = await createTestDatabase('e2e_chaos_adapter');
    urls = [orchestratorDb.url, adapterDb.url];
  }
  const actions: ChaosAction[] = [
    { target: 'orchestrator#1', signal: 'SIGKILL' },
    { target: 'gateway-adapter#0', signal: 'SIGKILL' },
    { target: 'broker', signal: 'SIGTERM' },
    ...(WITH_FAILOVER ? [{ target: 'postgres', signal: 'SIGKILL' } as const] : []),
    ...(ON_CLUSTER ? [{ target: 'controller', signal: 'SIGKILL' } as const] : []),
    { target: 'callback-ingest#1', signal: 'SIGKILL' },
  ];
  report = await runChaos(
    {
      commands: 200,
      ratePerSecond: 10,
      seed: 7,
      actions,
      faults: DEFAULT_FAULTS,
      quietMaxSeconds: 150,
      neverReceivedSeconds: 5,
      unknownAlertSeconds: 45,
      unknownCards: 1,
      gatewayDelayMs: 200,
      logLevel: 'info',
      livenessPeriodMs: 2_000,
      replicas: 2,
      payoutDailyLimitMinor: 600_000,
      approvalWindowSeconds: 20,
      adapterDatabaseOutageSeconds: 12,
      // Its disruptions' windows cover almost all of this short run's movements (test/chaos.md):
      // the bound is judged in the standalone run, which requires DEFAULT_POPULATION.minJudged.
      population: { ...DEFAULT_POPULATION, share: 0.05, min: 10, minJudged: 0 },
      schedules: {
        own: 3,
        gateway: 3,
        cycles: 4,
        actions: [
          { target: 'orchestrator#0', signal: 'SIGKILL' },
          { target: 'gateway-adapter#1', signal: 'SIGKILL' },
          { target: 'callback-ingest#0', signal: 'SIGKILL' },
          { target: 'orchestrator#1', signal: 'SIGKILL' },
        ],
        stepTimeoutSeconds: 150,
      },
      dayClose: WITH_DAY_CLOSE,
    },
    {
      broker,
      ...(replicated === undefined ? {} : { database: replicated.database }),
      orchestratorDatabaseUrl: urls[0],
      adapterDatabaseUrl: urls[1],
      log,
    },
  );
  process.stdout.write(`${formatReport(report)}\n`);
  // The main workload's quiet phase and the schedule phase after it outlast the default timeout.
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await broker?.stop();
  // CHAOS_KEEP_DB=1 keeps both databases to look into after a failed run (with CHAOS_E2E_FAILOVER,
  // the replicated PostgreSQL running: pg-ha.sh stop --wipe with its PG_HA_PORT when done).
  if (process.env.CHAOS_KEEP_DB !== '1') await replicated?.stop();
  if (process.env.CHAOS_KEEP_DB === '1') {
    process.stdout.write(`chaos: kept databases ${orchestratorDb?.url} ${adapterDb?.url}\n`);
    return;
  }
  await orchestratorDb?.drop();
  await adapterDb?.drop();
});

describe('chaos, small fixed-seed run', () => {
  it('reaches quiescence with every command answered and every payment final or alerted, but the CVV 217 one', () => {
    expect(report.quiescent).toBe(true);
    // Every command of the plan was sent, but those after a step that did not succeed.
    const unsent = Object.values(report.scenarios).reduce((n, s) => n + s.unsent, 0);
    expect(report.checks.commandsSent + unsent).toBe(report.config.commands);
    // Final, or unknown with the alert raised for a person (no trace and no safe repeat): never
    // silent. The CVV 217 card stays unknown by design.
    const silent = report.checks.unknown.filter((u) => !u.deliberate && !u.alerted);
    expect(silent).toEqual([]);
    // The CVV 217 sale stays unknown, and so may the population's payments: the sales left
    // processing, and the 3-D Secure payers who abandon while the ACS window stays open (the
    // sandbox's clock is not moved past it while a scripted payer is still at its page) — but
    // those a fault drawn before the population's own took first end like any other.
    const deliberate = report.checks.unknown.filter((u) => u.deliberate).length;
    const population = report.truth?.population;
    expect(deliberate).toBeGreaterThanOrEqual(1);
    expect(deliberate).toBeLessThanOrEqual(
      report.config.unknownCards + (population?.processing ?? 0) + (population?.abandon ?? 0),
    );
    expect(report.checks.paymentsFinal).toBe(report.checks.payments - report.checks.unknown.length);
    expect(report.actions.map((a) => `${a.signal} ${a.target}`)).toEqual(
      report.config.actions.map((a) => `${a.signal} ${a.target}`),
    );
  });

  it('ran every flow: card payments, one-step and two-step payouts (paid and expired), transfers', () => {
    const types = [
      'approved',
      'captured',
      'returned',
      'voided',
      'paid-out',
      'payout-registered',
      'payout-expired',
      'transferred',
    ];
    const seen = Object.fromEntries(types.map((t) => [t, (report.eventTypes[t] ?? 0) > 0]));
    expect(seen).toEqual(Object.fromEntries(types.map((t) => [t, true])));
  });

  it('ran the payer flows: 3-D Secure challenges passed, failed, cancelled and abandoned, card references with rebills, transfer-by-ref, payout forms', () => {
    const types = [
      'action-required',
      'declined',
      'card-ref-created',
      'payout-action-required',
      'transferred',
      'authorized',
      'account-verified',
      'pan-eligibility-answered',
    ];
    const seen = Object.fromEntries(types.map((t) => [t, (report.eventTypes[t] ?? 0) > 0]));
    expect(seen).toEqual(Object.fromEntries(types.map((t) => [t, true])));
    // Every scripted payer reached its page and did what it was to do.
    expect(report.payers.failed).toEqual([]);
    const answers = ['pass', 'wrong-password', 'cancel', 'abandon', 'payee', 'card-form'];
    // (and the population's payers, who all abandon)
    expect(
      Object.keys(report.payers.byAnswer)
        .filter((a) => !a.includes('population'))
        .sort(),
    ).toEqual([...answers].sort());
    // The abandoned challenge ended on the ACS's window, as the sandbox's clock was moved past it.
    expect(report.payers.acsWindowsExpired).toBeGreaterThan(0);
    // Each new flow reached its planned end at least once, its saga's events then matched by the
    // ledger (the zero lines below): the gateway's answer to the step, not just "ended".
    const expectedEnds: Record<string, string> = {
      '3-D Secure sale, challenge passed': 'sale → approved',
      '3-D Secure sale, wrong password': 'sale → declined: 3-D Secure authentication failed',
      '3-D Secure sale, challenge cancelled': 'sale → declined: 3-D Secure authentication failed',
      // Abandoned: polled until the ACS's window is over, then declined (the documented end).
      '3-D Secure sale, payer abandons': 'sale → declined: 3-D Secure not completed in time',
      // A card reference made, one rebill approved, the next one declined by the gateway.
      'sale → card ref → rebill → rebill declined': 'rebill → declined',
      'transfer-by-ref': 'transfer-by-ref → transferred',
      'payout form, payee completes': 'payout-form → paid-out',
      'sale-form, payer fills the form': 'sale-form → approved',
      'preauth-form → capture': 'capture → captured',
      '3-D Secure preauth → capture': 'capture → captured',
      'account verification': 'account-verification → account-verified',
      'sale → card ref → PAN eligibility': 'pan-eligibility → pan-eligibility-answered',
    };
    const reached = Object.fromEntries(
      Object.entries(expectedEnds).map(([name, end]) => [
        name,
        Object.keys(report.scenarioEnds[name] ?? {}).some((e) => e.startsWith(end)),
      ]),
    );
    // A scenario's few instances may all be taken by the run's random faults (a 503 before
    // processing leaves an opening operation unknown with no safe repeat in `charge-again` mode):
    // then each ended on an outcome left to a person, never on another answer, and at most one
    // scenario may be missed so (each flow also has its own e2e suite).
    const missed = Object.keys(expectedEnds).filter((name) => !reached[name]);
    for (const name of missed) {
      const ends = Object.keys(report.scenarioEnds[name] ?? {});
      expect({ name, ends }).toEqual({
        name,
        ends: ends.filter((e) => /outcome-unknown$/.test(e)),
      });
    }
    expect(missed.length).toBeLessThanOrEqual(1);
  });

  it('shows zero on every zero line: lost, double charges, misreported, unknown, versions, DLQ, outbox, card data', () => {
    // Time to truth is printed in the report above and judged by the standalone run (`npm run
    // chaos`, test/chaos.md), not here: inside `npm test` this run shares two cores with four
    // other stacks and the failover suite, and a bound in seconds there is a timing assertion
    // (a movement captured with its callback took 73 s at load 25 on a run whose money was right).
    const { ['time to truth over its bound']: late, ...zeros } = zeroLines(report);
    process.stdout.write(
      `chaos e2e: time to truth over its bound ${late ?? 0} (not judged here)\n`,
    );
    expect(zeros).toEqual(Object.fromEntries(Object.keys(zeros).map((k) => [k, 0])));
  });

  it('ran both kinds of schedules: cycles charged by the orchestrator and by the gateway, in the ledger and reported, with kills in between', () => {
    const schedules = report.schedules;
    if (schedules === undefined) throw new Error('the run had no schedule phase');
    expect(schedules.phase.specs.map((s) => s.chargedBy)).toEqual([
      'orchestrator',
      'orchestrator',
      'orchestrator',
      'gateway',
      'gateway',
      'gateway',
    ]);
    // A registration may fail for good under the faults (a 503 on it and on its one resend: no
    // trace, nothing charged); it is reported, and its cycles are never due.
    const failed = new Set(schedules.checks.registrationsFailed.map((p) => p.paymentId));
    const registered = schedules.phase.specs.filter(
      (s) => s.chargedBy === 'gateway' && !failed.has(s.scheduleId),
    );
    expect(registered.length).toBeGreaterThan(0);
    for (const by of ['orchestrator', 'gateway'] as const) {
      const cycles = schedules.checks.cycles.filter((c) => c.chargedBy === by && c.due);
      // Every cycle of every schedule that could be charged fell due (4 cycles each).
      const schedulesOf = by === 'orchestrator' ? 3 : registered.length;
      expect({ by, due: cycles.length }).toEqual({ by, due: 4 * schedulesOf });
      const charged = cycles.filter((c) => c.reported === 'charged' && c.ledger.length === 1);
      // A cycle alerted while unknown and charged afterwards counts once, as charged.
      const otherwise = cycles.filter(
        (c) => !charged.includes(c) && (c.reported === 'declined' || c.alerted !== undefined),
      );
      expect({ by, charged: charged.length > 0 }).toEqual({ by, charged: true });
      expect({ by, settled: charged.length + otherwise.length }).toEqual({
        by,
        settled: cycles.length,
      });
    }
    expect(schedules.phase.actions.map((a) => `${a.signal} ${a.target}`)).toEqual(
      report.config.schedules?.actions.map((a) => `${a.signal} ${a.target}`),
    );
  });

  it(DAY_CLOSE_TEST, () => {
    if (!WITH_DAY_CLOSE) {
      // Off (the default in npm test): no close made, none judged, the report says how to ask.
      expect(report.dayClose).toBeUndefined();
      expect(formatReport(report)).toContain('day close: not run (enable with --day-close)');
      return;
    }
    const close = report.dayClose;
    if (close === undefined || 'error' in close)
      throw new Error(`the run did not close its day: ${JSON.stringify(close)}`);
    // From the run's first day through the last the schedule phase moved the clock into (days on).
    expect(close.days.length).toBeGreaterThan(1);
    // Every close has its report, written (not reconciling), and every money event is a line.
    expect(close.figures.reports).toBe(close.closes);
    expect(close.moneyEvents).toBeGreaterThan(report.config.commands / 4);
    expect(close.figures.operations).toBeGreaterThanOrEqual(close.moneyEvents);
    expect(close.verdict.problems).toEqual([]);
  });

  it('scanned something in every place the card-data audit looks', () => {
    // The sandbox and two replicas of each of the three apps.
    expect(report.audit).toMatchObject({ logFiles: 7, databases: 2 });
    expect(report.audit.logLines).toBeGreaterThan(report.config.commands);
    expect(report.audit.rows).toBeGreaterThan(report.config.commands);
    expect(report.audit.messages).toBeGreaterThan(report.config.commands);
  });
});
