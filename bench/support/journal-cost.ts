import { loadavg } from 'node:os';
import { Pool } from 'pg';
import {
  foldJournal,
  type JournalEvent,
  postAll,
} from '../../apps/orchestrator/src/domain/journal';
import type { Breakdown } from './breakdown';

/**
 * The journal's cost per sale (issue #35), beside the rest of the breakdown: what it adds to a
 * sale's work in the orchestrator, read from the same closed loop.
 *  - statements: the journal's own statements (the saga's earlier events read back for the rules,
 *    `journal_saga_events`; the money events numbered, `journal_number_money_events`), counted by
 *    the probe, per sale and beside every orchestrator statement per sale; its lines are written by
 *    the decision's own statement (a CTE), no statement of their own;
 *  - rows: journal lines, entries and numbered money events the loop wrote, per sale;
 *  - CPU: the posting rules (domain/journal, pure) run again here over the loop's stored sale
 *    histories, event by event as the writer does (the fold of the earlier events, then the new
 *    one), timed with process.cpuUsage: the JavaScript the journal adds per sale. The database's
 *    share (the rows' inserts, the balance trigger at commit) is inside the PostgreSQL CPU line of
 *    the breakdown; without pg_stat_statements it is not told apart.
 * Printed with the machine's load; a script's figures, never a test's assertion.
 */

/** Fragments of the journal's statements as the probe keys them (the first 110 characters). */
const JOURNAL_STATEMENTS = {
  'saga events read back':
    'SELECT event FROM saga_history WHERE saga_id = $1::uuid ORDER BY version',
  'money events numbered': 'WITH pending AS ( SELECT * FROM ROWS FROM (jsonb_to_recordset',
} as const;

export interface JournalCounts {
  readonly lines: number;
  readonly entries: number;
  readonly moneyEvents: number;
}

/** The orchestrator database's journal rows so far (take before and after a loop). */
export async function journalCounts(databaseUrl: string): Promise<JournalCounts> {
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const { rows } = await pool.query<{ lines: string; entries: string; money: string }>(
      `SELECT (SELECT count(*) FROM journal_lines)::text AS lines,
              (SELECT count(DISTINCT event_id) FROM journal_lines)::text AS entries,
              (SELECT count(*) FROM merchant_money_events)::text AS money`,
    );
    const [r] = rows;
    return {
      lines: Number(r?.lines ?? 0),
      entries: Number(r?.entries ?? 0),
      moneyEvents: Number(r?.money ?? 0),
    };
  } finally {
    await pool.end();
  }
}

/** CPU microseconds of the posting rules per sale, over up to `limit` stored sale histories. */
async function rulesCpuPerSale(databaseUrl: string, limit: number): Promise<number | undefined> {
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  let histories: JournalEvent[][];
  try {
    const { rows } = await pool.query<{ events: JournalEvent[] }>(
      `SELECT array_agg(event ORDER BY version) AS events FROM saga_history
        WHERE saga_id IN (SELECT id FROM sagas WHERE flow = 'card-payment' ORDER BY created_at DESC
                           LIMIT $1)
        GROUP BY saga_id`,
      [limit],
    );
    histories = rows.map((r) => r.events);
  } finally {
    await pool.end();
  }
  if (histories.length === 0) return undefined;
  // Each event as the writer posts it: the fold of the saga's earlier events, then the event.
  const once = () => {
    for (const events of histories)
      for (let i = 0; i < events.length; i += 1)
        postAll([events[i]], foldJournal(events.slice(0, i)));
  };
  once(); // warm the JIT
  const rounds = 5;
  const start = process.cpuUsage();
  for (let r = 0; r < rounds; r += 1) once();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (rounds * histories.length);
}

/** The journal's lines of the report, for the closed loop's `sales` sales. */
export async function journalCostLines(args: {
  readonly mode: string;
  readonly sales: number;
  readonly breakdown: Breakdown;
  readonly before: JournalCounts;
  readonly databaseUrl: string;
}): Promise<string> {
  const { mode, sales, breakdown, before, databaseUrl } = args;
  const after = await journalCounts(databaseUrl);
  const per = (n: number) => (n / Math.max(1, sales)).toFixed(2);
  let journal = 0;
  let all = 0;
  const byName = new Map<string, number>();
  for (const [replica, texts] of breakdown.statementsByText) {
    if (!replica.startsWith('orchestrator')) continue;
    for (const [text, count] of texts) {
      all += count;
      const hit = Object.entries(JOURNAL_STATEMENTS).find(([, fragment]) =>
        text.includes(fragment),
      );
      if (hit === undefined) continue;
      journal += count;
      byName.set(hit[0], (byName.get(hit[0]) ?? 0) + count);
    }
  }
  const cpu = await rulesCpuPerSale(databaseUrl, Math.min(sales, 500));
  const [l1, l5] = loadavg();
  return [
    `\njournal, ${mode} (${sales} sales; machine load ${l1?.toFixed(2)} / ${l5?.toFixed(2)} over 1 / 5 min):`,
    `  statements per sale: journal ${per(journal)} of the orchestrator's ${per(all)} (${[...byName].map(([n, c]) => `${n} ${per(c)}`).join(', ') || 'none counted'}); its lines ride in the decision's own statement`,
    `  rows per sale: ${per(after.lines - before.lines)} journal lines in ${per(after.entries - before.entries)} entries, ${per(after.moneyEvents - before.moneyEvents)} money events numbered`,
    `  CPU per sale of the posting rules (JavaScript, re-run here over the stored histories): ${cpu === undefined ? 'no histories' : `${cpu.toFixed(1)} µs`}; the database's share is in the PostgreSQL line above`,
    '',
  ].join('\n');
}
