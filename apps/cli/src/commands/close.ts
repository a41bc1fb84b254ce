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
}

type Close = DayClosedEvent & { closedBy: string; fresh: boolean };

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

/** A close as an operator reads it: a line per merchant, then one per type and currency. */
export function closeLines(closes: readonly Close[]): string[] {
  return closes.flatMap((c) => [
    `${c.day} endpoint=${c.merchant.endpointId} zone=${c.timeZone} [${c.from} .. ${c.to}) ${c.fresh ? 'closed now' : 'closed before'} by ${c.closedBy}: ${c.count} money event(s), last merchantSeq ${c.lastMerchantSeq}`,
    ...c.totals.map((t) => `  ${t.eventType} ${t.currency} count=${t.count} sum=${t.sumMinor}`),
  ]);
}

/**
 * `payments close --day YYYY-MM-DD [--endpoint id]`: closes the day of every merchant with money
 * events (or one) through the admin API, each in its time zone: day-closed is published once;
 * `--show` only reads what was closed.
 */
export async function closeDay(options: CloseOptions, out: (line: string) => void): Promise<void> {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(options.day)) throw new UsageError('--day: YYYY-MM-DD');
  const day = encodeURIComponent(options.day);
  const closes = (
    options.show === true
      ? await adminGet(
          `/admin/days/${day}${options.endpoint === undefined ? '' : `?endpointId=${encodeURIComponent(options.endpoint)}`}`,
          options,
        )
      : await adminPost(
          `/admin/days/${day}/close`,
          options.endpoint === undefined ? {} : { endpointId: options.endpoint },
          options,
        )
  ) as Close[];
  if (options.json === true) out(JSON.stringify(closes));
  else if (options.csv === true) for (const line of closeCsv(closes)) out(line);
  else for (const line of closeLines(closes)) out(line);
}
