import { SEALED_CARD_FIELDS } from '@payments/contracts';
import { Injectable } from '@nestjs/common';
import type { GatewayRequest } from '@payments/contracts';
import type { EntityManager } from 'typeorm';
import type { SagaEvent, SagaProjection } from '../runtime/flow';
import { CommandEntity, SagaEntity, SagaHistoryEntity } from './entities';
import { assembledStatement, runStatement, statement, type StatementPart, withParts } from './sql';

export interface SagaRow {
  readonly id: string;
  readonly flow: string;
  /** The flow's state; its `version` is the row's. */
  readonly state: unknown;
  readonly version: number;
  readonly lastHintAt: Date | null;
}

export interface HistoryRow {
  readonly eventId: string;
  readonly event: SagaEvent;
}

/** What a decision writes of its saga: the row created, the row moved on, or nothing. */
export type SagaWrite =
  | {
      readonly op: 'insert';
      readonly endpointId: string;
      readonly next: { state: unknown; version: number; projection: SagaProjection };
    }
  | {
      readonly op: 'update';
      readonly expectedVersion: number;
      readonly next: { state: unknown; version: number; projection: SagaProjection };
    }
  | { readonly op: 'none' };

/** A command's record as kept for idempotency. */
export interface RecordedCommand {
  readonly fingerprint: string;
  readonly sagaId: string;
  readonly rejection: HistoryRow | null;
}

// ---- hot-path statements (fixed text, prepared once per connection) ---------------------------

const SAGA_COLUMNS = 'id, flow, state, version, last_hint_at';
const LOCK_SAGA = statement(
  'lock_saga',
  `SELECT ${SAGA_COLUMNS} FROM sagas WHERE id = $1::uuid FOR UPDATE`,
);
const RECORD_COMMAND = statement(
  'record_command',
  `WITH inserted AS (
  INSERT INTO commands (command_id, fingerprint, saga_id, recorded_at)
  VALUES ($1::uuid, $2::text, $3::uuid, $4::timestamptz)
  ON CONFLICT (command_id) DO NOTHING
  RETURNING command_id)
SELECT true AS inserted, NULL::text AS fingerprint, NULL::uuid AS saga_id, NULL::jsonb AS rejection
  FROM inserted
UNION ALL
SELECT false, c.fingerprint, c.saga_id, c.rejection FROM commands c WHERE c.command_id = $1::uuid`,
);
const FIND_COMMAND = statement(
  'find_command',
  'SELECT fingerprint, saga_id, rejection FROM commands WHERE command_id = $1::uuid',
);
const RECORD_INBOX = statement(
  'record_inbox',
  `INSERT INTO inbox (consumer, message_id)
SELECT * FROM unnest($1::text[], $2::text[])
ON CONFLICT DO NOTHING
RETURNING consumer, message_id`,
);
/**
 * A unit of work's opening statement: its sagas locked (in id order, first: two batches never
 * wait on each other in a cycle), its inbox rows and its commands' records written, the records
 * kept before read. A CTE's insert is not visible to the statement's own read of `commands`: `kept` holds only earlier records.
 */
