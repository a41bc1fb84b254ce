import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { TimerEntity } from './entities';
import type { KeepSooner } from '../domain/decision';
import type { StatementPart } from './sql';

/**
 * A timer's key: one timer per (flow, saga, kind, scope). The scope is the request id of the
 * operation the timer belongs to ('' for the saga's own timers), so two operations of one saga in
 * flight at once never share a timer.
 */
export interface TimerKey {
  readonly flow: string;
  readonly sagaId: string;
  readonly kind: string;
  readonly scope: string;
}

export interface TimerRow extends TimerKey {
  readonly dueAt: Date;
  readonly payload: unknown;
  readonly attempts: number;
  /** The trace of the input that set the timer, if it had one. */
  readonly traceparent?: string;
}

/**
 * A timer set, cancelled or brought forward by a decision, in the order the decision gave.
 * `set`: the timer of `kind` and `scope` (undefined: '', the saga's own); with `keepSooner`, a
 * pending one due no later than `at` stays as it is (its time and payload). `cancel`: that one, or
 * with no scope every timer of the kind. `advance`: the saga's timer of `kind` of the request
 * `requestId` falls due at `at` if it was due later; without such a timer, nothing.
 */
export type TimerChange =
  | {
      readonly op: 'set';
      readonly kind: string;
      readonly scope?: string;
      readonly at: Date;
      readonly payload: object;
      readonly keepSooner?: KeepSooner;
    }
  | { readonly op: 'cancel'; readonly kind: string; readonly scope?: string }
  | {
      readonly op: 'advance';
      readonly kind: string;
      readonly at: Date;
      readonly requestId: string;
    };

const scopeOf = (change: TimerChange): string | undefined =>
  change.op === 'advance'
    ? change.requestId
    : change.op === 'set'
      ? (change.scope ?? '')
      : change.scope;
const keyOf = (kind: string, scope: string | undefined) => `${kind}\u0000${scope ?? '*'}`;

/**
 * The changes of one decision as one per timer, with the effect of applying them one by one: a
 * set or a cancel replaces what came before on its timers (a cancel of a whole kind, every timer
 * of the kind); an advance after a set of the same timer moves that set, after anything else it
 * changes nothing the decision wrote (it stays an advance of the stored timer, or drops after a
 * cancel). A `keepSooner` set after a set of the same timer it would keep drops; after a cancel it
 * is a plain set (nothing stored is left to keep); after an advance of the stored timer it
 * replaces the advance (the stored timer, advanced or not, is kept only when due no later).
 */
export function lastPerTimer(changes: readonly TimerChange[]): TimerChange[] {
  const last = new Map<string, TimerChange>();
  for (const change of changes) {
    const scope = scopeOf(change);
    const key = keyOf(change.kind, scope);
    const wholeKind = last.get(keyOf(change.kind, undefined));
    const before = last.get(key);
    let now: TimerChange | undefined = change;
    if (change.op === 'set' && change.keepSooner !== undefined) {
      if (before?.op === 'set')
        now = keeps(before, change.keepSooner, change.at)
          ? undefined
          : before.keepSooner !== undefined
            ? change
            : plainSet(change);
      else if (before?.op === 'cancel' || (before === undefined && wholeKind !== undefined))
        now = plainSet(change);
    } else if (change.op === 'advance') {
      if (before === undefined) {
        if (wholeKind !== undefined) now = undefined;
      } else if (before.op === 'cancel') now = undefined;
      else if (before.op === 'set')
        now = change.at < before.at ? { ...before, at: change.at } : undefined;
      else if (before.at <= change.at) now = undefined;
    }
    if (now === undefined) continue;
    if (change.op === 'cancel' && scope === undefined)
      for (const k of [...last.keys()]) if (last.get(k)?.kind === change.kind) last.delete(k);
    last.delete(key);
    last.set(key, now);
  }
  return [...last.values()];
}

/** Whether a `keepSooner` set due `at` leaves the `pending` timer as it is. */
export function keeps(
  pending: { readonly at: Date; readonly payload: unknown },
  keepSooner: KeepSooner,
  at: Date,
): boolean {
  if (pending.at > at) return false;
  if (keepSooner === 'any') return true;
  return (pending.payload as { hinted?: unknown } | null)?.hinted === true;
}

function plainSet(change: Extract<TimerChange, { op: 'set' }>): TimerChange {
  const { keepSooner: _kept, ...plain } = change;
  return plain;
}

