import type { EntityManager } from 'typeorm';
import {
  foldJournal,
  type JournalEntry,
  type JournalEvent,
  journalRelevant,
  postAll,
} from '../../domain/journal';
import { runStatement, type StatementPart, statement } from '../../persistence/sql';
import type { HistoryRow } from '../../persistence/saga.repository';

/** A journal entry with what links it to its saga and event. */
export interface JournalRow {
  readonly eventId: string;
  readonly sagaId: string;
  readonly flow: string;
  readonly commandId: string;
  readonly entry: JournalEntry;
}

const SAGA_EVENTS = statement(
  'journal_saga_events',
  'SELECT event FROM saga_history WHERE saga_id = $1::uuid ORDER BY version',
);

/**
 * The one writer of `journal_lines`: the entries of a decision's events (domain/journal's rules),
 * folded into the statement that writes the decision (`linesPart`), so they commit or roll back
 * with the events they post. The rules need the saga's earlier events (the merchant of its first
 * event, the amount of a request whose outcome is unknown, an open hold); they are read back only
 * when the decision has an event the journal reads (one indexed SELECT of the saga's history per
 * such decision; none for a saga's first decision).
 */
export class JournalWriter {
  /** The entries of a decision's new events (empty when none moves money). */
  async entries(
    tx: EntityManager,
    args: { sagaId: string; flow: string; history: readonly HistoryRow[]; newSaga: boolean },
  ): Promise<JournalRow[]> {
    const { sagaId, flow, history } = args;
    if (!history.some((h) => journalRelevant(h.event.type))) return [];
    const earlier = args.newSaga
      ? []
      : (await runStatement<{ event: JournalEvent }>(tx, SAGA_EVENTS, [sagaId])).map(
          (r) => r.event,
        );
    const rows: JournalRow[] = [];
    let fold = foldJournal(earlier);
    for (const h of history) {
      const step = postAll([h.event], fold);
      fold = step.fold;
      for (const entry of step.entries)
        rows.push({ eventId: h.eventId, sagaId, flow, commandId: h.event.commandId, entry });
    }
    return rows;
  }

  /** The lines of `rows` as part of a statement (written where the statement's guard holds). */
  linesPart(rows: readonly JournalRow[], now: Date): StatementPart {
    const lines = rows.flatMap((row) =>
      row.entry.lines.map((line, i) => ({
        event_id: row.eventId,
        line_no: i + 1,
        saga_id: row.sagaId,
        flow: row.flow,
        event_type: row.entry.eventType,
        event_version: row.entry.eventVersion,
        command_id: row.commandId,
        request_id: row.entry.requestId ?? null,
        operation: row.entry.operation ?? null,
        endpoint_id: row.entry.endpointId,
        occurred_at: row.entry.occurredAt,
        account: line.account,
        currency: line.currency,
        // bigint as its decimal text: JSON has no integers beyond 2^53, and no float is involved.
        amount: line.amount.toString(),
      })),
    );
    return {
      ctes: (n, guard) => `journal AS (
  INSERT INTO journal_lines (event_id, line_no, saga_id, flow, event_type, event_version,
         command_id, request_id, operation, endpoint_id, occurred_at, posted_at, account, currency,
         amount)
  SELECT j.event_id, j.line_no, j.saga_id, j.flow, j.event_type, j.event_version, j.command_id,
         j.request_id, j.operation, j.endpoint_id, j.occurred_at, $${n + 1}::timestamptz,
         j.account, j.currency, j.amount::bigint
    FROM jsonb_to_recordset($${n}::jsonb) AS j(event_id uuid, line_no smallint, saga_id text,
         flow text, event_type text, event_version int, command_id text, request_id text,
         operation text, endpoint_id text, occurred_at timestamptz, account text, currency text,
         amount text)
   WHERE ${guard}
  RETURNING 1)`,
      values: [JSON.stringify(lines), now],
      result: '(SELECT count(*) FROM journal)::int AS journal_lines',
    };
  }
}
