import { Injectable, Logger } from '@nestjs/common';
import type { DayClosedEvent } from '@payments/contracts';
import { derivedUuid } from '@payments/core';
import type { EntityManager } from 'typeorm';
import {
  closeReport,
  type CloseReportBody,
  merchantAccount,
  type OpenCaseFacts,
  type OperationFacts,
  type UnknownFacts,
  type UnrecordedFacts,
} from '../../domain/journal';
import type { Expectation } from '../../domain/reconciliation/reconciliation';
import { Database } from '../../persistence/database';
import { Clock } from '../../runtime/clock';
import { ReconciliationService } from '../reconciliation/reconciliation.service';

/** A version of a day's close report, as stored (the API answers it as is). */
export interface CloseReport extends Partial<Omit<CloseReportBody, 'state'>> {
  readonly endpointId: string;
  readonly day: string;
  readonly version: number;
  readonly runId: string;
  readonly timeZone: string;
  readonly from: string;
  readonly to: string;
  /** `reconciling` until the run of the day against the gateway completed. */
  readonly state: 'reconciling' | CloseReportBody['state'];
  /** `close` (the day's close), `rerun` (an operator), `settlement` (a case closed, an unknown settled). */
  readonly trigger: string;
  readonly requestedBy: string;
  readonly startedAt: string;
  readonly completedAt?: string;
}

interface ReportRow {
  endpoint_id: string;
  day: string;
  version: number;
  run_id: string;
  time_zone: string;
  from_at: Date;
  to_at: Date;
  state: CloseReport['state'];
  trigger: string;
  requested_by: string;
  started_at: Date;
  completed_at: Date | null;
  totals: CloseReportBody['totals'] | null;
  lines: CloseReportBody['lines'] | null;
  exceptions: CloseReportBody['exceptions'] | null;
}

const REPORT_COLUMNS = `endpoint_id, to_char(day, 'YYYY-MM-DD') AS day, version, run_id, time_zone,
  from_at, to_at, state, trigger, requested_by, started_at, completed_at, totals, lines, exceptions`;

/** Verdicts of a check that are not a mismatch the gateway's money shows. */
const NOT_MONEY_MISMATCH = new Set([
  'match',
  'unanswered',
  'handed-to-saga',
  'unresolved',
  'unknown-over-an-hour',
]);
const OPEN_CASE = ['open', 'proposed', 'reopened'];

/**
 * The day close's tie-out against the gateway (issue #35 item 3). Closing a merchant's day starts
 * version 1 of its close report: a reconciliation run (the application's runner, its pure rules in
 * domain/reconciliation) over the merchant's day, every operation of it asked about by serial.
 * Once the run completed, the report is written once (domain/journal/close-report.ts): per
 * currency and type our totals, the gateway's for the same operations, the differences, and the
 * exceptions (mismatched or unconfirmed operations, operations still unknown, open cases). A later
 * settlement of one of its exceptions (a case it lists closed, an unknown answered or decided)
 * starts the next version; every version is kept.
 */
@Injectable()
export class DayTieOutService {
  private readonly logger = new Logger(DayTieOutService.name);

  constructor(
    private readonly db: Database,
    private readonly reconciliation: ReconciliationService,
    private readonly clock: Clock,
  ) {}

  /** Version 1 of a closed day's report, unless the day has one. */
  async startFirst(close: DayClosedEvent, by: string): Promise<void> {
    const [any] = await this.db.read((db) =>
      db.query<unknown[]>(
        `SELECT 1 FROM day_close_reports WHERE endpoint_id = $1 AND day = $2::date LIMIT 1`,
        [close.merchant.endpointId, close.day],
      ),
    );
    if (any === undefined) await this.startNext(close, 'close', by);
  }

  /**
   * The next version of a closed day's report (an operator's re-run, a settlement), unless its
   * latest is still reconciling. Returns the version started, or undefined.
   */
  async startNext(
    close: Pick<DayClosedEvent, 'merchant' | 'day' | 'timeZone' | 'from' | 'to'>,
    trigger: 'close' | 'rerun' | 'settlement',
    by: string,
  ): Promise<number | undefined> {
    const endpointId = close.merchant.endpointId;
    const started = await this.db.transaction(async (tx) => {
      const [latest] = await tx.query<Array<{ version: number; state: string }>>(
        `SELECT version, state FROM day_close_reports WHERE endpoint_id = $1 AND day = $2::date
          ORDER BY version DESC LIMIT 1`,
        [endpointId, close.day],
      );
      if (latest?.state === 'reconciling') return undefined;
      const version = (latest?.version ?? 0) + 1;
      const runId = derivedUuid(`day-close:${endpointId}:${close.day}:v${version}`);
      const inserted = await tx.query<unknown[]>(
        `INSERT INTO day_close_reports (endpoint_id, day, version, run_id, time_zone, from_at, to_at,
                state, trigger, requested_by, started_at)
         VALUES ($1, $2::date, $3, $4, $5, $6, $7, 'reconciling', $8, $9, $10)
         ON CONFLICT DO NOTHING RETURNING 1`,
        [
          endpointId,
          close.day,
          version,
          runId,
          close.timeZone,
          new Date(close.from),
          new Date(close.to),
          trigger,
          by,
          this.clock.now(),
        ],
      );
      return inserted.length === 0 ? undefined : { version, runId };
    });
    if (started === undefined) return undefined;
    await this.startRun(endpointId, started.runId, close.from, close.to, by);
    this.logger.log(
      `close report v${started.version} of ${close.day} endpoint ${endpointId} (${trigger}): reconciling the day, run ${started.runId}`,
    );
    return started.version;
  }

