import { newPgClient } from '@payments/database';
import type { Close, CloseReport } from '../../apps/cli/src/commands/close';
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
 * How many times the status budget reconciliation offers the adapter: once. The adapter admits a
 * `background` query while nothing else asks only when its replica's status bucket holds a token
 * beyond the urgent reserve — with the chaos stack's burst of 2 per replica, one of them the
 * reserve, only when the bucket is full again — so a query that arrives between two refills is
 * held (not-sent with a `retryAt`, no attempt spent) and comes back later: offered the budget,
 * the chaos e2e's close drew about half of it (2026-11-29: 1.5–2.5 status queries/s sent on the
 * plain endpoint against 4/s). Offering twice the budget did not draw more (2.2 checks done a
 * second either way) and doubled the held round trips (test/chaos.md, run F3).
 */
export const OFFERED_TIMES_BUDGET = 1;

/**
 * The chaos stack's reconciliation pace: the status budget per endpoint
 * (GATEWAY_STATUS_RATE_PER_SECOND, × {@link OFFERED_TIMES_BUDGET}). Reconciliation's queries are `background`, and the
 * adapter's background share is work-conserving (apps/gateway-adapter/src/domain/status-budget.ts):
 * while no other class has asked within a second a background query may take any token of the
 * status rate but the urgent reserve, and only while another class asks does the share (¼) bind
 * — the adapter then holds the rest and asks again at the turn it gives. At the close little else
 * asks (the sagas left unknown, at the slow cadence), so pacing at the share, as before, left most
 * of the budget idle. Every orchestrator replica runs a dispatch round per tick (one at a time: an
 * advisory lock), each up to its per-tick share of RECONCILIATION_RATE_PER_SECOND per endpoint,
 * so the rate is divided over the replicas, one query per tick.
 */
export function dayCloseEnv(
  statusBudgetPerSecond: number,
  orchestratorReplicas = 1,
): Record<string, string> {
  const rate = Math.max(
    1,
    Math.ceil((statusBudgetPerSecond * OFFERED_TIMES_BUDGET) / Math.max(1, orchestratorReplicas)),
  );
  return {
    DAY_CLOSE_ENABLED: 'false',
    DAY_CLOSE_TICK_MS: '1000',
    RECONCILIATION_RATE_PER_SECOND: String(rate),
    RECONCILIATION_TICK_MS: String(Math.max(50, Math.floor(1000 / rate))),
  };
}

/**
 * Reconciliation checks per money event the bound allows: one request check per operation (a
 * declined one has no money event but is checked), the lookup by client order id once the
 * gateway confirmed the order's money, the order check of an operation settled without its
 * serial, the operations still unknown. Measured (the chaos e2e, 2026-11-29): 2.65 before the
 * order check beside a request check was dropped, ≈ 2.6 after (test/chaos.md).
 */
export const CHECKS_PER_MONEY_EVENT = 3;

/**
 * The share of the status budget the bound counts on the close drawing: the adapter holds what
 * the budget cannot take at that moment (another class asking binds the background share; a
 * query between two refills), and the status faults ask again (503, 403, a processing order).
 * Measured in the standalone run (session 15, before the status line's jitter fix): 2.8 checks
 * done a second of 12/s on the busiest endpoint, 2.71 checks a money event — ≈ 23 %; the bound
 * counts on a quarter.
 */
export const SERVED_SHARE = 0.25;

/** How long the close may take, and why (printed with the close). */
export interface DayCloseBound {
  readonly ms: number;
  readonly busiest?: { readonly endpointId: string; readonly moneyEvents: number };
  /** The bound's derivation in words, for the progress output and the report. */
  readonly text: string;
}

/**
 * How long the close may take to be written, pure, from the money events it has to check: the
 * reconciliation asks each endpoint's operations within its status budget, `budgetPerSecond`
 * (the endpoints side by side, an endpoint's days one after the other), so the busiest endpoint's
 * money events × {@link CHECKS_PER_MONEY_EVENT} checks at {@link SERVED_SHARE} of the budget,
 * plus three minutes for the runs' start, the last answers and the worker's rounds.
 */
