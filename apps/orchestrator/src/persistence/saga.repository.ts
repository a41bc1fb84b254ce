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
  /** Creates the row of a saga a command names, if missing (so it can be locked). */
  async ensureSaga(
    tx: EntityManager,
    saga: { id: string; flow: string; endpointId: string; state: unknown },
    now: Date,
  ): Promise<void> {
    await tx
      .createQueryBuilder()
      .insert()
      .into(SagaEntity)
      .values({
        id: saga.id,
        flow: saga.flow,
        endpointId: saga.endpointId,
        kind: null,
        status: 'initial',
        state: saga.state as object,
        version: 0,
        clientOrderId: null,
        createdAt: now,
        updatedAt: now,
      })
      .orIgnore()
      .updateEntity(false)
      .execute();
  }

  async lockSaga(tx: EntityManager, id: string): Promise<SagaRow | undefined> {
    const row = await tx
      .getRepository(SagaEntity)
      .createQueryBuilder('s')
      .select(['s.id', 's.flow', 's.state', 's.version', 's.lastHintAt'])
      .where('s.id = :id', { id })
      .setLock('pessimistic_write')
      .getOne();
    if (!row) return undefined;
    return {
      id: row.id,
      flow: row.flow,
      // The snapshot's version is the row's (a new row starts at 0).
      state: { ...(row.state as object), version: row.version },
      version: row.version,
      lastHintAt: row.lastHintAt,
    };
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

  async findCommand(tx: EntityManager, commandId: string): Promise<string | undefined> {
    const row = await tx.findOneBy(CommandEntity, { commandId });
    return row?.fingerprint;
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

  /** Once nothing will be resent: drop the sealed card from the saga's stored requests. */
  async purgeSealedCards(tx: EntityManager, sagaId: string, now: Date): Promise<void> {
    // Raw SQL: jsonb `-` (remove a key) and `?` (has key) have no TypeORM equivalent.
    await tx.query(
      `UPDATE gateway_requests SET body = body - 'sealedCard', sealed_card_purged_at = $2
        WHERE saga_id = $1 AND body ? 'sealedCard'`,
      [sagaId, now],
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
