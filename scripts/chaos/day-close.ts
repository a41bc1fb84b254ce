import { newPgClient } from '@payments/database';
import type { Close, CloseReport } from '../../apps/cli/src/commands/close';
import { DEFAULT_BACKGROUND_SHARE } from '../../apps/gateway-adapter/src/domain/status-budget';
import { freshAdminTokens } from '../stack/console-app';
import type { PaymentStack } from '../stack/payment-stack';

/**
 * The chaos run's day close (issue #35: "the chaos suite closes its day at the end and the close
 * report ties out"). At the end of a run, after every other check: the orchestrator's clock is
 * moved past the end of the last day the run touched (the merchants close in UTC: the chaos stack
 * names no MERCHANT_TIME_ZONES; the schedule phase has moved the clock days ahead already), the
 * operator closes each day from the run's first through that one through the admin API (an
 * operator cannot close a day before its end: 409 DAY_NOT_OVER, so the clock move is the way),
 * the close reports (each day reconciled against the gateway) are awaited, bounded, with progress
 * output, and {@link dayCloseTiesOut} judges them: a difference only where a case is open, and
 * each listed.
 *
 * The stack needs TEST_CONTROLS_ENABLED=true (the clock), an operator token in ADMIN_TOKENS,
 * DAY_CLOSE_ENABLED=false (no scheduled close mid-run while the schedule phase moves the clock:
 * the operator's close at the end is the one judged) and the reconciliation paced to what the
 * adapter lets it ask ({@link dayCloseEnv}).
 */

/** What the check found wrong with the day's close reports (empty: it ties out). */
export interface DayCloseVerdict {
  readonly ok: boolean;
  readonly problems: readonly string[];
  /** Every difference and exception, one line each (for the run's report). */
  readonly listed: readonly string[];
}

const key = (sagaId: string, requestId: string | undefined) => `${sagaId} ${requestId ?? ''}`;

/**
 * Whether the close reports tie out, pure: every report written (not reconciling); each line with
 * a difference (or not confirmed by the gateway) and each operation still unknown has an open case
 * of its saga (and request, when both name one) and is listed among the report's exceptions; each
 * total's difference is the sum of its lines'. A day `closed` with an exception, or
 * `open-with-exceptions` with none, is a problem too.
 */
export function dayCloseTiesOut(reports: readonly CloseReport[]): DayCloseVerdict {
  const problems: string[] = [];
  const listed: string[] = [];
  for (const report of reports) {
    const name = `${report.day} endpoint ${report.endpointId} v${report.version}`;
    if (report.state === 'reconciling') {
      problems.push(`${name}: still reconciling`);
      continue;
    }
    const exceptions = report.exceptions ?? [];
    const lines = report.lines ?? [];
    const open = exceptions.filter((e) => e.kind === 'case-open');
    const caseFor = (sagaId: string, requestId: string | undefined) =>
      open.find(
        (c) =>
          c.sagaId === sagaId &&
          (requestId === undefined || c.requestId === undefined || c.requestId === requestId),
      );
    const listedFor = (sagaId: string, requestId: string | undefined) =>
      exceptions.some(
        (e) => e.kind !== 'case-open' && key(e.sagaId, e.requestId) === key(sagaId, requestId),
      );
    for (const line of lines) {
      const differs =
        line.differenceMinor !== '0' ||
        line.status === 'mismatched' ||
        line.status === 'unconfirmed';
      if (!differs) continue;
      const what = `${name}: ${line.flow} ${line.sagaId} ${line.operation ?? line.type} ${line.currency} ours ${line.oursMinor} gateway ${line.gatewayMinor ?? 'none'} (${line.status}${line.verdict === undefined ? '' : `, ${line.verdict}`})`;
      const held = caseFor(line.sagaId, line.requestId);
      listed.push(`${what}${held === undefined ? '' : ` case ${held.caseId ?? ''}`}`);
      if (held === undefined) problems.push(`${what}: a difference with no open case`);
      if (!listedFor(line.sagaId, line.requestId))
        problems.push(`${what}: a difference not listed among the exceptions`);
    }
    for (const unknown of exceptions.filter((e) => e.kind === 'unknown')) {
      const what = `${name}: ${unknown.flow ?? ''} ${unknown.sagaId} ${unknown.operation ?? ''} still unknown (${unknown.minor ?? '?'} ${unknown.currency ?? ''} held)`;
      const held = caseFor(unknown.sagaId, unknown.requestId);
      listed.push(`${what}${held === undefined ? '' : ` case ${held.caseId ?? ''}`}`);
      if (held === undefined) problems.push(`${what}: no open case`);
    }
    for (const c of open)
      listed.push(`${name}: case ${c.caseId ?? ''} open (${c.concern ?? ''}) on ${c.sagaId}`);
    for (const total of report.totals ?? []) {
      const of = lines.filter((l) => l.currency === total.currency && l.type === total.type);
      const sum = of.reduce((n, l) => n + BigInt(l.differenceMinor), 0n);
      if (sum.toString() !== total.differenceMinor || of.length !== total.count)
        problems.push(
          `${name}: ${total.type} ${total.currency} total difference ${total.differenceMinor} over ${total.count} line(s), its lines say ${sum.toString()} over ${of.length}`,
        );
    }
    if (report.state === 'closed' && exceptions.length > 0)
      problems.push(`${name}: closed with ${exceptions.length} exception(s)`);
    if (report.state === 'open-with-exceptions' && exceptions.length === 0)
      problems.push(`${name}: open with exceptions, none listed`);
  }
  return { ok: problems.length === 0, problems, listed };
}

