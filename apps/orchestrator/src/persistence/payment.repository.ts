import { Injectable } from '@nestjs/common';
import type { GatewayRequest, PaymentEvent } from '@payments/contracts';
import type { EntityManager } from 'typeorm';
import { initialState, type PaymentState } from '../domain';
import {
  CommandEntity,
  GatewayRequestEntity,
  PaymentEntity,
  PaymentHistoryEntity,
} from './entities';

export interface PaymentRow {
  readonly id: string;
  readonly state: PaymentState;
  readonly version: number;
  readonly lastHintAt: Date | null;
}

export interface HistoryRow {
  readonly eventId: string;
  readonly event: PaymentEvent;
}

export class ConcurrentUpdateError extends Error {
  constructor(paymentId: string, version: number) {
    super(`payment ${paymentId} is no longer at version ${version}`);
    this.name = 'ConcurrentUpdateError';
  }
}

/**
 * The payment saga's own tables: `payments`, `payment_history`, `commands`, `gateway_requests`.
 * Every method takes the transaction's EntityManager; none opens its own, so a whole decision
 * (history, state, outbox, timers, inbox, command record) commits or rolls back together.
 */
@Injectable()
export class PaymentRepository {
  /** Creates the row of a payment a command names, if missing (so it can be locked). */
  async ensurePayment(tx: EntityManager, id: string, endpointId: string, now: Date): Promise<void> {
    await tx
      .createQueryBuilder()
      .insert()
      .into(PaymentEntity)
      .values({
        id,
        endpointId,
        kind: null,
        status: 'initial',
        state: initialState,
        version: 0,
        // client_order_id = payment id (what the decider sends to the gateway).
        clientOrderId: id,
        createdAt: now,
        updatedAt: now,
      })
      // ON CONFLICT DO NOTHING: the only other unique key (endpoint_id, client_order_id = id)
      // cannot conflict unless the id does.
      .orIgnore()
      .updateEntity(false)
      .execute();
  }

  async lockPayment(tx: EntityManager, id: string): Promise<PaymentRow | undefined> {
    const row = await tx
      .getRepository(PaymentEntity)
      .createQueryBuilder('p')
      .select(['p.id', 'p.state', 'p.version', 'p.lastHintAt'])
      .where('p.id = :id', { id })
      .setLock('pessimistic_write')
      .getOne();
    if (!row) return undefined;
    return {
      id: row.id,
      // The snapshot's version is the row's (a placeholder row starts at 0).
      state: { ...row.state, version: row.version },
      version: row.version,
      lastHintAt: row.lastHintAt,
    };
  }

  /** Saves the new state; throws ConcurrentUpdateError if someone else moved the version on. */
  async savePayment(
    tx: EntityManager,
    id: string,
    state: PaymentState,
    expectedVersion: number,
    now: Date,
  ): Promise<void> {
    const endpointId = state.merchant?.endpointId;
    const { affected } = await tx
      .createQueryBuilder()
      .update(PaymentEntity)
      .set({
        state,
        version: state.version,
        status: state.status,
        kind: state.kind ?? null,
        // Kept as it is when the state names no merchant yet.
        ...(endpointId === undefined ? {} : { endpointId }),
        updatedAt: now,
      })
      .where('id = :id AND version = :expectedVersion', { id, expectedVersion })
      .execute();
    if (affected !== 1) throw new ConcurrentUpdateError(id, expectedVersion);
  }

  async markHint(tx: EntityManager, id: string, now: Date): Promise<void> {
    await tx.update(PaymentEntity, { id }, { lastHintAt: now });
  }

  async appendHistory(tx: EntityManager, rows: readonly HistoryRow[]): Promise<void> {
    if (rows.length === 0) return;
    await tx.insert(
      PaymentHistoryEntity,
      rows.map(({ eventId, event }) => ({
        paymentId: event.paymentId,
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
  async eventsOfCommand(tx: EntityManager, commandId: string): Promise<HistoryRow[]> {
    const rows = await tx
      .getRepository(PaymentHistoryEntity)
      .createQueryBuilder('h')
      .where('h.commandId = :commandId', { commandId })
      // jsonb ->> has no TypeORM form: a raw fragment inside the query builder.
      .andWhere(`NOT (h.eventType = 'command-rejected' AND h.event ->> 'reason' = :conflict)`, {
        conflict: 'DUPLICATE_COMMAND_CONFLICT',
      })
      .orderBy('h.paymentId')
      .addOrderBy('h.version')
      .getMany();
    return rows.map((r) => ({ eventId: r.eventId, event: r.event }));
  }

  async findCommand(tx: EntityManager, commandId: string): Promise<string | undefined> {
    const row = await tx.findOneBy(CommandEntity, { commandId });
    return row?.fingerprint;
  }

  async recordCommand(
    tx: EntityManager,
    commandId: string,
    fingerprint: string,
    paymentId: string,
    now: Date,
  ): Promise<void> {
    await tx.insert(CommandEntity, { commandId, fingerprint, paymentId, recordedAt: now });
  }

  async saveGatewayRequest(tx: EntityManager, request: GatewayRequest, now: Date): Promise<void> {
    await tx.insert(GatewayRequestEntity, {
      requestId: request.requestId,
      paymentId: request.paymentId,
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

  /**
   * Once the sale/preauth is settled nothing will resend it: drop the sealed card from the stored
   * request and from outbox rows already published (unpublished rows still need it).
   */
  async purgeSealedCards(tx: EntityManager, paymentId: string, now: Date): Promise<void> {
    // Raw SQL: jsonb `-` (remove a key) and `?` (has key) have no TypeORM equivalent.
    await tx.query(
      `UPDATE gateway_requests SET body = body - 'sealedCard', sealed_card_purged_at = $2
        WHERE payment_id = $1 AND body ? 'sealedCard'`,
      [paymentId, now],
    );
    await tx.query(
      `UPDATE outbox SET payload = payload - 'sealedCard'
        WHERE aggregate_id = $1 AND published_at IS NOT NULL AND payload ? 'sealedCard'`,
      [paymentId],
    );
  }
}