const PRELUDE = statement(
  'prelude',
  `WITH locked AS (
  SELECT ${SAGA_COLUMNS} FROM sagas WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE),
fresh AS (
  INSERT INTO inbox (consumer, message_id)
  SELECT * FROM unnest($2::text[], $3::text[])
  ON CONFLICT DO NOTHING
  RETURNING consumer, message_id),
recorded AS (
  INSERT INTO commands (command_id, fingerprint, saga_id, recorded_at)
  SELECT c.command_id, c.fingerprint, c.saga_id, $7::timestamptz
    FROM unnest($4::uuid[], $5::text[], $6::uuid[]) AS c(command_id, fingerprint, saga_id)
  ON CONFLICT (command_id) DO NOTHING
  RETURNING command_id)
SELECT 'saga' AS kind, l.id::text AS id, l.flow, l.state, l.version, l.last_hint_at,
       NULL::text AS consumer, NULL::text AS fingerprint, NULL::uuid AS saga_id,
       NULL::jsonb AS rejection
  FROM locked l
UNION ALL
SELECT 'inbox', f.message_id, NULL, NULL, NULL, NULL, f.consumer, NULL, NULL, NULL FROM fresh f
UNION ALL
SELECT 'recorded', r.command_id::text, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
  FROM recorded r
UNION ALL
SELECT 'kept', c.command_id::text, NULL, NULL, NULL, NULL, NULL, c.fingerprint, c.saga_id,
       c.rejection
  FROM commands c WHERE c.command_id = ANY($4::uuid[])`,
);
const FIND_GATEWAY_REQUEST = statement(
  'find_gateway_request',
  'SELECT body FROM gateway_requests WHERE request_id = $1::uuid',
);
/** Parameters $1–$13 of the decision statement; the parts' follow. */
const DECISION_PARAMS = 13;
const DECISION_CTES = `saga_inserted AS (
  INSERT INTO sagas (id, flow, endpoint_id, kind, status, state, version, client_order_id,
                     created_at, updated_at)
  SELECT $1::uuid, $3::text, $4::text, $5::text, $6::text, $7::jsonb, $8::int, $9::text,
         $11::timestamptz, $11::timestamptz
   WHERE $2::text = 'insert'
  ON CONFLICT DO NOTHING
  RETURNING 1),
saga_updated AS (
  UPDATE sagas SET state = $7::jsonb, version = $8::int, status = $6::text, kind = $5::text,
         endpoint_id = COALESCE($4::text, endpoint_id),
         client_order_id = COALESCE($9::text, client_order_id), updated_at = $11::timestamptz
   WHERE $2::text = 'update' AND id = $1::uuid AND version = $10::int
  RETURNING 1),
saga_written AS (
  SELECT 1 FROM saga_inserted UNION ALL SELECT 1 FROM saga_updated
  UNION ALL SELECT 1 WHERE $2::text = 'none'),
history AS (
  INSERT INTO saga_history (saga_id, version, event_id, event_type, event, command_id, occurred_at)
  SELECT $1::uuid, h.version, h.event_id, h.event_type, h.event, h.command_id, h.occurred_at
    FROM jsonb_to_recordset($12::jsonb) AS h(version int, event_id uuid, event_type text,
         event jsonb, command_id uuid, occurred_at timestamptz)
   WHERE EXISTS (SELECT 1 FROM saga_written)
  RETURNING 1),
requests AS (
  INSERT INTO gateway_requests (request_id, saga_id, operation, body, created_at)
  SELECT r.request_id, $1::uuid, r.operation, r.body, $11::timestamptz
    FROM jsonb_to_recordset($13::jsonb) AS r(request_id uuid, operation text, body jsonb)
   WHERE EXISTS (SELECT 1 FROM saga_written)
  RETURNING 1)`;
const DECISION_RESULT =
  '(SELECT count(*) FROM saga_written)::int AS saga_written, (SELECT count(*) FROM history)::int AS history, (SELECT count(*) FROM requests)::int AS requests';

interface SagaRecord {
  id: string;
  flow: string;
  state: unknown;
  version: number;
  last_hint_at: Date | null;
}

export class ConcurrentUpdateError extends Error {
  constructor(sagaId: string, version: number) {
    super(`saga ${sagaId} is no longer at version ${version}`);
    this.name = 'ConcurrentUpdateError';
  }
}

/**
 * The runtime's own tables: `sagas`, `saga_history`, `commands`, `gateway_requests`, `inbox`.
 * Every method takes the transaction's EntityManager; none opens its own, so a whole unit of work
 * (history, state, outbox, timers, inbox, command record) commits or rolls back together.
 */
@Injectable()
export class SagaRepository {
  async lockSaga(tx: EntityManager, id: string): Promise<SagaRow | undefined> {
    const [row] = await runStatement<SagaRecord>(tx, LOCK_SAGA, [id]);
    return row ? sagaRow(row) : undefined;
  }