/** The close's figures, from its reports' lines and exceptions (the run's report prints them). */
export interface DayCloseFigures {
  readonly reports: number;
  readonly closed: number;
  readonly openWithExceptions: number;
  /** Lines: each money event and each operation settled by a decision, of every day. */
  readonly operations: number;
  readonly matched: number;
  readonly decided: number;
  readonly mismatched: number;
  readonly unconfirmed: number;
  /** Operations still unknown at the close (their amount held in-flight-unknown). */
  readonly unknown: number;
  /** Open cases (open, proposed, reopened) about an operation of a closed day. */
  readonly openCases: number;
}

/** Counts the reports' lines by status and their exceptions by kind, pure. */
export function dayCloseFigures(reports: readonly CloseReport[]): DayCloseFigures {
  const lines = reports.flatMap((r) => r.lines ?? []);
  const exceptions = reports.flatMap((r) => r.exceptions ?? []);
  const status = (s: string) => lines.filter((l) => l.status === s).length;
  return {
    reports: reports.length,
    closed: reports.filter((r) => r.state === 'closed').length,
    openWithExceptions: reports.filter((r) => r.state === 'open-with-exceptions').length,
    operations: lines.length,
    matched: status('matched'),
    decided: status('decided'),
    mismatched: status('mismatched'),
    unconfirmed: status('unconfirmed'),
    unknown: exceptions.filter((e) => e.kind === 'unknown').length,
    openCases: new Set(
      exceptions.filter((e) => e.kind === 'case-open').map((e) => e.caseId ?? e.sagaId),
    ).size,
  };
}

const DAY_MS = 86_400_000;

/** Every UTC day (YYYY-MM-DD) from the one of `fromMs` through the one of `toMs`, pure. */
export function daysBetween(fromMs: number, toMs: number): string[] {
  const days: string[] = [];
  for (let at = Math.floor(fromMs / DAY_MS) * DAY_MS; at <= toMs; at += DAY_MS)
    days.push(new Date(at).toISOString().slice(0, 10));
  return days;
}

/**
 * The chaos stack's reconciliation pace: the share of the adapter's status budget per endpoint a
 * reconciliation query (priority `background`) may take (DEFAULT_BACKGROUND_SHARE of
 * GATEWAY_STATUS_RATE_PER_SECOND), at least one a second; asking faster only has the adapter hold
 * the rest (not-sent, asked again at its `retryAt`). One query per worker tick, so the adapter's
 * background bucket (burst 1) is not asked several at once.
 */
export function dayCloseEnv(statusBudgetPerSecond: number): Record<string, string> {
  const rate = Math.max(1, Math.floor(statusBudgetPerSecond * DEFAULT_BACKGROUND_SHARE));
  return {
    DAY_CLOSE_ENABLED: 'false',
    DAY_CLOSE_TICK_MS: '1000',
    RECONCILIATION_RATE_PER_SECOND: String(rate),
    RECONCILIATION_TICK_MS: String(Math.max(100, Math.floor(1000 / rate))),
  };
}

