import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { type StoredTimerKind, TimerEntity } from './entities';

export type { StoredTimerKind } from './entities';

export interface TimerRow {
  readonly paymentId: string;
  readonly kind: StoredTimerKind;
  readonly dueAt: Date;
  readonly payload: unknown;
  readonly attempts: number;
}

/** `timers`: one row per (payment, kind), in the caller's transaction. */
@Injectable()
export class TimerRepository {
  /** Schedules the timer, replacing one of the same kind (due time, payload, attempts reset). */
  async upsertTimer(
    tx: EntityManager,
    paymentId: string,
    kind: StoredTimerKind,
    dueAt: Date,
    payload: object,
  ): Promise<void> {
    await tx
      .createQueryBuilder()
      .insert()
      .into(TimerEntity)
      .values({ paymentId, kind, dueAt, payload, attempts: 0 })
      .orUpdate(['due_at', 'payload', 'attempts'], ['payment_id', 'kind'])
      .updateEntity(false)
      .execute();
  }

  async deleteTimer(tx: EntityManager, paymentId: string, kind: StoredTimerKind): Promise<void> {
    await tx.delete(TimerEntity, { paymentId, kind });
  }

  /**
   * The earliest due timer, read without a lock: the worker locks its payment first and then
   * claims it (`claimTimer`), the same order as every handler (payment row, then its timers), so
   * a worker and a handler never deadlock.
   */
  async nextDueTimer(
    tx: EntityManager,
    now: Date,
  ): Promise<{ paymentId: string; kind: StoredTimerKind } | undefined> {
    const due = await tx
      .getRepository(TimerEntity)
      .createQueryBuilder('t')
      .select(['t.paymentId', 't.kind'])
      .where('t.dueAt <= :now', { now })
      .orderBy('t.dueAt')
      .limit(1)
      .getOne();
    return due ? { paymentId: due.paymentId, kind: due.kind } : undefined;
  }

  /**
   * Claims one timer if it is still due: locks it (skipping it if another worker holds it) and
   * deletes it in the caller's transaction, so it fires once; a decision may schedule the same
   * kind again.
   */
  async claimTimer(
    tx: EntityManager,
    paymentId: string,
    kind: StoredTimerKind,
    now: Date,
  ): Promise<TimerRow | undefined> {
    const due = await tx
      .getRepository(TimerEntity)
      .createQueryBuilder('t')
      .where('t.paymentId = :paymentId AND t.kind = :kind AND t.dueAt <= :now', {
        paymentId,
        kind,
        now,
      })
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .getOne();
    if (!due) return undefined;
    await tx.delete(TimerEntity, { paymentId: due.paymentId, kind: due.kind });
    return {
      paymentId: due.paymentId,
      kind: due.kind,
      dueAt: due.dueAt,
      payload: due.payload,
      attempts: due.attempts,
    };
  }

  /** The earliest due timer, claimed (for callers that hold no payment lock). */
  async claimDueTimer(tx: EntityManager, now: Date): Promise<TimerRow | undefined> {
    const next = await this.nextDueTimer(tx, now);
    return next ? this.claimTimer(tx, next.paymentId, next.kind, now) : undefined;
  }

  /** After a failed firing: count the attempt and try again later (the claim was rolled back). */
  async postponeTimer(
    tx: EntityManager,
    paymentId: string,
    kind: StoredTimerKind,
    dueAt: Date,
  ): Promise<void> {
    await tx
      .createQueryBuilder()
      .update(TimerEntity)
      .set({ attempts: () => 'attempts + 1', dueAt })
      .where({ paymentId, kind })
      .execute();
  }
}