  /** The day's reconciliation run (a run id seen before starts nothing). */
  private async startRun(
    endpointId: string,
    runId: string,
    from: string,
    to: string,
    by: string,
  ): Promise<void> {
    await this.reconciliation.start({
      runId,
      trigger: 'on-demand',
      requestedBy: `day-close:${by}`,
      from: new Date(from),
      to: new Date(to),
      endpointId,
    });
  }

  /**
   * One round: each reconciling report whose run completed is written (a run never started, the
   * process stopped in between, is started); then each day whose latest report is open with
   * exceptions and one of them was settled since — a case it lists open is closed, an operation it
   * lists unknown no longer holds anything in flight — gets its next version (which lists neither
   * again: no round repeats it for the same settlement). Evidence added to a case, a status change
   * that settles nothing, starts none. Returns the reports written.
   */
  async progress(): Promise<CloseReport[]> {
    const reconciling = await this.db.read((db) =>
      db.query<ReportRow[]>(
        `SELECT ${REPORT_COLUMNS} FROM day_close_reports WHERE state = 'reconciling' ORDER BY started_at`,
      ),
    );
    const written: CloseReport[] = [];
    for (const row of reconciling) {
      const done = await this.finish(row);
      if (done !== undefined) written.push(done);
    }
    const settled = await this.db.read((db) =>
      db.query<ReportRow[]>(
        `SELECT ${REPORT_COLUMNS} FROM day_close_reports r
          WHERE r.state = 'open-with-exceptions'
            AND r.version = (SELECT max(version) FROM day_close_reports l
                              WHERE l.endpoint_id = r.endpoint_id AND l.day = r.day)
            AND (EXISTS (SELECT 1 FROM jsonb_array_elements(r.exceptions) e
                           JOIN cases c ON c.id::text = e->>'caseId'
                          WHERE e->>'kind' = 'case-open' AND c.status = 'closed')
              OR EXISTS (SELECT 1 FROM jsonb_array_elements(r.exceptions) e
                          WHERE e->>'kind' = 'unknown'
                            AND (SELECT COALESCE(sum(j.amount), 0) FROM journal_lines j
                                  WHERE j.saga_id = e->>'sagaId'
                                    AND j.request_id = e->>'requestId'
                                    AND j.account = 'merchant:' || r.endpoint_id || ':in-flight-unknown') = 0))`,
      ),
    );
    for (const row of settled)
      await this.startNext(
        {
          merchant: { endpointId: row.endpoint_id },
          day: row.day,
          timeZone: row.time_zone,
          from: row.from_at.toISOString(),
          to: row.to_at.toISOString(),
        },
        'settlement',
        'day-close',
      );
    return written;
  }

  /** The reports of a day (every merchant, or one): the latest version of each, or all. */
  async ofDay(
    day: string,
    endpointId: string | undefined,
    versions: 'latest' | 'all',
  ): Promise<CloseReport[]> {
    // Reading drives a report whose run completed meanwhile (the worker would, at its tick).
    const pending = await this.db.read((db) =>
      db.query<ReportRow[]>(
        `SELECT ${REPORT_COLUMNS} FROM day_close_reports
          WHERE day = $1::date AND ($2::text IS NULL OR endpoint_id = $2) AND state = 'reconciling'`,
        [day, endpointId ?? null],
      ),
    );
    for (const row of pending) await this.finish(row);
    const rows = await this.db.read((db) =>
      db.query<ReportRow[]>(
        `SELECT ${REPORT_COLUMNS} FROM day_close_reports r
          WHERE day = $1::date AND ($2::text IS NULL OR endpoint_id = $2)
            AND ($3 OR version = (SELECT max(version) FROM day_close_reports l
                                   WHERE l.endpoint_id = r.endpoint_id AND l.day = r.day))
          ORDER BY endpoint_id, version`,
        [day, endpointId ?? null, versions === 'all'],
      ),
    );
    return rows.map(reportOf);
  }