/**
 * How long the close may take to be written, pure: the reconciliation asks each endpoint's
 * operations at `ratePerSecond` (the endpoints side by side, an endpoint's days one after the
 * other). Measured (the chaos e2e, 2026-11-29): ≈ 2.5 checks per money event (its requests, the
 * order, the lookup by client order id), ≈ 0.67 of the pace served (the adapter holds a query
 * when its replica's background bucket is empty; the sandbox's status faults ask again): ≈ 4 s
 * per money event at 1/s. The bound is twice that for the busiest endpoint, plus three minutes
 * for the runs and the worker's rounds.
 */
export function dayCloseBoundMs(
  closes: readonly Pick<Close, 'merchant' | 'count'>[],
  ratePerSecond: number,
): number {
  const perEndpoint = new Map<string, number>();
  for (const c of closes)
    perEndpoint.set(c.merchant.endpointId, (perEndpoint.get(c.merchant.endpointId) ?? 0) + c.count);
  const most = Math.max(0, ...perEndpoint.values());
  return 180_000 + Math.ceil((most * 8 * 1000) / ratePerSecond);
}

/** What the chaos run's day close did and found (ChaosReport.dayClose). */
export interface DayCloseResult {
  readonly days: readonly string[];
  /** Closes made (merchant × day). */
  readonly closes: number;
  /** Money events the closes counted (each a line of its report, as are decided operations). */
  readonly moneyEvents: number;
  /** How far the orchestrator's clock was moved for it, in seconds. */
  readonly advancedSeconds: number;
  readonly reports: readonly CloseReport[];
  readonly figures: DayCloseFigures;
  readonly verdict: DayCloseVerdict;
  /** Wall time from the clock move to the last report written (or the bound). */
  readonly seconds: number;
  readonly boundSeconds: number;
}

