import type { EntityManager } from 'typeorm';
import {
  foldJournal,
  type JournalEntry,
  type JournalEvent,
  journalRelevant,
  postAll,
  UNATTRIBUTED_ENDPOINT,
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

/** A money event waiting for its `merchantSeq` (given at the end of its unit of work). */
export interface PendingMoneyEvent {
  readonly eventId: string;
  readonly sagaId: string;
  readonly flow: string;
  readonly endpointId: string;
  readonly eventType: string;
  readonly currency: string;
  /** Integer minor units. */
  readonly minor: number;
  readonly occurredAt: string;
}

/**
 * Numbers a unit of work's money events per endpoint: the endpoints' counter rows are taken in
 * endpoint order (two units never wait on each other's rows in a cycle) and bumped by how many
 * each endpoint has; the numbers are written into the events as stored (history) and as they
 * will be published (their outbox rows, whose id is the event's), and into
 * `merchant_money_events`. Runs last, so a counter row is held only from here to the commit.
 */
const NUMBER_MONEY_EVENTS = statement(
  'journal_number_money_events',
  `WITH pending AS (
  SELECT * FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (event_id uuid, saga_id text,
         flow text, endpoint_id text, event_type text, currency text, minor bigint,
         occurred_at timestamptz))
         WITH ORDINALITY AS p(event_id, saga_id, flow, endpoint_id, event_type, currency, minor,
         occurred_at, n)),
counts AS (SELECT endpoint_id, count(*) AS c FROM pending GROUP BY endpoint_id),
bumped AS (
  INSERT INTO merchant_sequences AS s (endpoint_id, last_seq)
  SELECT endpoint_id, c FROM counts ORDER BY endpoint_id
  ON CONFLICT (endpoint_id) DO UPDATE SET last_seq = s.last_seq + EXCLUDED.last_seq
  RETURNING endpoint_id, last_seq),
numbered AS (
  SELECT p.*, b.last_seq - c.c + row_number() OVER (PARTITION BY p.endpoint_id ORDER BY p.n) AS seq
    FROM pending p JOIN bumped b USING (endpoint_id) JOIN counts c USING (endpoint_id)),
money AS (
  INSERT INTO merchant_money_events (endpoint_id, merchant_seq, event_id, saga_id, flow,
         event_type, currency, minor, occurred_at)
  SELECT endpoint_id, seq, event_id, saga_id, flow, event_type, currency, minor, occurred_at
    FROM numbered
  RETURNING 1),
history AS (
  UPDATE saga_history h SET event = jsonb_set(h.event, '{merchantSeq}', to_jsonb(nb.seq))
    FROM numbered nb WHERE h.event_id = nb.event_id
  RETURNING 1),
published AS (
  UPDATE outbox o SET payload = jsonb_set(o.payload, '{merchantSeq}', to_jsonb(nb.seq))
    FROM numbered nb WHERE o.id = nb.event_id
  RETURNING 1)
SELECT (SELECT count(*) FROM money)::int AS money, (SELECT count(*) FROM history)::int AS history,
       (SELECT count(*) FROM published)::int AS published`,
);

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
  /**
   * The entries of a decision's new events (none when nothing moves money) and its money events
   * (`moneyEvents`, the flow's) waiting for their sequence numbers. `endpointId`: the saga's, when
   * its events have not named it yet (a saga's first decision names it in its command).
   */
  async entries(
    tx: EntityManager,
    args: {
      sagaId: string;
      flow: string;
      history: readonly HistoryRow[];
      newSaga: boolean;
      moneyEvents: readonly string[];
      endpointId?: string;
    },
  ): Promise<{ rows: JournalRow[]; money: PendingMoneyEvent[] }> {
    const { sagaId, flow, history } = args;
    const relevant = (type: string) => journalRelevant(type) || args.moneyEvents.includes(type);
    if (!history.some((h) => relevant(h.event.type))) return { rows: [], money: [] };
    const earlier = args.newSaga
      ? []
      : (await runStatement<{ event: JournalEvent }>(tx, SAGA_EVENTS, [sagaId])).map(
          (r) => r.event,
        );
    const rows: JournalRow[] = [];
    const money: PendingMoneyEvent[] = [];
    let fold = foldJournal(earlier);
    for (const h of history) {
      const event: JournalEvent = h.event;
      const step = postAll([event], fold);
      fold = step.fold;
      for (const entry of step.entries)
        rows.push({ eventId: h.eventId, sagaId, flow, commandId: h.event.commandId, entry });
      if (args.moneyEvents.includes(event.type) && event.amount !== undefined) {
        money.push({
          eventId: h.eventId,
          sagaId,
          flow,
          endpointId: fold.endpointId ?? args.endpointId ?? UNATTRIBUTED_ENDPOINT,
          eventType: event.type,
          currency: event.amount.currency,
          minor: event.amount.minor,
          occurredAt: event.occurredAt,
        });
      }
    }
    return { rows, money };
  }

  /** Gives a unit of work's money events their `merchantSeq` (NUMBER_MONEY_EVENTS). */
  async numberMoneyEvents(tx: EntityManager, pending: readonly PendingMoneyEvent[]): Promise<void> {
    if (pending.length === 0) return;
    await runStatement(tx, NUMBER_MONEY_EVENTS, [
      JSON.stringify(
        pending.map((p) => ({
          event_id: p.eventId,
          saga_id: p.sagaId,
          flow: p.flow,
          endpoint_id: p.endpointId,
          event_type: p.eventType,
          currency: p.currency,
          minor: p.minor,
          occurred_at: p.occurredAt,
        })),
      ),
    ]);
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