export function dayCloseBound(
  closes: readonly Pick<Close, 'merchant' | 'count'>[],
  budgetPerSecond: number,
): DayCloseBound {
  const perEndpoint = new Map<string, number>();
  for (const c of closes)
    perEndpoint.set(c.merchant.endpointId, (perEndpoint.get(c.merchant.endpointId) ?? 0) + c.count);
  const [busiest] = [...perEndpoint].sort((a, b) => b[1] - a[1]);
  const events = busiest?.[1] ?? 0;
  const checkingMs = Math.ceil(
    (events * CHECKS_PER_MONEY_EVENT * 1000) / (budgetPerSecond * SERVED_SHARE),
  );
  return {
    ms: 180_000 + checkingMs,
    ...(busiest === undefined ? {} : { busiest: { endpointId: busiest[0], moneyEvents: events } }),
    text: `3 min + ${events} money events of the busiest endpoint${busiest === undefined ? '' : ` (${busiest[0]})`} × ${CHECKS_PER_MONEY_EVENT} checks at ${SERVED_SHARE * budgetPerSecond}/s (${SERVED_SHARE * 100} % of the status budget, ${budgetPerSecond}/s) = ${Math.round(180 + checkingMs / 1000)} s`,
  };
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
  /** How the bound was reached from the money events ({@link dayCloseBound}). */
  readonly bound: string;
  /** The close runs' reconciliation checks, and how many of them were done. */
  readonly checks: number;
  readonly checksDone: number;
  /** Status queries the checks asked the adapter, and how many of them it held (its budget). */
  readonly queries: number;
  readonly held: number;
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

/** What the close runs' reconciliation checks did so far (the progress output, the figures). */
interface ChecksSoFar {
  readonly done: number;
  readonly all: number;
  /** Status queries sent to the adapter (each attempt), and those it held by its budget. */
  readonly queries: number;
  readonly held: number;
}

async function checksSoFar(url: string, runIds: readonly string[]): Promise<ChecksSoFar> {
  const client = newPgClient(url);
  await client.connect();
  try {
    const { rows } = await client.query<Record<keyof ChecksSoFar, string>>(
      `SELECT count(*) FILTER (WHERE state = 'done') AS done, count(*) AS all,
              COALESCE(sum(attempts), 0) AS queries, COALESCE(sum(holds), 0) AS held
         FROM reconciliation_checks WHERE run_id = ANY($1::uuid[])`,
      [runIds],
    );
    const row = rows[0];
    return {
      done: Number(row?.done ?? 0),
      all: Number(row?.all ?? 0),
      queries: Number(row?.queries ?? 0),
      held: Number(row?.held ?? 0),
    };
  } finally {
    await client.end();
  }
}

/** Checks done a second, pure: `[seconds, done]` of two progress points. */
export function checksPerSecond(from: [number, number], to: [number, number]): string {
  const seconds = to[0] - from[0];
  return seconds <= 0 ? '—' : ((to[1] - from[1]) / seconds).toFixed(1);
}

/**
 * Closes every UTC day from the one of `startedAt` (the run's first command) through the day the
 * orchestrator's clock is in now, for every merchant with money events: the clock is moved past
 * the last day's end (plus `graceSeconds`), the operator closes each day (POST
 * /admin/days/{day}/close), the close reports are awaited (at most {@link dayCloseBound}, from the
 * money events to check; a progress line every `progressEveryMs` with the checks done a second)
 * and judged. The clock stays moved: call it last.
 */
export async function closeChaosDay(
  stack: PaymentStack,
  options: {
    readonly operatorToken: string;
    readonly startedAt: number;
    readonly orchestratorDatabaseUrl: string;
    /** The reconciliation's pace per endpoint, all orchestrator replicas together. */
    readonly pacePerSecond: number;
    /** The adapter's status budget per endpoint (the gateway's status queries a second). */
    readonly statusBudgetPerSecond: number;
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
  const bound = dayCloseBound(closes, options.statusBudgetPerSecond);
  const runIds = closes.flatMap((c) => (c.report ? [c.report.runId] : []));
  options.log(
    `day close: ${closes.length} close(s) of ${new Set(closes.map((c) => c.merchant.endpointId)).size} merchant(s), ${closes.reduce((n, c) => n + c.count, 0)} money events; waiting for the reports (reconciliation offered ${options.pacePerSecond}/s per endpoint, status budget ${options.statusBudgetPerSecond}/s; at most ${bound.text})`,
  );
  const deadline = Date.now() + bound.ms;
  const progressEveryMs = options.progressEveryMs ?? 15_000;
  let lastProgress = Date.now();
  let previous: [number, number] = [0, 0];
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
    if (Date.now() - lastProgress >= progressEveryMs) {
      lastProgress = Date.now();
      const so = await checksSoFar(options.orchestratorDatabaseUrl, runIds).catch(() => undefined);
      const now: [number, number] = [(Date.now() - began) / 1000, so?.done ?? NaN];
      options.log(
        `day close ${now[0].toFixed(0)} s: reports written ${written}/${closes.length}, reconciliation checks done ${so?.done ?? '?'}/${so?.all ?? '?'} (${checksPerSecond(previous, now)}/s over the last ${(now[0] - previous[0]).toFixed(0)} s, ${checksPerSecond([0, 0], now)}/s since the clock move; ${so?.queries ?? '?'} status queries asked, ${so?.held ?? '?'} held by the adapter's budget)`,
      );
      previous = now;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  const seconds = (Date.now() - began) / 1000;
  const so = await checksSoFar(options.orchestratorDatabaseUrl, runIds).catch(() => undefined);
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
    seconds,
    boundSeconds: bound.ms / 1000,
    bound: bound.text,
    checks: so?.all ?? 0,
    checksDone: so?.done ?? 0,
    queries: so?.queries ?? 0,
    held: so?.held ?? 0,
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
 * The run's day close when `config.dayClose` asks for it (on by default in `npm run chaos`;
 * `--day-close`, CHAOS_DAY_CLOSE=1 in the e2e), else undefined: the orchestrator then runs
 * without the close's settings, as before it existed. An operator's token made up for the run,
 * the clock control (TEST_CONTROLS_ENABLED), and the reconciliation paced from the adapter's status
 * budget ({@link dayCloseEnv}: the population's GATEWAY_STATUS_RATE_PER_SECOND, else the
 * adapter's default 5/s), over the orchestrator's replicas.
 */
export function chaosDayClose(
  // ChaosConfig's fields, named here: chaos-config.ts imports this module's result type.
  config: {
    readonly dayClose?: boolean;
    readonly replicas?: number;
    readonly population?: { readonly statusBudgetPerSecond?: number };
  },
): ChaosDayClose | undefined {
  if (config.dayClose !== true) return undefined;
  const admins = freshAdminTokens();
  const budget = config.population?.statusBudgetPerSecond ?? 5;
  const replicas = Math.max(1, config.replicas ?? 1);
  const pace = dayCloseEnv(budget, replicas);
  return {
    env: { TEST_CONTROLS_ENABLED: 'true', ADMIN_TOKENS: admins.adminTokens, ...pace },
    run: async (stack, options) => {
      try {
        return await closeChaosDay(stack, {
          ...options,
          operatorToken: admins.tokens.operator,
          pacePerSecond: Number(pace.RECONCILIATION_RATE_PER_SECOND) * replicas,
          statusBudgetPerSecond: budget,
        });
      } catch (error) {
        options.log(`day close failed: ${(error as Error).message}`);
        return { error: (error as Error).message };
      }
    },
  };
}