  /**
   * Opens a unit of work in one statement: locks the sagas among `sagaIds` that exist (sorted, in
   * id order), records the inbox rows and the commands (each command id once: the first record
   * given wins). Returns the locked rows; the inbox keys (`inboxKey`) new to their consumer; per
   * command id, undefined when recorded now, else the record kept before. A command id in neither
   * map was recorded by a transaction that committed while this statement waited for it:
   * `recordCommandOnce` reads it.
   */
  async prelude(
    tx: EntityManager,
    input: {
      readonly sagaIds: readonly string[];
      readonly inbox: ReadonlyArray<{ consumer: string; messageId: string }>;
      readonly commands: ReadonlyArray<{ commandId: string; fingerprint: string; sagaId: string }>;
    },
    now: Date,
  ): Promise<{
    sagas: SagaRow[];
    freshInbox: Set<string>;
    commands: Map<string, RecordedCommand | undefined>;
  }> {
    const inbox = [
      ...new Map(input.inbox.map((m) => [inboxKey(m.consumer, m.messageId), m])).values(),
    ];
    // The first record of a command id wins: a later one with the same id is its duplicate.
    const commands = input.commands.filter(
      (c, i) => input.commands.findIndex((d) => d.commandId === c.commandId) === i,
    );
    const rows = await runStatement<{
      kind: 'saga' | 'inbox' | 'recorded' | 'kept';
      id: string;
      flow: string | null;
      state: unknown;
      version: number | null;
      last_hint_at: Date | null;
      consumer: string | null;
      fingerprint: string | null;
      saga_id: string | null;
      rejection: HistoryRow | null;
    }>(tx, PRELUDE, [
      input.sagaIds,
      inbox.map((m) => m.consumer),
      inbox.map((m) => m.messageId),
      commands.map((c) => c.commandId),
      commands.map((c) => c.fingerprint),
      commands.map((c) => c.sagaId),
      now,
    ]);
    const sagas: SagaRow[] = [];
    const freshInbox = new Set<string>();
    const recorded = new Map<string, RecordedCommand | undefined>();
    for (const row of rows) {
      switch (row.kind) {
        case 'saga':
          sagas.push(
            sagaRow({
              id: row.id,
              flow: row.flow ?? '',
              state: row.state,
              version: row.version ?? 0,
              last_hint_at: row.last_hint_at,
            }),
          );
          break;
        case 'inbox':
          freshInbox.add(inboxKey(row.consumer ?? '', row.id));
          break;
        case 'recorded':
          recorded.set(row.id, undefined);
          break;
        case 'kept':
          recorded.set(row.id, {
            fingerprint: row.fingerprint ?? '',
            sagaId: row.saga_id ?? '',
            rejection: row.rejection,
          });
          break;
      }
    }
    return { sagas, freshInbox, commands: recorded };
  }

