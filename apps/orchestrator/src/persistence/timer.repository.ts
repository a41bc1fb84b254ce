import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { TimerEntity } from './entities';

/** A timer's key: one timer per (flow, saga, kind). */
export interface TimerKey {
  readonly flow: string;
  readonly sagaId: string;
  readonly kind: string;
}

export interface TimerRow extends TimerKey {
  readonly dueAt: Date;
  readonly payload: unknown;
  readonly attempts: number;
  /** The trace of the input that set the timer, if it had one. */
  readonly traceparent?: string;
}

/** `timers`: one row per (flow, saga, kind), in the caller's transaction. */
@Injectable()
export class TimerRepository {
  /** Schedules the timer, replacing one of the same kind (due time, payload, attempts reset). */
  async upsertTimer(
    tx: EntityManager,
    key: TimerKey,
    dueAt: Date,
    payload: object,
    traceparent?: string,
  ): Promise<void> {
    await tx
      .createQueryBuilder()
      .insert()
      .into(TimerEntity)
      .values({ ...key, dueAt, payload, attempts: 0, traceparent: traceparent ?? null })
      .orUpdate(['due_at', 'payload', 'attempts', 'traceparent'], ['flow', 'saga_id', 'kind'])
      .updateEntity(false)
      .execute();
  }

  async deleteTimer(tx: EntityManager, key: TimerKey): Promise<void> {
    await tx.delete(TimerEntity, { flow: key.flow, sagaId: key.sagaId, kind: key.kind });
  }

  /**
   * The earliest due timer, read without a lock: the worker locks its saga first and then
   * claims it (`claimTimer`), the same order as every handler (saga row, then its timers), so
   * a worker and a handler never deadlock.
   */
  async nextDueTimer(tx: EntityManager, now: Date): Promise<TimerKey | undefined> {
    const due = await tx
      .getRepository(TimerEntity)
      .createQueryBuilder('t')
      .select(['t.flow', 't.sagaId', 't.kind'])
      .where('t.dueAt <= :now', { now })
      .orderBy('t.dueAt')
      .limit(1)
      .getOne();
    return due ? { flow: due.flow, sagaId: due.sagaId, kind: due.kind } : undefined;
  }

  /**
   * Claims one timer if it is still due: locks it (skipping it if another worker holds it) and
   * deletes it in the caller's transaction, so it fires once; a decision may schedule the same
   * kind again.
   */
  async claimTimer(tx: EntityManager, key: TimerKey, now: Date): Promise<TimerRow | undefined> {
    const due = await tx
      .getRepository(TimerEntity)
      .createQueryBuilder('t')
      .where('t.flow = :flow AND t.sagaId = :sagaId AND t.kind = :kind AND t.dueAt <= :now', {
        flow: key.flow,
        sagaId: key.sagaId,
        kind: key.kind,
        now,
      })
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .getOne();
    if (!due) return undefined;
    await tx.delete(TimerEntity, { flow: due.flow, sagaId: due.sagaId, kind: due.kind });
    return {
      flow: due.flow,
      sagaId: due.sagaId,
      kind: due.kind,
      dueAt: due.dueAt,
      payload: due.payload,
      attempts: due.attempts,
      ...(due.traceparent === null ? {} : { traceparent: due.traceparent }),
    };
  }

  /** The earliest due timer, claimed (for callers that hold no saga lock). */
  async claimDueTimer(tx: EntityManager, now: Date): Promise<TimerRow | undefined> {
    const next = await this.nextDueTimer(tx, now);
    return next ? this.claimTimer(tx, next, now) : undefined;
  }

  /** After a failed firing: count the attempt and try again later (the claim was rolled back). */
  async postponeTimer(tx: EntityManager, key: TimerKey, dueAt: Date): Promise<void> {
    await tx
      .createQueryBuilder()
      .update(TimerEntity)
      .set({ attempts: () => 'attempts + 1', dueAt })
      .where({ flow: key.flow, sagaId: key.sagaId, kind: key.kind })
      .execute();
  }
}