  /** Writes a reconciling report once its run completed (undefined: not yet, or written already). */
  private async finish(row: ReportRow): Promise<CloseReport | undefined> {
    const [run] = await this.db.read((db) =>
      db.query<Array<{ status: string }>>(`SELECT status FROM reconciliation_runs WHERE id = $1`, [
        row.run_id,
      ]),
    );
    if (run === undefined) {
      await this.startRun(
        row.endpoint_id,
        row.run_id,
        row.from_at.toISOString(),
        row.to_at.toISOString(),
        row.requested_by,
      );
      return undefined;
    }
    if (run.status !== 'completed') return undefined;
    return this.db.transaction(async (tx) => {
      const body = closeReport(await this.facts(tx, row));
      const now = this.clock.now();
      const updated = await tx.query<ReportRow[]>(
        `UPDATE day_close_reports SET state = $4, totals = $5::jsonb, lines = $6::jsonb,
                exceptions = $7::jsonb, completed_at = $8
          WHERE endpoint_id = $1 AND day = $2::date AND version = $3 AND state = 'reconciling'
          RETURNING ${REPORT_COLUMNS}`,
        [
          row.endpoint_id,
          row.day,
          row.version,
          body.state,
          JSON.stringify(body.totals),
          JSON.stringify(body.lines),
          JSON.stringify(body.exceptions),
          now,
        ],
      );
      // TypeORM answers an UPDATE … RETURNING as [rows, count].
      const [rows] = updated as unknown as [ReportRow[], number];
      const done = rows[0];
      if (done === undefined) return undefined;
      this.logger.log(
        `close report v${row.version} of ${row.day} endpoint ${row.endpoint_id}: ${body.state}, ${body.lines.length} operation(s), ${body.exceptions.length} exception(s)`,
      );
      return reportOf(done);
    });
  }