  /**
   * Writes one decision in one statement: the saga row (created, or moved on from
   * `expectedVersion`), its history, its gateway requests, and the parts of other writers (the
   * decision's timers, its outbox rows), which are written only when the saga's write was.
   * Throws ConcurrentUpdateError (nothing written) when the row was created meanwhile or is no
   * longer at `expectedVersion`.
   */
  async writeDecision(
    tx: EntityManager,
    decision: {
      sagaId: string;
      flow: string;
      saga: SagaWrite;
      history: readonly HistoryRow[];
      gatewayRequests: readonly GatewayRequest[];
    },
    parts: readonly StatementPart[],
    now: Date,
  ): Promise<void> {
    const { saga } = decision;
    const next = saga.op === 'none' ? undefined : saga.next;
    const projection = next?.projection;
    const endpointId =
      saga.op === 'insert' ? (projection?.endpointId ?? saga.endpointId) : projection?.endpointId;
    const values: unknown[] = [
      decision.sagaId,
      saga.op,
      decision.flow,
      endpointId ?? null,
      projection?.kind ?? null,
      projection?.status ?? null,
      next === undefined ? null : JSON.stringify(next.state),
      next?.version ?? null,
      projection?.clientOrderId ?? null,
      saga.op === 'update' ? saga.expectedVersion : null,
      now,
      JSON.stringify(
        decision.history.map(({ eventId, event }) => ({
          version: event.version,
          event_id: eventId,
          event_type: event.type,
          event,
          command_id: event.commandId,
          occurred_at: new Date(event.occurredAt).toISOString(),
        })),
      ),
      JSON.stringify(
        decision.gatewayRequests.map((request) => ({
          request_id: request.requestId,
          operation: request.operation,
          body: request,
        })),
      ),
    ];
    const extra = withParts(DECISION_PARAMS, parts, 'EXISTS (SELECT 1 FROM saga_written)');
    const text = `WITH ${[DECISION_CTES, extra.ctes].filter((c) => c !== '').join(',\n')}
SELECT ${[DECISION_RESULT, ...extra.results].join(', ')}`;
    const [result] = await runStatement<{ saga_written: number }>(
      tx,
      assembledStatement('decision', text),
      [...values, ...extra.values],
    );
    if (result?.saga_written !== 1) {
      throw new ConcurrentUpdateError(
        decision.sagaId,
        saga.op === 'update' ? saga.expectedVersion : 0,
      );
    }
  }

  /**
   * A command recorded once (idempotency) in one statement: undefined when this call recorded it,
   * else the record kept before (its fingerprint decides duplicate or conflict).
   */
  async recordCommandOnce(
    tx: EntityManager,
    commandId: string,
    fingerprint: string,
    sagaId: string,
    now: Date,
  ): Promise<RecordedCommand | undefined> {
    const rows = await runStatement<{
      inserted: boolean;
      fingerprint: string | null;
      saga_id: string | null;
      rejection: HistoryRow | null;
    }>(tx, RECORD_COMMAND, [commandId, fingerprint, sagaId, now]);
    const [row] = rows;
    if (row?.inserted) return undefined;
    if (row !== undefined) {
      return {
        fingerprint: row.fingerprint ?? '',
        sagaId: row.saga_id ?? '',
        rejection: row.rejection,
      };
    }
    // Recorded by a transaction that committed while this statement waited for it (its snapshot
    // is older than that commit): read it again.
    const recorded = await this.findCommand(tx, commandId);
    if (recorded === undefined) throw new Error(`command ${commandId} neither recorded nor found`);
    return recorded;
  }

  async markHint(tx: EntityManager, id: string, now: Date): Promise<void> {
    await tx.update(SagaEntity, { id }, { lastHintAt: now });
  }

  /**
   * The events a command caused, in version order, for re-emitting its outcome — without the
   * DUPLICATE_COMMAND_CONFLICT rejections a later, different command with the same id caused.
   */
  async eventsOfCommand(
    tx: EntityManager,
    commandId: string,
  ): Promise<Array<HistoryRow & { sagaId: string }>> {
    const rows = await tx
      .getRepository(SagaHistoryEntity)
      .createQueryBuilder('h')
      .where('h.commandId = :commandId', { commandId })
      // jsonb ->> has no TypeORM form: a raw fragment inside the query builder.
      .andWhere(`NOT (h.eventType = 'command-rejected' AND h.event ->> 'reason' = :conflict)`, {
        conflict: 'DUPLICATE_COMMAND_CONFLICT',
      })
      .orderBy('h.sagaId')
      .addOrderBy('h.version')
      .getMany();
    return rows.map((r) => ({ sagaId: r.sagaId, eventId: r.eventId, event: r.event }));
  }

  async findCommand(tx: EntityManager, commandId: string): Promise<RecordedCommand | undefined> {
    const [row] = await runStatement<{
      fingerprint: string;
      saga_id: string;
      rejection: HistoryRow | null;
    }>(tx, FIND_COMMAND, [commandId]);
    if (!row) return undefined;
    return { fingerprint: row.fingerprint, sagaId: row.saga_id, rejection: row.rejection };
  }

