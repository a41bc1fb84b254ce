/** The chaos run's report: its zero lines, the text `npm run chaos` prints, the verdict. */
import { formatSchedules, scheduleZeroLines } from './schedule-checks';
import { alertedBound, type ChaosReport } from './chaos-config';
import type { DayCloseResult } from './day-close';
import { GUARANTEED_FIRST } from './workload';
import { STATUS_BURST_PER_REPLICA } from './chaos-stack';

const zeroLine = (n: number) => (n === 0 ? 'ok' : 'FAIL');

/** The zero lines: each must be 0 for the run to pass. */
export function zeroLines(report: ChaosReport): Record<string, number> {
  const c = report.checks;
  return {
    'lost commands': c.lost.length,
    'double charges': c.doubleCharges.length,
    'misreported outcomes': c.misreported.length,
    'unknown or alerted sagas the ledger contradicts': c.openMismatches.length,
    'alerted above the bound': Math.max(
      0,
      alertedCount(report) - alertedBound(report.config, c.payments),
    ),
    'silent after quiescence (neither final nor alerted)': c.unknown.filter(
      (u) => !u.deliberate && !u.alerted,
    ).length,
    'money out over the daily limit': c.overLimit.length,
    'version gaps/duplicates': c.versionProblems.length,
    ...(report.openCases?.sagasWithEvidence === undefined
      ? {}
      : { 'sagas in limbo (alerted, no open case with evidence)': inLimbo(report).length }),
    'dead letters': Object.values(report.dlq).reduce((a, b) => a + b, 0),
    'outbox backlog': report.outboxBacklog,
    'unreadable events': Math.max(report.invalidEvents, report.collectorInvalid),
    'card-data findings': report.audit.findings.length,
    'payers and payees who could not act (page or submission failed)': report.payers.failed.length,
    ...(report.failovers === undefined
      ? {}
      : {
          'PostgreSQL failovers that did not recover (no writable primary, or no rejoin)':
            report.failovers.filter((f) => f.error !== undefined).length,
        }),
    ...(report.schedules === undefined ? {} : scheduleZeroLines(report.schedules.checks)),
    ...(report.dayClose === undefined
      ? {}
      : {
          'day close: differences without an open case or unlisted (problems)':
            'error' in report.dayClose ? 1 : report.dayClose.verdict.problems.length,
        }),
    ...(report.truth === undefined || report.config.population === undefined
      ? {}
      : {
          'time to truth over its bound': report.truth.problems.length,
          [`time to truth: fewer than ${report.config.population.minJudged} movements judged`]:
            report.truth.judged >= report.config.population.minJudged ? 0 : 1,
          "status queries above the gateway's budget (windows)":
            report.truth.status.problems.length,
          [`not quiet within ${report.config.population.quietWithinSeconds} s after the last command`]:
            report.quiescent && report.seconds.quiet <= report.config.population.quietWithinSeconds
              ? 0
              : 1,
        }),
  };
}

/**
 * Sagas in limbo (issue 33): left unknown with the alert raised (the deliberate ones too) and in
 * no open case holding evidence. Every alerted saga either settled (by evidence or by a decision,
 * `alertedThenSettled`) or waits for a person in such a case.
 */
export function inLimbo(report: ChaosReport): string[] {
  const cased = new Set(report.openCases?.sagasWithEvidence ?? []);
  return report.checks.unknown
    .filter((u) => u.alerted && !cased.has(u.paymentId))
    .map((u) => u.paymentId);
}

/** Sagas left unknown with the alert raised, the deliberate ones aside. */
export function alertedCount(report: ChaosReport): number {
  return report.checks.unknown.filter((u) => !u.deliberate && u.alerted).length;
}