async function admin(
  stack: PaymentStack,
  token: string,
  method: 'GET' | 'POST',
  route: string,
  body?: unknown,
): Promise<unknown> {
  const answer = await stack.admin<unknown>(method, route, token, body);
  if (answer.status >= 300)
    throw new Error(`${method} ${route}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** The checks of these reconciliation runs done so far, and in all (the progress output). */
async function checksDone(url: string, runIds: readonly string[]): Promise<[number, number]> {
  const client = newPgClient(url);
  await client.connect();
  try {
    const { rows } = await client.query<{ done: string; all: string }>(
      `SELECT count(*) FILTER (WHERE state = 'done') AS done, count(*) AS all
         FROM reconciliation_checks WHERE run_id = ANY($1::uuid[])`,
      [runIds],
    );
    return [Number(rows[0]?.done ?? 0), Number(rows[0]?.all ?? 0)];
  } finally {
    await client.end();
  }
}

/**
 * Closes every UTC day from the one of `startedAt` (the run's first command) through the day the
 * orchestrator's clock is in now, for every merchant with money events: the clock is moved past
 * the last day's end (plus `graceSeconds`), the operator closes each day (POST
 * /admin/days/{day}/close), the close reports are awaited (at most {@link dayCloseBoundMs}, a
 * progress line every `progressEveryMs`) and judged. The clock stays moved: call it last.
 */
export async function closeChaosDay(
  stack: PaymentStack,
  options: {
    readonly operatorToken: string;
    readonly startedAt: number;
    readonly orchestratorDatabaseUrl: string;
    readonly reconciliationRatePerSecond: number;
    readonly log: (line: string) => void;
    readonly graceSeconds?: number;
    readonly progressEveryMs?: number;
  },
): Promise<DayCloseResult> {
  const began = Date.now();
  const clockNow = began + stack.orchestratorClockAdvanced * 1000;
  const days = daysBetween(options.startedAt, clockNow);
  const last = days.at(-1) ?? new Date(clockNow).toISOString().slice(0, 10);
  const end = Date.parse(`${last}T00:00:00.000Z`) + DAY_MS;
  const ahead = Math.max(0, Math.ceil((end - clockNow) / 1000) + (options.graceSeconds ?? 60));
  options.log(
    `day close: moving the orchestrator's clock ${ahead} s past the end of ${last}; closing ${days.join(', ')}`,
  );
  if (ahead > 0) await stack.advanceOrchestratorClock(ahead);
  const closes: Close[] = [];
  for (const day of days)
    closes.push(
      ...((await admin(
        stack,
        options.operatorToken,
        'POST',
        `/admin/days/${day}/close`,
        {},
      )) as Close[]),
    );
  const boundMs = dayCloseBoundMs(closes, options.reconciliationRatePerSecond);
  const runIds = closes.flatMap((c) => (c.report ? [c.report.runId] : []));
  options.log(
    `day close: ${closes.length} close(s) of ${new Set(closes.map((c) => c.merchant.endpointId)).size} merchant(s), ${closes.reduce((n, c) => n + c.count, 0)} money events; waiting for the reports (reconciliation ${options.reconciliationRatePerSecond}/s per endpoint, at most ${(boundMs / 1000).toFixed(0)} s)`,
  );
  const deadline = Date.now() + boundMs;
  let lastProgress = Date.now();
  let reports: CloseReport[] = [];
  for (;;) {
    reports = [];
    for (const day of days)
      reports.push(
        ...((await admin(
          stack,
          options.operatorToken,
          'GET',
          `/admin/days/${day}/reports`,
        )) as CloseReport[]),
      );
    const written = reports.filter((r) => r.state !== 'reconciling').length;
    if ((reports.length >= closes.length && written === reports.length) || Date.now() > deadline)
      break;
    if (Date.now() - lastProgress >= (options.progressEveryMs ?? 15_000)) {
      lastProgress = Date.now();
      const [done, all] = await checksDone(options.orchestratorDatabaseUrl, runIds).catch(() => [
        NaN,
        NaN,
      ]);
      options.log(
        `day close ${((Date.now() - began) / 1000).toFixed(0)} s: reports written ${written}/${closes.length}, reconciliation checks done ${done}/${all}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  const verdict = dayCloseTiesOut(reports);
  // A close whose report never came (none started, or the bound passed before its first version).
  const missing = closes.filter(
    (c) => !reports.some((r) => r.day === c.day && r.endpointId === c.merchant.endpointId),
  );
  return {
    days,
    closes: closes.length,
    moneyEvents: closes.reduce((n, c) => n + c.count, 0),
    advancedSeconds: ahead,
    reports,
    figures: dayCloseFigures(reports),
    verdict:
      missing.length === 0
        ? verdict
        : {
            ok: false,
            problems: [
              ...verdict.problems,
              ...missing.map((c) => `${c.day} endpoint ${c.merchant.endpointId}: no close report`),
            ],
            listed: verdict.listed,
          },
    seconds: (Date.now() - began) / 1000,
    boundSeconds: boundMs / 1000,
  };
}

/** The day close of a chaos run that asked for it: the orchestrator's settings, and the close. */
export interface ChaosDayClose {
  /** The orchestrator's environment for it: the clock control, an operator, the pace. */
  readonly env: Readonly<Record<string, string>>;
  /** Closes the run's days ({@link closeChaosDay}); a failure is the result's `error`. */
  readonly run: (
    stack: PaymentStack,
    options: {
      readonly startedAt: number;
      readonly orchestratorDatabaseUrl: string;
      readonly log: (line: string) => void;
    },
  ) => Promise<DayCloseResult | { readonly error: string }>;
}

/**
 * The run's day close when `config.dayClose` asks for it (`--day-close`, CHAOS_DAY_CLOSE=1), else
 * undefined: the orchestrator then runs without the close's settings, as before it existed. An
 * operator's token made up for the run, the clock control (TEST_CONTROLS_ENABLED), and the
 * reconciliation paced to the adapter's status budget ({@link dayCloseEnv}: the population's
 * GATEWAY_STATUS_RATE_PER_SECOND, else the adapter's default 5/s).
 */
export function chaosDayClose(
  // ChaosConfig's two fields, named here: chaos-config.ts imports this module's result type.
  config: {
    readonly dayClose?: boolean;
    readonly population?: { readonly statusBudgetPerSecond?: number };
  },
): ChaosDayClose | undefined {
  if (config.dayClose !== true) return undefined;
  const admins = freshAdminTokens();
  const pace = dayCloseEnv(config.population?.statusBudgetPerSecond ?? 5);
  return {
    env: { TEST_CONTROLS_ENABLED: 'true', ADMIN_TOKENS: admins.adminTokens, ...pace },
    run: async (stack, options) => {
      try {
        return await closeChaosDay(stack, {
          ...options,
          operatorToken: admins.tokens.operator,
          reconciliationRatePerSecond: Number(pace.RECONCILIATION_RATE_PER_SECOND),
        });
      } catch (error) {
        options.log(`day close failed: ${(error as Error).message}`);
        return { error: (error as Error).message };
      }
    },
  };
}
