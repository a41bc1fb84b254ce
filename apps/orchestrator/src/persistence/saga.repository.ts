import { SEALED_CARD_FIELDS } from '@payments/contracts';
import { Injectable } from '@nestjs/common';
import type { GatewayRequest } from '@payments/contracts';
import type { EntityManager } from 'typeorm';
import type { SagaEvent, SagaProjection } from '../runtime/flow';
import {
  CommandEntity,
  GatewayRequestEntity,
  InboxEntity,
  SagaEntity,
  SagaHistoryEntity,
} from './entities';

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
  /**
   * Creates the row of a saga its first decision started, with that decision's state. False when
   * another transaction created it meanwhile (the caller retries on the row then).
   */
  async insertSaga(
    tx: EntityManager,
    saga: {
      id: string;
      flow: string;
      endpointId: string;
      state: unknown;
      version: number;
      projection: SagaProjection;
    },
    now: Date,
  ): Promise<boolean> {
    const inserted = await tx
      .createQueryBuilder()
      .insert()
      .into(SagaEntity)
      .values({
        id: saga.id,
        flow: saga.flow,
        endpointId: saga.projection.endpointId ?? saga.endpointId,
        kind: saga.projection.kind,
        status: saga.projection.status,
        state: saga.state as object,
        version: saga.version,
        clientOrderId: saga.projection.clientOrderId ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .orIgnore()
      .returning(['id'])
      .updateEntity(false)
      .execute();
    return (inserted.raw as unknown[]).length === 1;
  }

  async lockSaga(tx: EntityManager, id: string): Promise<SagaRow | undefined> {
    const row = await tx
      .getRepository(SagaEntity)
      .createQueryBuilder('s')
      .select(['s.id', 's.flow', 's.state', 's.version', 's.lastHintAt'])
      .where('s.id = :id', { id })
      .setLock('pessimistic_write')
      .getOne();
    return row ? sagaRow(row) : undefined;
  }

  /**
   * Locks several sagas in one statement, in id order (the order every multi-saga transaction
   * takes them in, so two batches never wait on each other in a cycle). Absent ids are skipped.
   */
  async lockSagas(tx: EntityManager, ids: readonly string[]): Promise<SagaRow[]> {
    if (ids.length === 0) return [];
    const rows = await tx
      .getRepository(SagaEntity)
      .createQueryBuilder('s')
      .select(['s.id', 's.flow', 's.state', 's.version', 's.lastHintAt'])
      .where('s.id IN (:...ids)', { ids: [...ids] })
      .orderBy('s.id')
      .setLock('pessimistic_write')
      .getMany();
    return rows.map(sagaRow);
  }

  /** Saves the new state; throws ConcurrentUpdateError if someone else moved the version on. */
  async saveSaga(
    tx: EntityManager,
    id: string,
    update: { state: unknown; version: number; projection: SagaProjection },
    expectedVersion: number,
    now: Date,
  ): Promise<void> {
    const { projection } = update;
    const { affected } = await tx
      .createQueryBuilder()
      .update(SagaEntity)
      .set({
        state: update.state as object,
        version: update.version,
        status: projection.status,
        kind: projection.kind,
        // Kept as they are when the state names none yet.
        ...(projection.endpointId === undefined ? {} : { endpointId: projection.endpointId }),
        ...(projection.clientOrderId === undefined
          ? {}
          : { clientOrderId: projection.clientOrderId }),
        updatedAt: now,
      })
      .where('id = :id AND version = :expectedVersion', { id, expectedVersion })
      .execute();
    if (affected !== 1) throw new ConcurrentUpdateError(id, expectedVersion);
  }

  async markHint(tx: EntityManager, id: string, now: Date): Promise<void> {
    await tx.update(SagaEntity, { id }, { lastHintAt: now });
  }

  async appendHistory(
    tx: EntityManager,
    sagaId: string,
    rows: readonly HistoryRow[],
  ): Promise<void> {
    if (rows.length === 0) return;
    await tx.insert(
      SagaHistoryEntity,
      rows.map(({ eventId, event }) => ({
        sagaId,
        version: event.version,
        eventId,
        eventType: event.type,
        event,
        commandId: event.commandId,
        occurredAt: new Date(event.occurredAt),
      })),
    );
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

  async findCommand(
    tx: EntityManager,
    commandId: string,
  ): Promise<{ fingerprint: string; sagaId: string; rejection: HistoryRow | null } | undefined> {
    const row = await tx.findOneBy(CommandEntity, { commandId });
    if (!row) return undefined;
    return {
      fingerprint: row.fingerprint,
      sagaId: row.sagaId,
      rejection: row.rejection as HistoryRow | null,
    };
  }

  async recordCommand(
    tx: EntityManager,
    commandId: string,
    fingerprint: string,
    sagaId: string,
    now: Date,
  ): Promise<void> {
    await tx.insert(CommandEntity, { commandId, fingerprint, sagaId, recordedAt: now });
  }

  /** Keeps the rejection of a command about a saga that does not exist, for re-emitting it. */
  async recordRejection(
    tx: EntityManager,
    commandId: string,
    rejection: HistoryRow,
  ): Promise<void> {
    await tx.update(CommandEntity, { commandId }, { rejection: rejection });
  }

  async saveGatewayRequest(
    tx: EntityManager,
    sagaId: string,
    request: GatewayRequest,
    now: Date,
  ): Promise<void> {
    await tx.insert(GatewayRequestEntity, {
      requestId: request.requestId,
      sagaId,
      operation: request.operation,
      body: request,
      createdAt: now,
    });
  }

  async findGatewayRequest(
    tx: EntityManager,
    requestId: string,
  ): Promise<GatewayRequest | undefined> {
    const row = await tx.findOneBy(GatewayRequestEntity, { requestId });
    return row?.body;
  }

  /** Once nothing will be resent: drop the sealed cards (SEALED_CARD_FIELDS) from the saga's stored requests. */
  async purgeSealedCards(tx: EntityManager, sagaId: string, now: Date): Promise<void> {
    // Raw SQL: jsonb `-` (remove keys) and `?|` (has any key) have no TypeORM equivalent.
    await tx.query(
      `UPDATE gateway_requests SET body = body - $3::text[], sealed_card_purged_at = $2
        WHERE saga_id = $1 AND body ?| $3::text[]`,
      [sagaId, now, SEALED_CARD_FIELDS],
    );
  }

  /** Records a processed message; false when it was processed before (inbox). */
  async recordInbox(tx: EntityManager, consumer: string, messageId: string): Promise<boolean> {
    const inserted = await tx
      .createQueryBuilder()
      .insert()
      .into(InboxEntity)
      .values({ consumer, messageId })
      .orIgnore()
      .returning(['messageId'])
      .updateEntity(false)
      .execute();
    // ON CONFLICT DO NOTHING returns no row for a message seen before.
    return (inserted.raw as unknown[]).length === 1;
  }
}

/** A locked saga as the runtime sees it: the snapshot's version is the row's (a new row starts at 0). */
function sagaRow(
  row: Pick<SagaEntity, 'id' | 'flow' | 'state' | 'version' | 'lastHintAt'>,
): SagaRow {
  return {
    id: row.id,
    flow: row.flow,
    state: { ...(row.state as object), version: row.version },
    version: row.version,
    lastHintAt: row.lastHintAt,
  };
}