/** `timers`: one row per (flow, saga, kind, scope), in the caller's transaction. */
@Injectable()
export class TimerRepository {
  /**
   * A decision's timer changes for one saga as part of a statement: the last change per timer
   * wins (as when applied one by one), so the timers set, cancelled and advanced are distinct (a
   * cancel of a whole kind spares the timers of that kind the decision sets after it) and one
   * upsert, one delete and one update carry them all.
   */
  changesPart(
    flow: string,
    sagaId: string,
    changes: readonly TimerChange[],
    traceparent?: string,
  ): StatementPart {
    const sets: Array<{
      kind: string;
      scope: string;
      due_at: string;
      payload: object;
      keep_sooner: KeepSooner | '';
    }> = [];
    const cancels: Array<{ kind: string; scope: string | null }> = [];
    const advances: Array<{ kind: string; due_at: string; scope: string }> = [];
    for (const change of lastPerTimer(changes)) {
      switch (change.op) {
        case 'set':
          sets.push({
            kind: change.kind,
            scope: change.scope ?? '',
            due_at: change.at.toISOString(),
            payload: change.payload,
            keep_sooner: change.keepSooner ?? '',
          });
          break;
        case 'cancel':
          cancels.push({ kind: change.kind, scope: change.scope ?? null });
          break;
        case 'advance':
          advances.push({
            kind: change.kind,
            due_at: change.at.toISOString(),
            scope: change.requestId,
          });
          break;
        default: {
          const never: never = change;
          throw new Error(`unhandled timer change ${JSON.stringify(never)}`);
        }
      }
    }
    return {
      ctes: (n, guard) => {
        // The sets of one keep-sooner mode ('' none): a pending timer is updated only `when`.
        const upsert = (name: string, mode: KeepSooner | '', when?: string) => {
          const only = when === undefined ? '' : `\n   WHERE ${when}`;
          return `${name} AS (
  INSERT INTO timers (flow, saga_id, kind, scope, due_at, payload, attempts, traceparent)
  SELECT $${n}::text, $${n + 1}::uuid, t.kind, t.scope, t.due_at, t.payload, 0, $${n + 4}::text
    FROM jsonb_to_recordset($${n + 2}::jsonb)
         AS t(kind text, scope text, due_at timestamptz, payload jsonb, keep_sooner text)
   WHERE t.keep_sooner = '${mode}' AND ${guard}
  ON CONFLICT (flow, saga_id, kind, scope)
  DO UPDATE SET due_at = EXCLUDED.due_at, payload = EXCLUDED.payload, attempts = 0,
                traceparent = EXCLUDED.traceparent${only}
  RETURNING 1)`;
        };
        return `${upsert('timers_set', '')},
${upsert('timers_set_unless_sooner', 'any', 'timers.due_at > EXCLUDED.due_at')},
${upsert(
  'timers_set_unless_hinted_sooner',
  'hinted',
  `timers.due_at > EXCLUDED.due_at OR NOT (timers.payload @> '{"hinted": true}'::jsonb)`,
)},
timers_cancelled AS (
  DELETE FROM timers t WHERE t.flow = $${n}::text AND t.saga_id = $${n + 1}::uuid
     AND jsonb_array_length($${n + 3}::jsonb) > 0
     AND EXISTS (SELECT 1 FROM jsonb_to_recordset($${n + 3}::jsonb) AS c(kind text, scope text)
                  WHERE c.kind = t.kind AND (c.scope IS NULL OR c.scope = t.scope))
     AND NOT EXISTS (SELECT 1 FROM jsonb_to_recordset($${n + 2}::jsonb) AS s(kind text, scope text)
                      WHERE s.kind = t.kind AND s.scope = t.scope)
     AND ${guard}
  RETURNING 1),
timers_advanced AS (
  UPDATE timers t SET due_at = a.due_at
    FROM jsonb_to_recordset($${n + 5}::jsonb) AS a(kind text, due_at timestamptz, scope text)
   WHERE t.flow = $${n}::text AND t.saga_id = $${n + 1}::uuid AND t.kind = a.kind
     AND t.scope = a.scope AND t.due_at > a.due_at AND ${guard}
  RETURNING 1)`;
      },
      values: [
        flow,
        sagaId,
        JSON.stringify(sets),
        JSON.stringify(cancels),
        traceparent ?? null,
        JSON.stringify(advances),
      ],
      result:
        '((SELECT count(*) FROM timers_set) + (SELECT count(*) FROM timers_set_unless_sooner) + (SELECT count(*) FROM timers_set_unless_hinted_sooner))::int AS timers_set, (SELECT count(*) FROM timers_cancelled)::int AS timers_cancelled, (SELECT count(*) FROM timers_advanced)::int AS timers_advanced',
    };
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
      .select(['t.flow', 't.sagaId', 't.kind', 't.scope'])
      .where('t.dueAt <= :now', { now })
      .orderBy('t.dueAt')
      .limit(1)
      .getOne();
    return due
      ? { flow: due.flow, sagaId: due.sagaId, kind: due.kind, scope: due.scope }
      : undefined;
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
      .where(
        't.flow = :flow AND t.sagaId = :sagaId AND t.kind = :kind AND t.scope = :scope AND t.dueAt <= :now',
        { flow: key.flow, sagaId: key.sagaId, kind: key.kind, scope: key.scope, now },
      )
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .getOne();
    if (!due) return undefined;
    await tx.delete(TimerEntity, {
      flow: due.flow,
      sagaId: due.sagaId,
      kind: due.kind,
      scope: due.scope,
    });
    return {
      flow: due.flow,
      sagaId: due.sagaId,
      kind: due.kind,
      scope: due.scope,
      dueAt: due.dueAt,
      payload: due.payload,
      attempts: due.attempts,
      ...(due.traceparent === null ? {} : { traceparent: due.traceparent }),
    };
  }

  /** After a failed firing: count the attempt and try again later (the claim was rolled back). */
  async postponeTimer(tx: EntityManager, key: TimerKey, dueAt: Date): Promise<void> {
    await tx
      .createQueryBuilder()
      .update(TimerEntity)
      .set({ attempts: () => 'attempts + 1', dueAt })
      .where({ flow: key.flow, sagaId: key.sagaId, kind: key.kind, scope: key.scope })
      .execute();
  }
}