  /** What the report is made of: our operations of the day, the run's checks, unknowns, cases. */
  private async facts(tx: EntityManager, row: ReportRow) {
    const { endpoint_id: endpointId, from_at: from, to_at: to } = row;
    const ours = await tx.query<
      Array<{
        saga_id: string;
        flow: string;
        type: string;
        currency: string;
        minor: string;
        request_id: string | null;
        operation: string | null;
      }>
    >(
      `SELECT m.saga_id, m.flow, m.event_type AS type, m.currency, m.minor::text AS minor,
              j.request_id, j.operation
         FROM merchant_money_events m
         LEFT JOIN LATERAL (SELECT request_id, operation FROM journal_lines
                             WHERE event_id = m.event_id ORDER BY line_no LIMIT 1) j ON true
        WHERE m.endpoint_id = $1 AND m.occurred_at >= $2 AND m.occurred_at < $3
       UNION ALL
       SELECT saga_id, flow, 'settled-by-decision', currency, sum(amount)::text, request_id,
              operation
         FROM journal_lines
        WHERE endpoint_id = $1 AND occurred_at >= $2 AND occurred_at < $3 AND account = $4
          AND amount > 0
        GROUP BY event_id, saga_id, flow, currency, request_id, operation`,
      [endpointId, from, to, merchantAccount(endpointId, 'settled-by-decision')],
    );
    const checks = await tx.query<
      Array<{
        saga_id: string;
        subject: string;
        flow: string;
        expectation: Expectation;
        verdict: string | null;
        gateway: { amount?: { minor: number; currency: string } } | null;
      }>
    >(
      `SELECT saga_id::text AS saga_id, subject, flow, expectation, verdict, gateway
         FROM reconciliation_checks WHERE run_id = $1`,
      [row.run_id],
    );
    const unknown = await tx.query<
      Array<{
        saga_id: string;
        flow: string;
        request_id: string;
        operation: string | null;
        currency: string;
        held: string;
      }>
    >(
      `SELECT saga_id, flow, request_id, operation, currency, sum(amount)::text AS held
         FROM journal_lines
        WHERE endpoint_id = $1 AND account = $4 AND request_id IS NOT NULL
        GROUP BY saga_id, flow, request_id, operation, currency
       HAVING sum(amount) > 0 AND min(occurred_at) >= $2 AND min(occurred_at) < $3`,
      [endpointId, from, to, merchantAccount(endpointId, 'in-flight-unknown')],
    );
    const sagas = [
      ...new Set([
        ...ours.map((o) => o.saga_id),
        ...checks.map((c) => c.saga_id),
        ...unknown.map((u) => u.saga_id),
      ]),
    ];
    const cases = await tx.query<
      Array<{ id: string; saga_id: string; request_id: string; concern: string; status: string }>
    >(
      `SELECT id::text AS id, saga_id::text AS saga_id, request_id::text AS request_id, concern,
              status
         FROM cases WHERE endpoint_id = $1 AND saga_id::text = ANY($2::text[])`,
      [endpointId, sagas],
    );
    const caseOf = (sagaId: string, requestId: string | null | undefined) =>
      cases.find((c) => c.saga_id === sagaId && c.request_id === requestId);
    const requestOf = (c: (typeof checks)[number]) => c.expectation.requestId;
    const usedChecks = new Set<(typeof checks)[number]>();
    // A line's check: its request's (by request id), else its saga's order check about the same
    // operation. One rule names operations on both sides: as the saga's `*-requested` named it
    // (the line's journal line; every check's expectation, the order check's included:
    // flows/payout/domain/reconciliation.ts `settledAs`); the gateway's own name for it (`payout`
    // for a v4 payout) is read only by the verdict, through the flow's vocabulary.
    const checkOf = (sagaId: string, requestId: string | null, operation: string | null) => {
      const own = checks.find(
        (c) =>
          c.saga_id === sagaId &&
          c.subject !== 'client-order-id' &&
          requestId !== null &&
          requestOf(c) === requestId,
      );
      const found =
        own ??
        checks.find(
          (c) =>
            c.saga_id === sagaId &&
            c.subject === 'order' &&
            (operation === null || c.expectation.operation === operation),
        );
      if (found !== undefined) usedChecks.add(found);
      return found;
    };
    const lookupOf = (sagaId: string) =>
      checks.find((c) => c.saga_id === sagaId && c.subject === 'client-order-id');
    const operations: OperationFacts[] = ours.map((o) => {
      // A decided operation's checks are what its case was about: taken, never its tie-out.
      const asked = checkOf(o.saga_id, o.request_id, o.operation);
      const check = o.type === 'settled-by-decision' ? undefined : asked;
      const amount = check?.gateway?.amount;
      const other =
        check?.verdict === 'paid-twice' ? lookupOf(o.saga_id)?.gateway?.amount : undefined;
      const found = caseOf(o.saga_id, o.request_id);
      return {
        sagaId: o.saga_id,
        flow: o.flow,
        ...(o.request_id === null ? {} : { requestId: o.request_id }),
        ...(o.operation === null ? {} : { operation: o.operation }),
        type: o.type,
        currency: o.currency,
        minor: Number(o.minor),
        ...(check?.verdict === null || check === undefined ? {} : { verdict: check.verdict }),
        ...(amount !== undefined && amount.currency === o.currency
          ? { gatewayMinor: amount.minor }
          : {}),
        ...(other !== undefined && other.currency === o.currency
          ? { otherOrderMinor: other.minor }
          : {}),
        ...(found === undefined ? {} : { caseId: found.id, caseStatus: found.status }),
      };
    });
    const unrecorded: UnrecordedFacts[] = checks
      .filter(
        (c) =>
          !usedChecks.has(c) &&
          c.subject !== 'client-order-id' &&
          c.verdict !== null &&
          !NOT_MONEY_MISMATCH.has(c.verdict),
      )
      .map((c) => ({
        sagaId: c.saga_id,
        flow: c.flow,
        ...(requestOf(c) === undefined ? {} : { requestId: requestOf(c) }),
        operation: c.expectation.operation,
        verdict: c.verdict ?? '',
        currency: c.gateway?.amount?.currency ?? c.expectation.amount?.currency ?? '',
        gatewayMinor: c.gateway?.amount?.minor ?? 0,
      }));
    const unknownFacts: UnknownFacts[] = unknown.map((u) => {
      const found = caseOf(u.saga_id, u.request_id);
      return {
        sagaId: u.saga_id,
        flow: u.flow,
        requestId: u.request_id,
        ...(u.operation === null ? {} : { operation: u.operation }),
        currency: u.currency,
        heldMinor: Number(u.held),
        ...(found === undefined ? {} : { caseId: found.id }),
      };
    });
    const openCases: OpenCaseFacts[] = cases
      .filter((c) => OPEN_CASE.includes(c.status))
      .map((c) => ({
        caseId: c.id,
        sagaId: c.saga_id,
        requestId: c.request_id,
        concern: c.concern,
        status: c.status,
      }));
    return { operations, unrecorded, unknown: unknownFacts, openCases };
  }
}

function reportOf(r: ReportRow): CloseReport {
  return {
    endpointId: r.endpoint_id,
    day: r.day,
    version: r.version,
    runId: r.run_id,
    timeZone: r.time_zone,
    from: r.from_at.toISOString(),
    to: r.to_at.toISOString(),
    state: r.state,
    trigger: r.trigger,
    requestedBy: r.requested_by,
    startedAt: r.started_at.toISOString(),
    ...(r.completed_at === null ? {} : { completedAt: r.completed_at.toISOString() }),
    ...(r.totals === null ? {} : { totals: r.totals }),
    ...(r.lines === null ? {} : { lines: r.lines }),
    ...(r.exceptions === null ? {} : { exceptions: r.exceptions }),
  };
}
