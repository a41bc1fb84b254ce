import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  type GatewayResult,
  type MismatchKind,
  type ReconciliationCompleted,
} from '@payments/contracts';
import { derivedUuid } from '@payments/core';
import type { EntityManager } from 'typeorm';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../../config';
import {
  anotherOrderVerdict,
  type CheckSubject,
  type Finding,
  isFinding,
  type CheckTime,
  type GatewayAnswer,
  type HistoryEvent,
  looksForAnotherOrder,
  type PlannedCheck,
  type RunScope,
  sagaChecks,
  scheduledWindow,
  type Verdict,
  verdict,
} from '../../domain/reconciliation/reconciliation';
import { type InputMeta, type OutboxRow } from '../../runtime/outbox/outbox-rows';
import { OutboxWriter } from '../../runtime/outbox/outbox.writer';
import { Database } from '../../persistence/database';
import { caseOfMismatch } from '../cases/case-store';
import { Clock, IdGenerator } from '../../runtime/clock';
import {
  AWAITING,
  RECONCILED_FLOWS,
  RECONCILED_HISTORY_EVENTS,
  reconciliationOf,
} from './reconciled-flows';
import {
  answerOf,
  backoffMs,
  type CheckRow,
  eventRow,
  evidenceFor,
  type GatewaySide,
  gatewaySide,
  LOOKUP_AFTER_MS,
  mismatchEvent,
  spentAttempts,
  statusRequestRow,
} from './reconciliation-rows';

/** Transaction-level advisory lock of the one dispatcher per database ("reconcil" in ASCII). */
const DISPATCH_LOCK_KEY = BigInt('0x7265636f6e63696c').toString();
/** Sagas read per page when a run starts. */
const PAGE = 500;
/** Checks looked at per dispatch round (all endpoints). */
const DISPATCH_BATCH = 500;

export interface RunRequest {
  readonly runId: string;
  readonly trigger: 'scheduled' | 'on-demand';
  readonly requestedBy: string;
  readonly from: Date;
  readonly to: Date;
  readonly endpointId?: string;
}

/**
 * Reconciliation runs. A run takes the operations its window holds of the sagas of every flow that
 * moves money (`reconciled-flows.ts`) and stores what each reported — one check per operation
 * settled in the window with a known serial, asked `by-request-sn`; the latest operation's check
 * for the rest (domain/reconciliation/reconciliation.ts `sagaChecks`, `RunScope`) — and asks the gateway for each status through the
 * gateway-adapter — paced per endpoint
 * (RECONCILIATION_RATE_PER_SECOND) on top of the adapter's own status budget, asked again when an
 * answer is not-sent, unknown, still processing or late, at most RECONCILIATION_MAX_ATTEMPTS
 * times. A saga whose order the gateway confirmed charged (or paid out) as reported is then
 * looked up by its client order id alone: a reply about another order, approved for money, makes
 * the saga `paid-twice` (domain/reconciliation/reconciliation.ts `anotherOrderVerdict`). Each answer gets its
 * verdict; a mismatch is published at once on
 * `payments.reconciliation.v1`, and when the last check is done the run's counts follow. A refusal
 * other than "no such order" is `unanswered` (inconclusive, never a mismatch). Every change is one
 * transaction with its outbox rows. Reconciliation never changes a saga itself: the one way its
 * findings reach a saga is evidence — the gateway's final answer about the very request the saga
 * waits for, handed to it as an ordinary status reply (`record`), which the saga's own rules
 * settle; every other finding is reported, and a mismatch about an operation the saga reported
 * settled opens a case for people to decide (`reconciliation-mismatch`, the finding its evidence).
 */
@Injectable()
export class ReconciliationService {
  private readonly logger = new Logger(ReconciliationService.name);
  /** The scheduled window this process last tried to start (each window is tried once here). */
  private lastScheduledFrom?: number;

  constructor(
    private readonly db: Database,
    private readonly outbox: OutboxWriter,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
  ) {}

