import {
  CE_SOURCES,
  type CaseStepAudited,
  ceType,
  type ReconciliationMismatch,
  TOPICS,
  toKafkaHeaders,
} from '@payments/contracts';
import { messageTraceparent } from '@payments/observability';
import type { EntityManager } from 'typeorm';
import {
  type CaseAuditEntry,
  type CaseRecord,
  findingOfMismatch,
  openCase,
  withEvidence,
} from '../../domain/cases/case';
import { derivedUuid } from '../../domain/derived-id';
import type { OutboxRow } from '../../runtime/outbox/outbox-rows';
import type { OutboxWriter } from '../../runtime/outbox/outbox.writer';

/**
 * How a case is written (issue 33): its row in `cases` and, in the same transaction, each new step
 * of its audit (`record.audit` past what the row held) as a row of `admin_audit` and a
 * `case-step-audited` event on `payments.admin.audit.v1` — the path the admin actions are audited
 * by (AdminActionService), so no step of a case, a person's or the system's, exists without its
 * audit. A step's audit id derives from the case and the step's place in its audit: a step
 * written twice (a retried transaction) is audited once.
 */

/** The command a step sent the saga (an approval the saga took). */
export interface StepCommand {
  readonly commandId: string;
  readonly commandType: string;
}

/** The case id of a saga's operation: one case per (saga, request). */
export const caseIdOf = (sagaId: string, requestId: string): string =>
  derivedUuid(`case:${sagaId}:${requestId}`);

/** A case locked for its step in this transaction (another merchant's: undefined). */
export async function lockCase(
  tx: EntityManager,
  caseId: string,
  endpoints?: readonly string[],
): Promise<CaseRecord | undefined> {
  const [row] = await tx.query<Array<{ record: CaseRecord }>>(
    `SELECT record FROM cases WHERE id = $1 AND ($2::text[] IS NULL OR endpoint_id = ANY($2))
       FOR UPDATE`,
    [caseId, endpoints ?? null],
  );
  return row?.record;
}

/**
 * Writes the case (`previous` undefined: a new one, once per saga request — false when it exists)
 * and audits the steps `record` has beyond `previous`. Whether the case was written.
 */
export async function saveCase(
  tx: EntityManager,
  outbox: OutboxWriter,
  record: CaseRecord,
  previous: CaseRecord | undefined,
  command?: StepCommand,
): Promise<boolean> {
  const values = [
    record.caseId,
    record.flow,
    record.sagaId,
    record.endpointId,
    record.requestId,
    record.concern,
    record.status,
    JSON.stringify(record),
    record.openedAt,
    record.updatedAt,
  ];
  const rows = await tx.query<Array<{ id: string }>>(
    `INSERT INTO cases (id, flow, saga_id, endpoint_id, request_id, concern, status, record,
                        opened_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10)
     ON CONFLICT ${
       previous === undefined
         ? 'DO NOTHING'
         : '(id) DO UPDATE SET status = EXCLUDED.status, record = EXCLUDED.record, updated_at = EXCLUDED.updated_at'
     }
     RETURNING id`,
    values,
  );
  if (rows.length === 0) return false;
  const from = previous?.audit.length ?? 0;
  const steps = record.audit
    .slice(from)
    .map((entry, i) => auditEvent(record, entry, from + i, command));
  await audit(tx, outbox, steps);
  return true;
}

/** One audit entry of a case as its `case-step-audited` event. */
export function auditEvent(
  record: CaseRecord,
  entry: CaseAuditEntry,
  index: number,
  command?: StepCommand,
): CaseStepAudited {
  const sent = entry.action === 'approved' ? command : undefined;
  return {
    type: 'case-step-audited',
    auditId: derivedUuid(`case-audit:${record.caseId}:${index}`),
    caseId: record.caseId,
    index,
    step: entry.action,
    actor: entry.actor,
    role: entry.role ?? 'system',
    sagaId: record.sagaId,
    flow: record.flow,
    requestId: record.requestId,
    concern: record.concern,
    ...(entry.decision === undefined ? {} : { decision: entry.decision }),
    ...(entry.amount === undefined ? {} : { amount: entry.amount }),
    reason: (entry.reason ?? entry.action).slice(0, 1024) || entry.action,
    evidenceSeen: entry.evidenceSeen,
    ...(sent === undefined ? {} : { commandId: sent.commandId, commandType: sent.commandType }),
    occurredAt: entry.at,
  };
}