export function formatReport(report: ChaosReport): string {
  const c = report.checks;
  const lines: string[] = [];
  const row = (label: string, value: string | number, verdict = '') =>
    lines.push(`  ${label.padEnd(50)} ${String(value).padStart(8)}  ${verdict}`);
  lines.push(
    `chaos: ${report.config.commands} commands at ${report.config.ratePerSecond}/s, seed ${report.config.seed}; sending ${report.seconds.sending.toFixed(0)} s, quiet ${report.seconds.quiet.toFixed(0)} s (${report.quiescent ? 'quiescent' : `NOT quiescent within ${report.config.quietMaxSeconds} s`})`,
  );
  row('commands sent', c.commandsSent);
  row('payments', c.payments);
  row('payments final', c.paymentsFinal);
  row('commands rejected (reason)', c.rejected.length);
  lines.push(
    `  events: ${Object.entries(report.eventTypes)
      .map(([type, n]) => `${type} ${n}`)
      .join(', ')}`,
  );
  for (const [name, r] of Object.entries(report.scenarios)) {
    lines.push(
      `    ${name.padEnd(36)} started ${r.started}, completed ${r.completed}, ended early ${r.endedEarly}${r.unsent ? ` (${r.unsent} commands unsent)` : ''}`,
    );
  }
  lines.push(
    `  callback attempts: ${report.callbackAttempts.total}, dropped by a fault ${report.callbackAttempts.dropped}`,
  );
  lines.push('  how the payer-flow and card-reference scenarios ended (last step → event):');
  for (const name of GUARANTEED_FIRST) {
    const ends = Object.entries(report.scenarioEnds[name] ?? {});
    if (ends.length === 0) continue;
    lines.push(`    ${name}: ${ends.map(([end, n]) => `${end} ${n}`).join(', ')}`);
  }
  lines.push(
    `  scripted payers (3-D Secure) and payees (payout form): ${
      Object.entries(report.payers.byAnswer)
        .map(([answer, n]) => `${answer} ${n}`)
        .join(', ') || 'none'
    }; ACS windows ended by the sandbox's clock ${report.payers.acsWindowsExpired}×`,
  );
  for (const p of report.payers.failed.slice(0, 10))
    lines.push(`    payer of ${p.sagaId} could not act: ${p.error}`);
  const deliberate = c.unknown.filter((u) => u.deliberate);
  row('unknown, deliberate (CVV 217, the population)', deliberate.length);
  row(
    `unknown with the alert raised (bound ${alertedBound(report.config, c.payments)})`,
    alertedCount(report),
  );
  lines.push(
    `    by concern: ${
      Object.entries(c.alertedByConcern)
        .map(([concern, n]) => `${concern} ${n}`)
        .join(', ') || 'none'
    }`,
  );
  row(
    'alerted, then settled by evidence (by a decision)',
    `${c.alertedThenSettled.byEvidence} (${c.alertedThenSettled.byDecision})`,
  );
  if (report.openCases !== undefined)
    row(
      'open cases for a person (with evidence)',
      `${report.openCases.open} (${report.openCases.withEvidence})`,
    );
  for (const [label, value] of Object.entries(zeroLines(report)))
    row(label, value, zeroLine(value));
  for (const [topic, n] of Object.entries(report.dlq)) lines.push(`    ${topic}: ${n}`);
  if (report.outage !== undefined)
    lines.push(
      `  the adapter's database out ${((report.outage.to - report.outage.from) / 1000).toFixed(1)} s; dead letters of it (expected): ${
        Object.entries(report.outage.dlq)
          .map(([topic, n]) => `${topic} ${n}`)
          .join(', ') || 'none'
      }`,
    );
  const show = (title: string, items: readonly { paymentId: string; detail: string }[]) => {
    for (const p of items.slice(0, 10)) lines.push(`    ${title} ${p.paymentId}: ${p.detail}`);
    if (items.length > 10) lines.push(`    … ${items.length - 10} more`);
  };
  show(
    'lost',
    c.lost.map((l) => ({ paymentId: l.paymentId, detail: `${l.type} ${l.commandId}` })),
  );
  show('double', c.doubleCharges);
  show('misreported', c.misreported);
  show('contradicted', c.openMismatches);
  for (const u of report.unreadable) lines.push(`    unreadable ${u}`);
  show('over the limit', c.overLimit);
  show('version', c.versionProblems);
  show('rejected', c.rejected);
  // The silent ones first: they fail the run; then the alerted, then the deliberate.
  const rank = (u: (typeof c.unknown)[number]) => (u.deliberate ? 2 : u.alerted ? 1 : 0);
  show(
    'unknown',
    [...c.unknown]
      .sort((a, b) => rank(a) - rank(b))
      .map((u) => ({
        paymentId: u.paymentId,
        detail: `${u.ageSeconds} s old, last event ${u.lastEvent}${u.deliberate ? ' (deliberate)' : ''}${u.alerted ? ` (alert: ${u.concern ?? ''})` : ''}`,
      })),
  );
  if (report.truth !== undefined) {
    const t = report.truth;
    const f = (x?: { count: number; p50Ms: number; p99Ms: number; maxMs: number }) =>
      x === undefined
        ? '—'
        : `${x.count} movements p50 ${(x.p50Ms / 1000).toFixed(1)} s, p99 ${(x.p99Ms / 1000).toFixed(1)} s, max ${(x.maxMs / 1000).toFixed(1)} s`;
    lines.push(
      `  population: ${t.population.processing} left processing, ${t.population.abandon} 3-D Secure payers who abandon; status queries the gateway saw at most ${t.status.maxPerSecond.toFixed(1)}/s per endpoint in a second (budget ${report.config.population?.statusBudgetPerSecond ?? '?'}/s + a burst of ${STATUS_BURST_PER_REPLICA * report.config.replicas})`,
    );
    lines.push('  time to truth (ledger movement → the event reporting it):');
    for (const [family, row] of Object.entries(t.byFamily))
      lines.push(
        `    ${family}: callback arrived ${f(row.arrived)}; callbacks lost ${f(row.lost)}`,
      );
    lines.push(
      `    judged against the bounds: ${t.judged} movements (${t.judgedWithCallback} with a callback, ${t.judged - t.judgedWithCallback} with every callback lost); excluded (made during a disruption): ${t.disrupted?.count ?? 0}`,
    );
    if (t.disrupted !== undefined)
      lines.push(
        `    made during a broker restart, the adapter's database outage or a PostgreSQL failover (from its bound before — 10 s with a callback, the lost-callback bound without — to 30 s after), not held to the bounds: ${f(t.disrupted)}`,
      );
    show('late', t.problems);
    show('slowest', t.slowest);
    show('slowest during a disruption', t.slowestDisrupted ?? []);
    show('status budget', t.status.problems);
  }
  if (report.schedules !== undefined)
    lines.push(...formatSchedules(report.schedules.phase, report.schedules.checks));
  lines.push(
    ...(report.dayClose === undefined
      ? ['  day close: not run (enable with --day-close)']
      : formatDayClose(report.dayClose)),
  );
  lines.push(`  restarts by the liveness probe: ${report.livenessRestarts.length}`);
  for (const r of report.livenessRestarts) {
    const at = new Date(r.at).toISOString().slice(11, 23);
    lines.push(`    ${r.app} at ${at}: ${r.answer.slice(0, 160)}`);
  }
  lines.push(
    '  recovery after each action (signal → replica ready again; broker: → first event after it; postgres: → a writable primary):',
  );
  for (const a of report.actions) {
    const target = a.node === undefined ? a.target : `${a.target} (node ${a.node})`;
    lines.push(
      `    ${a.signal.padEnd(8)} ${target.padEnd(22)} ${a.recoveryMs === undefined ? 'no output after it' : `${(a.recoveryMs / 1000).toFixed(1)} s`}`,
    );
  }
  const seconds = (ms?: number) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`);
  for (const f of report.failovers ?? []) {
    lines.push(
      `  PostgreSQL primary lost (node${f.killedNode}; new primary port ${f.newPrimaryPort ?? '?'}): no writable primary ${seconds(f.figures?.noWritableMs)}; first sale sent after the kill final at +${seconds(f.figures?.firstSaleFinalMs)}; backlog (${f.figures?.backlogCommands ?? 0} commands sent without a primary) drained at +${seconds(f.figures?.backlogDrainedMs)}; lost node rejoined as a standby at +${seconds(f.rejoinedAt === undefined ? undefined : f.rejoinedAt - f.killedAt)}${f.error === undefined ? '' : `; FAILED: ${f.error}`}`,
    );
  }
  lines.push(
    report.audit.findings.length === 0
      ? `  card-data audit: 0 findings in ${report.audit.logLines} log lines, ${report.audit.rows} rows of ${report.audit.tables} tables, ${report.audit.messages} messages on ${report.audit.topics} topics`
      : `  card-data audit: ${report.audit.findings.length} findings`,
  );
  for (const f of report.audit.findings.slice(0, 10)) {
    lines.push(`    ${f.rule} ${f.where} ${f.excerpt}`);
  }
  lines.push(`  logs and credentials: ${report.workDir}`);
  return lines.join('\n');
}

export function passed(report: ChaosReport): boolean {
  return report.quiescent && Object.values(zeroLines(report)).every((n) => n === 0);
}

/**
 * The day close's lines: whether it ties out (0 differences but where a case is open, each
 * listed), its figures and wall time, every difference and exception, then the problems.
 */
export function formatDayClose(close: DayCloseResult | { readonly error: string }): string[] {
  if ('error' in close) return [`  day close FAILED: ${close.error}`];
  const f = close.figures;
  const lines = [
    `  day close ${close.verdict.ok ? 'ties out' : 'does NOT tie out'}: ${close.days.length} day(s) (${close.days.join(', ')}), ${close.closes} close(s), ${f.reports} report(s): ${f.closed} closed, ${f.openWithExceptions} open with exceptions; ${f.operations} operations: ${f.matched} matched, ${f.decided} decided, ${f.mismatched} mismatched, ${f.unconfirmed} unconfirmed; ${f.unknown} unknown, ${f.openCases} open case(s); ${close.seconds.toFixed(0)} s (bound ${close.boundSeconds.toFixed(0)} s, the orchestrator's clock moved ${close.advancedSeconds} s)`,
  ];
  const perEvent = close.moneyEvents === 0 ? '—' : (close.checks / close.moneyEvents).toFixed(2);
  const perSecond = close.seconds <= 0 ? '—' : (close.checksDone / close.seconds).toFixed(1);
  lines.push(
    `    reconciliation: ${close.checks} checks for ${close.moneyEvents} money events (${perEvent} a money event), ${close.checksDone} done, ${perSecond} done a second; ${close.queries} status queries asked, ${close.held} held by the adapter's budget; bound ${close.bound}`,
  );
  for (const l of close.verdict.listed.slice(0, 50)) lines.push(`    ${l}`);
  if (close.verdict.listed.length > 50)
    lines.push(`    … ${close.verdict.listed.length - 50} more`);
  for (const p of close.verdict.problems.slice(0, 20)) lines.push(`    problem: ${p}`);
  if (close.verdict.problems.length > 20)
    lines.push(`    … ${close.verdict.problems.length - 20} more problems`);
  return lines;
}
