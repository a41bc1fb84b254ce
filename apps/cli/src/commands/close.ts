import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type DayClosedEvent } from '@payments/contracts';
import { type AdminOptions, adminGet, adminPost } from './admin';
import { UsageError } from './errors';

export interface CloseOptions extends AdminOptions {
  readonly day: string;
  readonly endpoint?: string;
  /** Read the stored closes only (GET): nothing is closed. */
  readonly show?: boolean;
  /** The totals as CSV (CLOSE_CSV_COLUMNS). */
  readonly csv?: boolean;
  /** Start the next version of each close report (the day reconciled against the gateway again). */
  readonly rerun?: boolean;
  /** Wait until no close report of the answer is reconciling (GET every second, at most this long). */
  readonly wait?: boolean;
  readonly waitSeconds?: string;
  /** Write the close reports as two CSV files in this folder: totals and lines (docs/integration.md). */
  readonly export?: string;
}

/** A version of a day's close report as the admin API answers it (GET /admin/days/:day/reports). */
export interface CloseReport {
  readonly endpointId: string;
  readonly day: string;
  readonly version: number;
  readonly runId: string;
  readonly timeZone: string;
  readonly from: string;
  readonly to: string;
  readonly state: 'reconciling' | 'closed' | 'open-with-exceptions';
  readonly trigger: string;
  readonly requestedBy: string;
  readonly startedAt: string;
  readonly completedAt?: string;
  readonly totals?: ReadonlyArray<{
    currency: string;
    type: string;
    count: number;
    oursMinor: string;
    gatewayMinor: string;
    differenceMinor: string;
  }>;
  readonly lines?: ReadonlyArray<{
    sagaId: string;
    flow: string;
    requestId?: string;
    operation?: string;
    type: string;
    currency: string;
    oursMinor: string;
    gatewayMinor: string | null;
    differenceMinor: string;
    status: string;
    verdict?: string;
    caseId?: string;
  }>;
  readonly exceptions?: ReadonlyArray<{
    kind: string;
    sagaId: string;
    flow?: string;
    requestId?: string;
    operation?: string;
    currency?: string;
    minor?: string;
    verdict?: string;
    caseId?: string;
    concern?: string;
  }>;
}

export type Close = DayClosedEvent & {
  closedBy: string;
  fresh: boolean;
  /** The latest version of the day's close report (null before any). */
  report?: CloseReport | null;
};

/** The CSV's columns, one row per merchant, day, type and currency (docs/operations.md). */
export const CLOSE_CSV_COLUMNS = [
  'day',
  'endpoint_id',
  'time_zone',
  'from',
  'to',
  'event_type',
  'currency',
  'count',
  'sum_minor',
  'last_merchant_seq',
] as const;

/** The totals of closes as CSV lines, header first; a day with no money event is one row without type. */
export function closeCsv(closes: readonly Close[]): string[] {
  const row = (c: Close, t?: DayClosedEvent['totals'][number]) =>
    [
      c.day,
      c.merchant.endpointId,
      c.timeZone,
      c.from,
      c.to,
      t?.eventType ?? '',
      t?.currency ?? '',
      String(t?.count ?? 0),
      t?.sumMinor ?? '0',
      String(c.lastMerchantSeq),
    ].join(',');
  return [
    CLOSE_CSV_COLUMNS.join(','),
    ...closes.flatMap((c) => (c.totals.length === 0 ? [row(c)] : c.totals.map((t) => row(c, t)))),
  ];
}

/** The close report's totals file: one row per merchant, currency and type (docs/integration.md). */
export const REPORT_TOTALS_COLUMNS = [
  'day',
  'endpoint_id',
  'time_zone',
  'version',
  'state',
  'currency',
  'type',
  'count',
  'ours_minor',
  'gateway_minor',
  'difference_minor',
] as const;

/** The close report's lines file: one row per operation of the merchant's day (docs/integration.md). */
export const REPORT_LINES_COLUMNS = [
  'day',
  'endpoint_id',
  'version',
  'saga_id',
  'flow',
  'request_id',
  'operation',
  'type',
  'currency',
  'ours_minor',
  'gateway_minor',
  'difference_minor',
  'status',
  'verdict',
  'case_id',
] as const;