/** The audit rows and events of these steps, in the caller's transaction. */
async function audit(
  tx: EntityManager,
  outbox: OutboxWriter,
  steps: readonly CaseStepAudited[],
): Promise<void> {
  if (steps.length === 0) return;
  const fresh: CaseStepAudited[] = [];
  for (const step of steps) {
    const inserted = await tx.query<Array<{ id: string }>>(
      `INSERT INTO admin_audit (id, at, actor, role, action, saga_id, flow, reason, command_id,
                                command_type, case_id, detail)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb)
       ON CONFLICT (id) DO NOTHING RETURNING id`,
      [
        step.auditId,
        step.occurredAt,
        step.actor,
        step.role,
        `case-${step.step}`,
        step.sagaId,
        step.flow,
        step.reason,
        step.commandId ?? null,
        step.commandType ?? null,
        step.caseId,
        JSON.stringify({
          index: step.index,
          requestId: step.requestId,
          concern: step.concern,
          evidenceSeen: step.evidenceSeen,
          ...(step.decision === undefined ? {} : { decision: step.decision }),
          ...(step.amount === undefined ? {} : { amount: step.amount }),
        }),
      ],
    );
    if (inserted.length > 0) fresh.push(step);
  }
  const traceparent = messageTraceparent(TOPICS.adminAudit);
  await outbox.enqueue(
    tx,
    fresh.map((step): OutboxRow => ({
      id: step.auditId,
      topic: TOPICS.adminAudit,
      key: step.sagaId,
      headers: toKafkaHeaders({
        id: step.auditId,
        type: ceType.admin(step.type),
        source: CE_SOURCES.admin,
        subject: step.sagaId,
        time: step.occurredAt,
        traceparent,
      }),
      payload: step,
      aggregateId: step.sagaId,
    })),
  );
}

/**
 * A reconciliation mismatch, in the run's transaction: a mismatch about an operation the saga
 * reported settled opens a case (`reconciliation-mismatch`) holding the finding, or adds the
 * finding to the operation's case; any other finding about an operation with a case is added to
 * it as evidence. One case per saga operation: a run repeated finds the case and adds nothing new
 * (the same finding twice is kept once).
 */
export async function caseOfMismatch(
  tx: EntityManager,
  outbox: OutboxWriter,
  mismatch: ReconciliationMismatch,
): Promise<void> {
  const { evidence, opensCase } = findingOfMismatch(mismatch);
  // Without our request id (no serial known), the case is the operation's as the saga reported it.
  const requestId =
    mismatch.ours.requestId ??
    derivedUuid(`case-operation:${mismatch.sagaId}:${mismatch.ours.operation}`);
  const caseId = caseIdOf(mismatch.sagaId, requestId);
  const existing = await lockCase(tx, caseId);
  if (existing !== undefined) {
    const next = withEvidence(existing, evidence);
    if (next !== existing) await saveCase(tx, outbox, next, existing);
    return;
  }
  if (!opensCase) return;
  await saveCase(
    tx,
    outbox,
    openCase({
      caseId,
      flow: mismatch.flow,
      sagaId: mismatch.sagaId,
      endpointId: mismatch.endpointId,
      requestId,
      operation: mismatch.ours.operation,
      concern: 'reconciliation-mismatch',
      at: mismatch.detectedAt,
      evidence: [evidence],
      ...(mismatch.ours.amount === undefined ? {} : { requestedAmount: mismatch.ours.amount }),
      ...(evidence.reportedAmount === undefined ? {} : { reportedAmount: evidence.reportedAmount }),
    }),
    undefined,
  );
}