  /**
   * Starts a run: the run row, one check per checkable saga of the window. A run id seen before (a
   * redelivered command) or a scheduled window already started starts nothing. Returns the
   * number of checks, or undefined when nothing was started.
   */
  async start(run: RunRequest, meta: InputMeta = {}): Promise<number | undefined> {
    return this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const inserted = await tx.query<Array<{ id: string }>>(
        `INSERT INTO reconciliation_runs
           (id, trigger, requested_by, window_from, window_to, endpoint_id, status, started_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'running', $7)
         ON CONFLICT DO NOTHING RETURNING id`,
        [run.runId, run.trigger, run.requestedBy, run.from, run.to, run.endpointId ?? null, now],
      );
      if (inserted.length === 0) return undefined;
      const at: CheckTime = {
        now,
        unknownAlertMs: this.config.policy.unknownAlertSeconds * 1000,
      };
      let checks = 0;
      let after = '00000000-0000-0000-0000-000000000000';
      for (;;) {
        // Created in the window, or changed since it began: a saga created earlier may have
        // operations the window holds (a return days after its sale, a schedule's charge); or
        // waiting for the gateway whatever changed (a registered schedule's expected charges).
        const sagas = await tx.query<
          Array<{ id: string; flow: string; endpoint_id: string; state: unknown; created_at: Date }>
        >(
          `SELECT id, flow, endpoint_id, state, created_at FROM sagas
            WHERE flow = ANY($1) AND created_at < $3
              AND (updated_at >= $2 OR flow || ':' || status = ANY($6))
              AND ($4::text IS NULL OR endpoint_id = $4) AND id > $5
            ORDER BY id LIMIT ${PAGE}`,
          [RECONCILED_FLOWS, run.from, run.to, run.endpointId ?? null, after, AWAITING],
        );
        const histories = await this.histories(
          tx,
          sagas.map((saga) => saga.id),
        );
        const rows = sagas.flatMap((saga) =>
          this.checksOf(saga, histories.get(saga.id) ?? [], at, {
            from: run.from,
            to: run.to,
            createdInWindow: saga.created_at >= run.from,
          }).map((planned) => ({
            saga,
            planned,
          })),
        );
        if (rows.length > 0) {
          await tx.query(
            `INSERT INTO reconciliation_checks
               (run_id, saga_id, subject, request_id, flow, endpoint_id, expectation, state, next_at)
             SELECT $1, s.saga_id, s.subject, s.request_id, s.flow, s.endpoint_id, s.expectation,
                    'pending', $2
               FROM jsonb_to_recordset($3::jsonb) AS s(saga_id uuid, subject text, request_id uuid,
                 flow text, endpoint_id text, expectation jsonb)`,
            [
              run.runId,
              now,
              JSON.stringify(
                rows.map(({ saga, planned }) => ({
                  saga_id: saga.id,
                  subject: planned.subject,
                  request_id: derivedUuid(
                    planned.subject === 'order'
                      ? `reconciliation:${run.runId}:${saga.id}`
                      : `reconciliation:${run.runId}:${saga.id}:${planned.subject}`,
                  ),
                  flow: saga.flow,
                  endpoint_id: saga.endpoint_id,
                  expectation: planned.expectation,
                })),
              ),
            ],
          );
          checks += rows.length;
        }
        const last = sagas[sagas.length - 1];
        if (last === undefined || sagas.length < PAGE) break;
        after = last.id;
      }
      this.logger.log(
        `reconciliation run ${run.runId} (${run.trigger}, ${run.from.toISOString()}..${run.to.toISOString()}) started: ${checks} checks`,
      );
      if (checks === 0) await this.completeIfDone(tx, run.runId, meta);
      return checks;
    });
  }

  /** A saga's checks: its settled operations (from its history) and, where needed, its latest. */
  private checksOf(
    saga: { flow: string; state: unknown },
    history: readonly HistoryEvent[],
    at: CheckTime,
    scope: RunScope,
  ): PlannedCheck[] {
    const flow = reconciliationOf(saga.flow);
    if (flow === undefined) return [];
    return [
      ...sagaChecks(
        flow.order(saga.state),
        flow.operations(history),
        flow.latest?.(saga.state, at),
        scope,
      ),
      ...(flow.awaited?.(saga.state, at, scope) ?? []),
    ];
  }

  /** The events reconciliation reads of these sagas, in version order, by saga id. */
  private async histories(
    tx: EntityManager,
    sagaIds: readonly string[],
  ): Promise<Map<string, HistoryEvent[]>> {
    const byId = new Map<string, HistoryEvent[]>();
    if (sagaIds.length === 0) return byId;
    const rows = await tx.query<Array<{ saga_id: string; event: HistoryEvent; occurred_at: Date }>>(
      `SELECT saga_id, event, occurred_at FROM saga_history
        WHERE saga_id = ANY($1::uuid[]) AND event_type = ANY($2::text[])
        ORDER BY saga_id, version`,
      [sagaIds, RECONCILED_HISTORY_EVENTS],
    );
    for (const { saga_id, event, occurred_at } of rows) {
      const events = byId.get(saga_id) ?? [];
      // The row's time is the one the history is ordered and kept by.
      events.push({ ...event, occurredAt: occurred_at.toISOString() });
      byId.set(saga_id, events);
    }
    return byId;
  }

  /** Starts the scheduled run of the current window unless one exists (any replica may try). */
  async startScheduledRun(): Promise<number | undefined> {
    const { intervalSeconds, settleSeconds } = this.config.reconciliation;
    if (intervalSeconds === 0) return undefined;
    const window = scheduledWindow(this.clock.now(), intervalSeconds * 1000, settleSeconds * 1000);
    if (this.lastScheduledFrom === window.from.getTime()) return undefined;
    const started = await this.start({
      runId: derivedUuid(`reconciliation:scheduled:${window.from.toISOString()}`),
      trigger: 'scheduled',
      requestedBy: 'schedule',
      from: window.from,
      to: window.to,
    });
    // Only once it is in the database: a failed attempt is tried again next tick.
    this.lastScheduledFrom = window.from.getTime();
    return started;
  }

  /**
   * One dispatch round: sends the status query of due checks, at most the per-endpoint rate of
   * each endpoint, and gives up on checks out of attempts (unresolved). One dispatcher at a time
   * per database (a transaction-level advisory lock). Returns how many checks it handled.
   */
  async dispatch(): Promise<number> {
    return this.db.transaction(async (tx) => {
      const [lock] = await tx.query<Array<{ locked: boolean }>>(
        `SELECT pg_try_advisory_xact_lock($1::bigint) AS locked`,
        [DISPATCH_LOCK_KEY],
      );
      if (lock?.locked !== true) return 0;
      const now = this.clock.now();
      // Locked until this round commits: an answer being recorded meanwhile waits, then finds the
      // check sent again (its attempt is stale) instead of the round overwriting its verdict; a
      // check whose answer is being recorded right now is skipped.
      const due = await tx.query<CheckRow[]>(
        `SELECT run_id, saga_id, subject, request_id, flow, endpoint_id, expectation, state, attempts,
                holds
           FROM reconciliation_checks WHERE state <> 'done' AND next_at <= $1
          ORDER BY next_at LIMIT ${DISPATCH_BATCH}
            FOR UPDATE SKIP LOCKED`,
        [now],
      );
      const perEndpoint = new Map<string, number>();
      const { ratePerSecond, tickMs } = this.config.reconciliation;
      // The worker runs a round per tick: the per-second rate spread over ticks (at least one).
      const rate = Math.max(1, Math.floor((ratePerSecond * tickMs) / 1000));
      const rows: OutboxRow[] = [];
      const runs = new Set<string>();
      let handled = 0;
      for (const check of due) {
        if (spentAttempts(check) >= this.config.reconciliation.maxAttempts) {
          rows.push(...(await this.conclude(tx, check, { kind: 'none' }, undefined)));
          runs.add(check.run_id);
          handled += 1;
          continue;
        }
        const sent = perEndpoint.get(check.endpoint_id) ?? 0;
        if (sent >= rate) continue;
        perEndpoint.set(check.endpoint_id, sent + 1);
        const attempt = check.attempts + 1;
        await tx.query(
          `UPDATE reconciliation_checks SET state = 'sent', attempts = $2, next_at = $3
            WHERE request_id = $1`,
          [
            check.request_id,
            attempt,
            new Date(now.getTime() + this.config.reconciliation.answerTimeoutSeconds * 1000),
          ],
        );
        rows.push(statusRequestRow(check, attempt, now, this.ids.next()));
        handled += 1;
      }
      await this.outbox.enqueue(tx, rows);
      for (const runId of runs) await this.completeIfDone(tx, runId, {});
      return handled;
    });
  }

  /** The request ids among these that belong to reconciliation checks (not to any saga). */
  async owned(requestIds: readonly string[]): Promise<ReadonlySet<string>> {
    if (requestIds.length === 0) return new Set();
    const rows = await this.db.read((db) =>
      db.query<Array<{ request_id: string }>>(
        `SELECT request_id FROM reconciliation_checks WHERE request_id = ANY($1::uuid[])`,
        [requestIds],
      ),
    );
    return new Set(rows.map((r) => r.request_id));
  }

  /**
   * The answers to checks' status queries, in one transaction. An answer to an earlier attempt
   * than the check's latest, or to a check already done (a redelivery), changes nothing.
   *
   * Returns the evidence for sagas: each answer that is the gateway's final reply about the very
   * request a saga waits for (domain/reconciliation/reconciliation.ts `isEvidence`), as an ordinary status reply
   * about that request (`evidenceFor`), for the caller to hand to the saga runtime once this
   * transaction committed. A redelivered answer yields it again (the saga's inbox takes it once).
   */
  async record(results: readonly GatewayResult[], meta: InputMeta = {}): Promise<GatewayResult[]> {
    return this.db.transaction(async (tx) => {
      const rows: OutboxRow[] = [];
      const runs = new Set<string>();
      const evidence: GatewayResult[] = [];
      for (const result of results) {
        const [check] = await tx.query<CheckRow[]>(
          `SELECT run_id, saga_id, subject, request_id, flow, endpoint_id, expectation, state, attempts,
                holds
             FROM reconciliation_checks WHERE request_id = $1 FOR UPDATE`,
          [result.requestId],
        );
        if (check === undefined || result.attempt !== check.attempts) continue;
        const answer = answerOf(result);
        const handed = answer === undefined ? undefined : evidenceFor(check, result, answer);
        if (handed !== undefined) evidence.push(handed);
        if (check.state === 'done') continue;
        if (answer === undefined) {
          // Not sent, unknown, or no final report yet: ask again, when the adapter says or soon.
          // Held back by our own adapter (retryAt): nothing reached the gateway, the attempt is
          // not spent (spentAttempts).
          const held = result.result.kind === 'not-sent' && result.result.retryAt !== undefined;
          const retryAt =
            result.result.kind === 'not-sent' && result.result.retryAt !== undefined
              ? new Date(result.result.retryAt)
              : new Date(this.clock.now().getTime() + backoffMs(check.attempts));
          await tx.query(
            `UPDATE reconciliation_checks SET state = 'pending', next_at = $2,
                    holds = holds + $3 WHERE request_id = $1`,
            [check.request_id, retryAt, held ? 1 : 0],
          );
          continue;
        }
        rows.push(...(await this.conclude(tx, check, answer, meta)));
        runs.add(check.run_id);
      }
      await this.outbox.enqueue(tx, rows);
      for (const runId of runs) await this.completeIfDone(tx, runId, meta);
      if (evidence.length > 0)
        this.logger.log(
          `reconciliation: ${evidence.length} gateway answer(s) handed to the sagas waiting for them`,
        );
      return evidence;
    });
  }

  /** Applies the verdict (or, still not final, reschedules): the check's row and its mismatch event. */
  private async conclude(
    tx: EntityManager,
    check: CheckRow,
    answer: GatewayAnswer,
    meta: InputMeta | undefined,
  ): Promise<OutboxRow[]> {
    if (check.subject === 'client-order-id') return this.concludeLookup(tx, check, answer, meta);
    const flow = reconciliationOf(check.flow);
    let found: Verdict =
      flow === undefined ? 'unresolved' : verdict(check.expectation, answer, flow.named);
    if (found === 'not-final') {
      if (await this.askAgainLater(tx, check)) return [];
      found = 'unresolved';
    }
    // A refusal that says nothing: asked again while the run's attempts last, then reported so.
    if (found === 'unanswered' && (await this.askAgainLater(tx, check))) return [];
    const gateway = answer.kind === 'report' ? gatewaySide(answer.report) : undefined;
    await this.done(tx, check, found, gateway);
    if (found === 'match') {
      // Our order charged as we said: is there another one under our client order id?
      if (looksForAnotherOrder(check.expectation, found)) await this.addLookup(tx, check);
      return [];
    }
    if (isFinding(found)) {
      this.logger.log(
        `reconciliation run ${check.run_id}: ${check.flow} ${check.saga_id} ${found}${answer.kind === 'rejected' ? ` (refused ${answer.code})` : ''}`,
      );
      return [];
    }
    return this.mismatched(tx, check, found, gateway, undefined, meta);
  }

  /**
   * The lookup by client order id: paid-twice when its reply is about another order, approved for
   * money. The check that asked for it (already a match) then carries the verdict, so the run
   * counts that operation once, as paid twice; the event repeats the gateway's replies about both
   * orders.
   */
  private async concludeLookup(
    tx: EntityManager,
    check: CheckRow,
    answer: GatewayAnswer,
    meta: InputMeta | undefined,
  ): Promise<OutboxRow[]> {
    const flow = reconciliationOf(check.flow);
    let found =
      flow === undefined
        ? 'unresolved'
        : anotherOrderVerdict(check.expectation, answer, flow.named);
    if (found === 'not-final') {
      if (await this.askAgainLater(tx, check)) return [];
      found = 'unresolved';
    }
    if (found === 'unanswered' && (await this.askAgainLater(tx, check))) return [];
    const other = answer.kind === 'report' ? gatewaySide(answer.report) : undefined;
    await this.done(tx, check, found, other);
    if (found !== 'paid-twice') return [];
    // (An UPDATE … RETURNING through TypeORM answers [rows, count]: read, then write.)
    const asked = check.expectation.lookupFor ?? 'order';
    const [order] = await tx.query<Array<{ gateway: GatewaySide | null }>>(
      `SELECT gateway FROM reconciliation_checks
        WHERE run_id = $1 AND saga_id = $2 AND subject = $3 FOR UPDATE`,
      [check.run_id, check.saga_id, asked],
    );
    await tx.query(
      `UPDATE reconciliation_checks SET verdict = 'paid-twice'
        WHERE run_id = $1 AND saga_id = $2 AND subject = $3`,
      [check.run_id, check.saga_id, asked],
    );
    return this.mismatched(tx, check, 'paid-twice', order?.gateway ?? undefined, other, meta);
  }

  /** Still not final: asked again after a backoff, unless out of attempts (false). */
  private async askAgainLater(tx: EntityManager, check: CheckRow): Promise<boolean> {
    if (spentAttempts(check) >= this.config.reconciliation.maxAttempts) return false;
    await tx.query(
      `UPDATE reconciliation_checks SET state = 'pending', next_at = $2 WHERE request_id = $1`,
      [check.request_id, new Date(this.clock.now().getTime() + backoffMs(check.attempts))],
    );
    return true;
  }

  private async done(
    tx: EntityManager,
    check: CheckRow,
    found: string,
    gateway: GatewaySide | undefined,
  ): Promise<void> {
    await tx.query(
      `UPDATE reconciliation_checks SET state = 'done', verdict = $2, gateway = $3 WHERE request_id = $1`,
      [check.request_id, found, gateway === undefined ? null : JSON.stringify(gateway)],
    );
  }

  /** The saga's lookup by client order id, due shortly (a redelivered answer adds nothing). */
  private async addLookup(tx: EntityManager, check: CheckRow): Promise<void> {
    const subject: CheckSubject = 'client-order-id';
    await tx.query(
      `INSERT INTO reconciliation_checks
         (run_id, saga_id, subject, request_id, flow, endpoint_id, expectation, state, next_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8)
       ON CONFLICT DO NOTHING`,
      [
        check.run_id,
        check.saga_id,
        subject,
        derivedUuid(`reconciliation:${check.run_id}:${check.saga_id}:${subject}`),
        check.flow,
        check.endpoint_id,
        JSON.stringify({ ...check.expectation, lookupFor: check.subject }),
        new Date(this.clock.now().getTime() + LOOKUP_AFTER_MS),
      ],
    );
  }

  /**
   * A mismatch: its event, and its case (`case-store.ts` `caseOfMismatch`: a finding the saga
   * cannot settle opens one, with the finding as evidence; a finding about an operation that has
   * a case is added to it), in the run's transaction.
   */
  private async mismatched(
    tx: EntityManager,
    check: CheckRow,
    kind: MismatchKind,
    gateway: GatewaySide | undefined,
    otherOrder: GatewaySide | undefined,
    meta: InputMeta | undefined,
  ): Promise<OutboxRow[]> {
    const now = this.clock.now().toISOString();
    const mismatch = mismatchEvent(check, kind, gateway, otherOrder, now);
    await caseOfMismatch(tx, this.outbox, mismatch);
    const other =
      otherOrder === undefined
        ? ''
        : `, other order ${otherOrder.gatewayOrderId ?? '?'} ${otherOrder.status ?? ''}`;
    this.logger.warn(
      `reconciliation run ${check.run_id}: ${check.flow} ${check.saga_id} ${kind} (ours ${check.expectation.status}, gateway ${gateway?.status ?? 'no answer'}${other})`,
    );
    return [eventRow(this.ids.next(), check.run_id, mismatch, now, meta)];
  }

  /** When no check of the run is left open: the run's counts, once. */
  private async completeIfDone(tx: EntityManager, runId: string, meta: InputMeta): Promise<void> {
    const [run] = await tx.query<
      Array<{
        trigger: 'scheduled' | 'on-demand';
        requested_by: string;
        window_from: Date;
        window_to: Date;
        endpoint_id: string | null;
        status: string;
        started_at: Date;
      }>
    >(
      `SELECT trigger, requested_by, window_from, window_to, endpoint_id, status, started_at
         FROM reconciliation_runs WHERE id = $1 FOR UPDATE`,
      [runId],
    );
    if (run === undefined || run.status !== 'running') return;
    const [open] = await tx.query<Array<{ n: string }>>(
      `SELECT count(*) AS n FROM reconciliation_checks WHERE run_id = $1 AND verdict IS NULL`,
      [runId],
    );
    if (Number(open?.n ?? 0) > 0) return;
    // One verdict per checked operation (a lookup's finding is written onto the check that asked).
    const counts = await tx.query<Array<{ verdict: string | null; n: string }>>(
      `SELECT verdict, count(*) AS n FROM reconciliation_checks
        WHERE run_id = $1 AND subject <> 'client-order-id' GROUP BY verdict`,
      [runId],
    );
    const now = this.clock.now();
    await tx.query(
      `UPDATE reconciliation_runs SET status = 'completed', completed_at = $2 WHERE id = $1`,
      [runId, now],
    );
    const byKind: Partial<Record<MismatchKind, number>> = {};
    const findings: Record<Finding, number> = { unanswered: 0, 'handed-to-saga': 0 };
    let checked = 0;
    let matched = 0;
    for (const { verdict: v, n } of counts) {
      const count = Number(n);
      checked += count;
      if (v === 'match') matched += count;
      else if (v !== null && isFinding(v)) findings[v] += count;
      else byKind[v as MismatchKind] = count;
    }
    const inconclusive = findings.unanswered + findings['handed-to-saga'];
    const completed: ReconciliationCompleted = {
      type: 'reconciliation-completed',
      runId,
      trigger: run.trigger,
      requestedBy: run.requested_by,
      from: run.window_from.toISOString(),
      to: run.window_to.toISOString(),
      ...(run.endpoint_id === null ? {} : { endpointId: run.endpoint_id }),
      checked,
      matched,
      mismatched: checked - matched - inconclusive,
      byKind,
      unanswered: findings.unanswered,
      handedToSagas: findings['handed-to-saga'],
      startedAt: run.started_at.toISOString(),
      completedAt: now.toISOString(),
    };
    this.logger.log(
      `reconciliation run ${runId} completed: ${checked} checked, ${matched} matched, ${checked - matched - inconclusive} mismatched, ${findings.unanswered} unanswered, ${findings['handed-to-saga']} handed to their sagas`,
    );
    await this.outbox.enqueue(tx, [
      eventRow(this.ids.next(), runId, completed, now.toISOString(), meta),
    ]);
  }
}