/** A CSV field: quoted when it holds a comma, a quote or a line break. */
function field(value: string | number | null | undefined): string {
  const text = value === null || value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The close reports as two CSV files (header first): totals and lines. */
export function reportCsv(reports: readonly CloseReport[]): { totals: string[]; lines: string[] } {
  return {
    totals: [
      REPORT_TOTALS_COLUMNS.join(','),
      ...reports.flatMap((r) =>
        (r.totals ?? []).map((t) =>
          [
            r.day,
            r.endpointId,
            r.timeZone,
            r.version,
            r.state,
            t.currency,
            t.type,
            t.count,
            t.oursMinor,
            t.gatewayMinor,
            t.differenceMinor,
          ]
            .map(field)
            .join(','),
        ),
      ),
    ],
    lines: [
      REPORT_LINES_COLUMNS.join(','),
      ...reports.flatMap((r) =>
        (r.lines ?? []).map((l) =>
          [
            r.day,
            r.endpointId,
            r.version,
            l.sagaId,
            l.flow,
            l.requestId,
            l.operation,
            l.type,
            l.currency,
            l.oursMinor,
            l.gatewayMinor,
            l.differenceMinor,
            l.status,
            l.verdict,
            l.caseId,
          ]
            .map(field)
            .join(','),
        ),
      ),
    ],
  };
}

/** A close report as an operator reads it: its state, totals and exceptions. */
function reportLines(report: CloseReport | null | undefined): string[] {
  if (report === null || report === undefined) return ['  report: none yet'];
  return [
    `  report v${report.version} ${report.state} (${report.trigger} by ${report.requestedBy}, run ${report.runId})`,
    ...(report.totals ?? []).map(
      (t) =>
        `    ${t.type} ${t.currency} count=${t.count} ours=${t.oursMinor} gateway=${t.gatewayMinor} difference=${t.differenceMinor}`,
    ),
    ...(report.exceptions ?? []).map(
      (e) =>
        `    exception ${e.kind}: ${e.flow ?? ''} saga ${e.sagaId}${e.requestId === undefined ? '' : ` request ${e.requestId}`}${e.operation === undefined ? '' : ` ${e.operation}`}${e.minor === undefined ? '' : ` ${e.minor} ${e.currency ?? ''}`}${e.verdict === undefined ? '' : ` (${e.verdict})`}${e.caseId === undefined ? '' : ` case ${e.caseId}`}${e.concern === undefined ? '' : ` ${e.concern}`}`,
    ),
  ];
}

/** A close as an operator reads it: a line per merchant, then one per type and currency. */
export function closeLines(closes: readonly Close[]): string[] {
  return closes.flatMap((c) => [
    `${c.day} endpoint=${c.merchant.endpointId} zone=${c.timeZone} [${c.from} .. ${c.to}) ${c.fresh ? 'closed now' : 'closed before'} by ${c.closedBy}: ${c.count} money event(s), last merchantSeq ${c.lastMerchantSeq}`,
    ...c.totals.map((t) => `  ${t.eventType} ${t.currency} count=${t.count} sum=${t.sumMinor}`),
    ...(c.report === undefined ? [] : reportLines(c.report)),
  ]);
}

/**
 * `payments close --day YYYY-MM-DD [--endpoint id]`: closes the day of every merchant with money
 * events (or one) through the admin API, each in its time zone: day-closed is published once;
 * `--show` only reads what was closed.
 */
export async function closeDay(options: CloseOptions, out: (line: string) => void): Promise<void> {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(options.day)) throw new UsageError('--day: YYYY-MM-DD');
  if (options.show === true && options.rerun === true)
    throw new UsageError('--rerun starts a report; --show only reads');
  const waitSeconds = Number(options.waitSeconds ?? '600');
  if (!Number.isInteger(waitSeconds) || waitSeconds < 1)
    throw new UsageError('--wait-seconds: a whole number of seconds');
  const day = encodeURIComponent(options.day);
  const read = async () =>
    (await adminGet(
      `/admin/days/${day}${options.endpoint === undefined ? '' : `?endpointId=${encodeURIComponent(options.endpoint)}`}`,
      options,
    )) as Close[];
  let closes =
    options.show === true
      ? await read()
      : ((await adminPost(
          `/admin/days/${day}/close`,
          {
            ...(options.endpoint === undefined ? {} : { endpointId: options.endpoint }),
            ...(options.rerun === true ? { rerun: true } : {}),
          },
          options,
        )) as Close[]);
  const reconciling = (cs: readonly Close[]) => cs.some((c) => c.report?.state === 'reconciling');
  if (options.wait === true) {
    const deadline = Date.now() + waitSeconds * 1000;
    while (reconciling(closes) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      closes = (await read()).map((c) => ({
        ...c,
        fresh: closes.find((o) => o.merchant.endpointId === c.merchant.endpointId)?.fresh ?? false,
      }));
    }
  }
  if (options.export !== undefined) {
    const reports = closes.flatMap((c) =>
      c.report === null || c.report === undefined ? [] : [c.report],
    );
    const files = reportCsv(reports);
    const stem = `close-${options.day}${options.endpoint === undefined ? '' : `-${options.endpoint}`}`;
    await mkdir(options.export, { recursive: true });
    for (const [name, lines] of Object.entries(files)) {
      const path = join(options.export, `${stem}-${name}.csv`);
      await writeFile(path, `${lines.join('\n')}\n`);
      out(`wrote ${path} (${lines.length - 1} row(s))`);
    }
    if (reconciling(closes))
      out('a report is still reconciling: its rows follow once it is written');
    return;
  }
  if (options.json === true) out(JSON.stringify(closes));
  else if (options.csv === true) for (const line of closeCsv(closes)) out(line);
  else for (const line of closeLines(closes)) out(line);
}