  /** Keeps the rejection of a command about a saga that does not exist, for re-emitting it. */
  async recordRejection(
    tx: EntityManager,
    commandId: string,
    rejection: HistoryRow,
  ): Promise<void> {
    await tx.update(CommandEntity, { commandId }, { rejection: rejection });
  }

  async findGatewayRequest(
    tx: EntityManager,
    requestId: string,
  ): Promise<GatewayRequest | undefined> {
    const [row] = await runStatement<{ body: GatewayRequest }>(tx, FIND_GATEWAY_REQUEST, [
      requestId,
    ]);
    return row?.body;
  }

  /**
   * Once nothing will be resent: drop the sealed cards (SEALED_CARD_FIELDS) from the saga's stored
   * requests, and whatever `parts` add (the outbox's published rows), in one statement.
   */
  async purgeSealedCards(
    tx: EntityManager,
    sagaId: string,
    now: Date,
    parts: readonly StatementPart[] = [],
  ): Promise<void> {
    const { ctes, values, results } = withParts(0, [this.purgePart(sagaId, now), ...parts]);
    await runStatement(
      tx,
      assembledStatement('purge', `WITH ${ctes}\nSELECT ${results.join(', ')}`),
      values,
    );
  }

  /**
   * `purgeSealedCards` of the saga's stored requests as part of a statement. It sees the requests
   * earlier statements stored, not those of its own statement.
   */
  purgePart(sagaId: string, now: Date): StatementPart {
    return {
      // jsonb `-` (remove keys) and `?|` (has any key).
      ctes: (n, guard) => `requests_purged AS (
  UPDATE gateway_requests
     SET body = body - $${n + 2}::text[], sealed_card_purged_at = $${n + 1}::timestamptz
   WHERE saga_id = $${n}::uuid AND body ?| $${n + 2}::text[] AND ${guard}
  RETURNING 1)`,
      values: [sagaId, now, SEALED_CARD_FIELDS],
      result: '(SELECT count(*) FROM requests_purged)::int AS requests_purged',
    };
  }

  /** Records a processed message; false when it was processed before (inbox). */
  async recordInbox(tx: EntityManager, consumer: string, messageId: string): Promise<boolean> {
    const fresh = await this.recordInboxAll(tx, [{ consumer, messageId }]);
    return fresh.size === 1;
  }

  /**
   * Records several processed messages in one statement; returns the keys (`inboxKey`) of those
   * not processed before. Each key once: a message given twice counts as one.
   */
  async recordInboxAll(
    tx: EntityManager,
    messages: ReadonlyArray<{ consumer: string; messageId: string }>,
  ): Promise<Set<string>> {
    const unique = new Map(messages.map((m) => [inboxKey(m.consumer, m.messageId), m]));
    if (unique.size === 0) return new Set();
    const consumers = [...unique.values()].map((m) => m.consumer);
    const ids = [...unique.values()].map((m) => m.messageId);
    // ON CONFLICT DO NOTHING returns no row for a message seen before.
    const rows = await runStatement<{ consumer: string; message_id: string }>(tx, RECORD_INBOX, [
      consumers,
      ids,
    ]);
    return new Set(rows.map((r) => inboxKey(r.consumer, r.message_id)));
  }
}

/** An inbox row's key as `recordInboxAll` returns it. */
export function inboxKey(consumer: string, messageId: string): string {
  return `${consumer}\u0000${messageId}`;
}

/** A locked saga as the runtime sees it: the snapshot's version is the row's (a new row starts at 0). */
function sagaRow(row: SagaRecord): SagaRow {
  return {
    id: row.id,
    flow: row.flow,
    state: { ...(row.state as object), version: row.version },
    version: row.version,
    lastHintAt: row.last_hint_at,
  };
}
