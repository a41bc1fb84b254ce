import { Injectable } from '@nestjs/common';
import type {
  ReconciliationMismatchRow,
  ReconciliationRunDetail,
  ReconciliationRunSummary,
} from '@payments/contracts';
import { Database } from '../../persistence/database';

/** Most mismatches one run's page lists (a run that finds more says so by its count). */
export const MAX_MISMATCHES = 500;

interface RunRow {
  id: string;
  trigger: string;
  requested_by: string;
  window_from: Date;
  window_to: Date;
  endpoint_id: string | null;
  status: string;
  started_at: Date;
  completed_at: Date | null;
  checked: string;
  mismatched: string;
}

/**
 * Verdicts that are no mismatch: a match, and the findings (domain/reconciliation/reconciliation.ts `Finding`:
 * a refusal that said nothing, an answer handed to the saga waiting for it).
 */
const NOT_MISMATCHES = `ARRAY['match', 'unanswered', 'handed-to-saga']`;

// The runs first (newest, bounded), then their checks by the checks' key (run_id leads it). A
// lookup by client order id is not an operation checked: its finding lies on the check that asked.
const RUNS_SQL = `
  SELECT r.*,
         (SELECT count(*) FROM reconciliation_checks c
           WHERE c.run_id = r.id AND c.subject <> 'client-order-id' AND c.verdict IS NOT NULL) AS checked,
         (SELECT count(*) FROM reconciliation_checks c
           WHERE c.run_id = r.id AND c.subject <> 'client-order-id'
             AND c.verdict IS NOT NULL AND c.verdict <> ALL(${NOT_MISMATCHES})) AS mismatched
    FROM (SELECT id, trigger, requested_by, window_from, window_to, endpoint_id, status,
                 started_at, completed_at
            FROM reconciliation_runs WHERE %WHERE% ORDER BY started_at DESC, id LIMIT $1) r
   ORDER BY r.started_at DESC, r.id`;

function summary(row: RunRow): ReconciliationRunSummary {
  return {
    id: row.id,
    trigger: row.trigger,
    requestedBy: row.requested_by,
    from: row.window_from.toISOString(),
    to: row.window_to.toISOString(),
    endpointId: row.endpoint_id,
    status: row.status,
    startedAt: row.started_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
    checked: Number(row.checked),
    mismatched: Number(row.mismatched),
  };
}

/** The admin API's read of reconciliation runs: what each found (it never changes a run). */
@Injectable()
export class ReconciliationRunsQuery {
  constructor(private readonly db: Database) {}

  async latest(limit: number): Promise<ReconciliationRunSummary[]> {
    const rows = await this.db.read((db) =>
      db.query<RunRow[]>(RUNS_SQL.replace('%WHERE%', 'true'), [limit]),
    );
    return rows.map(summary);
  }

  async detail(runId: string): Promise<ReconciliationRunDetail | undefined> {
    // One snapshot: the run's counts and its mismatches agree.
    return this.db.snapshot(async (db) => {
      const [run] = await db.query<RunRow[]>(RUNS_SQL.replace('%WHERE%', 'id = $2'), [1, runId]);
      if (run === undefined) return undefined;
      const mismatches = await db.query<
        Array<{ saga_id: string; flow: string; endpoint_id: string; verdict: string }>
      >(
        `SELECT saga_id, flow, endpoint_id, verdict FROM reconciliation_checks
          WHERE run_id = $1 AND subject <> 'client-order-id'
            AND verdict IS NOT NULL AND verdict <> ALL(${NOT_MISMATCHES})
          ORDER BY verdict, saga_id LIMIT $2`,
        [runId, MAX_MISMATCHES],
      );
      return {
        run: summary(run),
        mismatches: mismatches.map((m): ReconciliationMismatchRow => ({
          sagaId: m.saga_id,
          flow: m.flow,
          endpointId: m.endpoint_id,
          kind: m.verdict,
        })),
      };
    });
  }
}
