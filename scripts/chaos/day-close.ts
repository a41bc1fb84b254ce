import type { Close, CloseReport } from '../../apps/cli/src/commands/close';
import type { PaymentStack } from '../stack/payment-stack';

/**
 * The chaos run's day close (issue #35: "the chaos suite closes its day at the end and the close
 * report ties out"). At the end of a run: the orchestrator's clock is moved past the day's end
 * (the merchants close in UTC unless MERCHANT_TIME_ZONES names them), the operator closes the day
 * through the admin API, the close reports (the day reconciled against the gateway) are awaited,
 * and {@link dayCloseTiesOut} judges them: a difference only where a case is open, and each listed.
 *
 * The stack needs TEST_CONTROLS_ENABLED=true (the clock) and an operator token in ADMIN_TOKENS.
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

/**
 * Closes the run's day (UTC, `day`: YYYY-MM-DD, by default today's) for every merchant with money
 * events, once the orchestrator's clock is past its end (moved there, plus `graceSeconds`), waits
 * for the close reports (at most `timeoutMs`), and judges them. The clock stays moved: call it
 * last.
 */
export async function closeChaosDay(
  stack: PaymentStack,
  options: {
    readonly operatorToken: string;
    readonly day?: string;
    readonly graceSeconds?: number;
    readonly timeoutMs?: number;
  },
): Promise<{ closes: Close[]; reports: CloseReport[]; verdict: DayCloseVerdict }> {
  const day = options.day ?? new Date().toISOString().slice(0, 10);
  const end = new Date(`${day}T00:00:00.000Z`).getTime() + 24 * 3_600_000;
  const ahead = Math.ceil((end - Date.now()) / 1000) + (options.graceSeconds ?? 60);
  if (ahead > 0) await stack.advanceOrchestratorClock(ahead);
  const closes = (await admin(
    stack,
    options.operatorToken,
    'POST',
    `/admin/days/${day}/close`,
    {},
  )) as Close[];
  const deadline = Date.now() + (options.timeoutMs ?? 600_000);
  let reports: CloseReport[] = [];
  for (;;) {
    reports = (await admin(
      stack,
      options.operatorToken,
      'GET',
      `/admin/days/${day}/reports`,
    )) as CloseReport[];
    const written =
      reports.length >= closes.length && reports.every((r) => r.state !== 'reconciling');
    if (written || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  return { closes, reports, verdict: dayCloseTiesOut(reports) };
}
