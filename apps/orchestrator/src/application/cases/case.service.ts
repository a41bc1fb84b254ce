import { Inject, Injectable } from '@nestjs/common';
import type { Money } from '@payments/contracts';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../../config';
import { type AdminPrincipal, scopedEndpoints } from '../../domain/admin/admin-tokens';
import {
  approve,
  closeSettled,
  type CaseEvidence,
  type CaseProposal,
  type CaseRecord,
  type CaseStep,
  dueConcern,
  openCase,
  propose,
  rejectProposal,
  reopen,
  type SettleFields,
} from '../../domain/cases/case';
import {
  alertedOperations,
  type EvidenceMatch,
  waitingOperations,
} from '../../domain/cases/alerted-operations';
import { derivedUuid } from '../../domain/derived-id';
import { Database } from '../../persistence/database';
import { Clock } from '../../runtime/clock';
import { OutboxWriter } from '../../runtime/outbox/outbox.writer';
import { SagaRuntime } from '../../runtime/saga-runtime';
import { caseIdOf, lockCase, saveCase, type StepCommand } from './case-store';

/**
 * Cases (issue 33), the application side of domain/cases/case.ts: opened by a sweep of the sagas
 * (an operation alerted with a concern, no trace or amount mismatch, at once; a plain alert after
 * CASE_AFTER_ALERT_HOURS), reopened when a saga says a gateway answer contradicted its decision
 * (`case-reopened`), and the people's steps: propose, approve (a second person, approver role),
 * reject a proposal, refresh and wait. An approved decision enters the saga as its flow's internal
 * `settle-by-decision` command (origin `saga`, never the commands topic), decided by the flow
 * through the shared rule; its command id derives from the case and its proposal, so a retried
 * approval is the same command. Every step, a person's or the system's, is audited through `case-store.ts`
 * (`admin_audit` and `case-step-audited`, in the case's transaction).
 */

/**
 * Per flow: the saga id field and the commands a case sends it (no `refresh`: the flow has no
 * status refresh of its own, so "refresh and wait" is refused).
 */
export const FLOW_COMMANDS: Readonly<
  Record<string, { idField: string; settle?: string; refresh?: string }>
> = {
  'card-payment': { idField: 'paymentId', settle: 'settle-by-decision', refresh: 'refresh-status' },
  payout: {
    idField: 'payoutId',
    settle: 'payout-settle-by-decision',
    refresh: 'refresh-payout-status',
  },
  transfer: {
    idField: 'transferId',
    settle: 'transfer-settle-by-decision',
    refresh: 'refresh-transfer-status',
  },
  // Moves no money; a check the gateway never cleared is decided "not done" (decide.ts).
  'pan-eligibility': { idField: 'checkId', settle: 'pan-eligibility-settle-by-decision' },
  // A schedule the gateway charges: a charge being confirmed is decided by the shared rule
  // (gateway-charge-decision.ts); its registration is not (NOT_SETTLEABLE_OPERATIONS): "refresh
  // and wait" asks again.
  'recurring-schedule': {
    idField: 'scheduleId',
    settle: 'schedule-charge-settle-by-decision',
    refresh: 'refresh-schedule-status',
  },
};

/** The flows whose alerted operations open a case (alerted-operations.ts says which). */
export const CASE_FLOWS = Object.keys(FLOW_COMMANDS);

export type CaseResult =
  | { readonly kind: 'ok'; readonly record: CaseRecord }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'refused'; readonly code: string; readonly message: string };

interface CaseRow {
  id: string;
  record: CaseRecord;
}

interface SagaRow {
  id: string;
  flow: string;
  endpoint_id: string;
  state: {
    merchant?: { endpointId: string; merchantId?: string };
    /** A schedule keeps its merchant in its terms. */
    terms?: { merchant?: { endpointId: string; merchantId?: string } };
    amount?: Money;
    inFlight?: {
      operation: string;
      requestId: string;
      alerted?: boolean;
      concern?: string;
      unknownSince?: string;
      amount?: Money;
    };
    /** A gateway-charged schedule: the charge it last settled by decision. */
    decided?: { requestId: string; caseId: string; reopened?: boolean };
  };
}

@Injectable()
export class CaseService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly runtime: SagaRuntime,
    private readonly outbox: OutboxWriter,
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
  ) {}

  /** Cases in the token's scope, newest first (`status`: only those). */
  async list(principal: AdminPrincipal, status?: string): Promise<CaseRecord[]> {
    const endpoints = scopedEndpoints(principal.scope);
    const rows = await this.db.read((db) =>
      db.query<CaseRow[]>(
        `SELECT id, record FROM cases
          WHERE ($1::text[] IS NULL OR endpoint_id = ANY($1)) AND ($2::text IS NULL OR status = $2)
          ORDER BY opened_at DESC LIMIT 500`,
        [endpoints ?? null, status ?? null],
      ),
    );
    return rows.map((r) => r.record);
  }

  /** One case in the token's scope (another merchant's: not found). */
  async get(principal: AdminPrincipal, caseId: string): Promise<CaseRecord | undefined> {
    const endpoints = scopedEndpoints(principal.scope);
    const [row] = await this.db.read((db) =>
      db.query<CaseRow[]>(
        `SELECT id, record FROM cases WHERE id = $1 AND ($2::text[] IS NULL OR endpoint_id = ANY($2))`,
        [caseId, endpoints ?? null],
      ),
    );
    return row?.record;
  }

  async propose(
    principal: AdminPrincipal,
    caseId: string,
    proposal: CaseProposal,
    reason: string,
  ): Promise<CaseResult> {
    const record = await this.get(principal, caseId);
    if (record === undefined) return { kind: 'not-found' };
    if (proposal.decision === 'refresh-and-wait') {
      if (FLOW_COMMANDS[record.flow]?.refresh === undefined)
        return {
          kind: 'refused',
          code: 'CASE_DECISION_INVALID',
          message: `a ${record.flow} saga has no status refresh: decide it, or wait for reconciliation`,
        };
    } else if (!settleable(record) || (await this.searchedCycle(record)))
      return notSettleable(record);
    const result = await this.step(principal, caseId, (record, now) =>
      propose(record, principal, proposal, reason, now),
    );
    if (result.kind === 'ok' && proposal.decision === 'refresh-and-wait')
      await this.refresh(result.record);
    return result;
  }

  async rejectProposal(
    principal: AdminPrincipal,
    caseId: string,
    reason: string,
  ): Promise<CaseResult> {
    return this.step(principal, caseId, (record, now) =>
      rejectProposal(record, principal, reason, now),
    );
  }

  /**
   * The second person approves: checked by the rules, the saga told to settle (its decision is
   * the judge: an operation settled meanwhile by evidence refuses it), then the case closed.
   * A reconciliation mismatch about an operation the saga no longer waits for (it reported it
   * settled, the gateway says otherwise) is decided for finance outside the saga: its history
   * stands, no saga event; the decision is the case's and its audit event's.
   */
  async approve(principal: AdminPrincipal, caseId: string): Promise<CaseResult> {
    const record = await this.get(principal, caseId);
    if (record === undefined) return { kind: 'not-found' };
    const step = approve(record, principal, this.clock.now().toISOString());
    if (!step.ok) return { kind: 'refused', code: step.code, message: step.message };
    if (!settleable(record)) return notSettleable(record);
    if (step.followUp.kind !== 'settle') throw new Error('an approval settles');
    const saga = await this.saga(record.sagaId);
    const outsideSaga =
      record.concern === 'reconciliation-mismatch' &&
      saga?.state.inFlight?.requestId !== record.requestId;
    if (outsideSaga)
      return this.step(principal, caseId, (current, now) => approve(current, principal, now));
    const settled = await this.settle(record, step.followUp.command);
    if (settled.kind !== 'sent') return settled;
    return this.step(
      principal,
      caseId,
      (current, now) => approve(current, principal, now),
      settled.command,
    );
  }

  /** Sends the saga its settle-by-decision; a refusal (settled meanwhile) comes back. */
  private async settle(
    record: CaseRecord,
    fields: SettleFields,
  ): Promise<CaseResult | { readonly kind: 'sent'; readonly command: StepCommand }> {
    const flow = FLOW_COMMANDS[record.flow];
    if (flow?.settle === undefined) return notSettleable(record);
    const saga = await this.saga(record.sagaId);
    if (saga === undefined) return { kind: 'not-found' };
    // One command per proposal: a retried approval of it is the same command; a new proposal
    // after a refused one (the saga's judgement) is a new command, not a conflicting repeat.
    const commandId = derivedUuid(
      `case-settle:${record.caseId}:${record.proposal?.by ?? ''}:${record.proposal?.at ?? ''}`,
    );
    await this.runtime.process([
      {
        kind: 'command',
        origin: 'saga',
        meta: {},
        raw: {
          type: flow.settle,
          commandId,
          [flow.idField]: record.sagaId,
          merchant: saga.state.merchant ??
            saga.state.terms?.merchant ?? { endpointId: record.endpointId },
          occurredAt: this.clock.now().toISOString(),
          ...fields,
        },
      },
    ]);
    const after = await this.saga(record.sagaId);
    if (after?.state.decided?.caseId === record.caseId)
      return { kind: 'sent', command: { commandId, commandType: flow.settle } };
    const [rejection] = await this.db.read((db) =>
      db.query<Array<{ reason: string; message: string }>>(
        `SELECT event->>'reason' AS reason, event->>'message' AS message FROM saga_history
          WHERE saga_id = $1 AND command_id = $2 ORDER BY version DESC LIMIT 1`,
        [record.sagaId, commandId],
      ),
    );
    return {
      kind: 'refused',
      code: rejection?.reason ?? 'CASE_OPERATION_SETTLED',
      message: rejection?.message ?? 'the saga did not take the decision',
    };
  }

  /** "Refresh and wait": the flow's refresh command (a status query; its answer decides). */
  private async refresh(record: CaseRecord): Promise<void> {
    const refresh = FLOW_COMMANDS[record.flow]?.refresh;
    const flow = FLOW_COMMANDS[record.flow];
    const saga = await this.saga(record.sagaId);
    if (flow === undefined || refresh === undefined || saga === undefined) return;
    const now = this.clock.now().toISOString();
    await this.runtime.process([
      {
        kind: 'command',
        meta: {},
        raw: {
          type: refresh,
          commandId: derivedUuid(`case-refresh:${record.caseId}:${now}`),
          [flow.idField]: record.sagaId,
          merchant: saga.state.merchant ??
            saga.state.terms?.merchant ?? { endpointId: record.endpointId },
          occurredAt: now,
        },
      },
    ]);
  }

  /**
   * A schedule's cycle alerted `not-found` (its case's request is the cycle's search): no gateway
   * order to decide about, so no decision (the saga would refuse it; refused here, before a
   * proposal is audited).
   */
  private async searchedCycle(record: CaseRecord): Promise<boolean> {
    if (record.flow !== 'recurring-schedule') return false;
    const saga = await this.saga(record.sagaId);
    return waitingOperations(record.flow, saga?.state).some(
      (op) => op.requestId === record.requestId && op.evidence.by === 'cycle',
    );
  }

  private async saga(id: string): Promise<SagaRow | undefined> {
    const [row] = await this.db.read((db) =>
      db.query<SagaRow[]>(`SELECT id, flow, endpoint_id, state FROM sagas WHERE id = $1`, [id]),
    );
    return row;
  }

  /** A person's step on a case, in one transaction with the case locked. */
  private async step(
    principal: AdminPrincipal,
    caseId: string,
    decide: (record: CaseRecord, now: string) => CaseStep,
    command?: StepCommand,
  ): Promise<CaseResult> {
    return this.db.transaction(async (tx) => {
      const current = await lockCase(tx, caseId, scopedEndpoints(principal.scope));
      if (current === undefined) return { kind: 'not-found' };
      const step = decide(current, this.clock.now().toISOString());
      if (!step.ok) return { kind: 'refused', code: step.code, message: step.message };
      await saveCase(tx, this.outbox, step.record, current, command);
      return { kind: 'ok', record: step.record };
    });
  }

  /** A step of the system on a case, in one transaction with the case locked. */
  private async systemStep(
    caseId: string,
    next: (record: CaseRecord) => CaseRecord,
  ): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const current = await lockCase(tx, caseId);
      if (current === undefined) return false;
      const record = next(current);
      if (record === current) return false;
      return saveCase(tx, this.outbox, record, current);
    });
  }

  /**
   * Opens the cases that are due (an alerted operation of a flow that takes decisions with no
   * case yet), closes those whose operation the saga settled by the gateway's evidence meanwhile,
   * and reopens those whose saga says a gateway answer contradicted the decision. Returns how
   * many it opened, closed and reopened.
   */
  async sweep(): Promise<{ opened: number; closed: number; reopened: number }> {
    const now = this.clock.now().toISOString();
    const afterAlertMs = this.config.cases.afterAlertHours * 3_600_000;
    let opened = 0;
    for (const saga of await this.alertedSagas()) {
      const cased = new Set(
        (
          await this.db.read((db) =>
            db.query<Array<{ request_id: string }>>(
              `SELECT request_id::text AS request_id FROM cases WHERE saga_id = $1`,
              [saga.id],
            ),
          )
        ).map((r) => r.request_id),
      );
      for (const op of alertedOperations(saga.flow, saga.state)) {
        if (cased.has(op.requestId)) continue;
        const concern = dueConcern(op, now, afterAlertMs);
        if (concern === undefined) continue;
        const evidence = await this.sagaEvidence(saga.id, op.evidence);
        const reported = evidence.map((e) => e.reportedAmount).find((a) => a !== undefined);
        // A card reference moves no money: no requested amount.
        const requested =
          op.operation === 'create-card-ref' ? undefined : (op.amount ?? saga.state.amount);
        const record = openCase({
          caseId: caseIdOf(saga.id, op.requestId),
          flow: saga.flow,
          sagaId: saga.id,
          endpointId: saga.endpoint_id,
          requestId: op.requestId,
          operation: op.operation,
          concern,
          at: now,
          evidence,
          ...(requested === undefined ? {} : { requestedAmount: requested }),
          ...(reported === undefined ? {} : { reportedAmount: reported }),
        });
        const inserted = await this.db.transaction((tx) =>
          saveCase(tx, this.outbox, record, undefined),
        );
        if (inserted) opened += 1;
      }
    }
    const closed = await this.closeSettledByEvidence(now);
    const contradicted = await this.db.read((db) =>
      db.query<Array<SagaRow & { record: CaseRecord }>>(
        `SELECT s.id, s.flow, s.endpoint_id, s.state, c.record FROM sagas s
           JOIN cases c ON c.id::text = s.state->'decided'->>'caseId'
          WHERE s.state->'decided'->>'reopened' = 'true' AND c.status = 'closed' LIMIT 200`,
      ),
    );
    for (const row of contradicted) {
      const [answer] = await this.sagaEvidence(
        row.id,
        { by: 'request', requestId: row.record.requestId },
        'case-reopened',
      );
      const evidence: CaseEvidence = answer ?? {
        at: now,
        source: 'gateway-answer',
        ref: 'case-reopened',
        summary: 'a gateway answer contradicted the decision',
      };
      await this.systemStep(row.record.caseId, (current) =>
        current.status === 'closed' ? reopen(current, evidence) : current,
      );
    }
    return { opened, closed, reopened: contradicted.length };
  }

  /**
   * Open or proposed cases about an operation their saga no longer waits for, and did not settle
   * by this case's decision: the gateway's evidence settled it (a status reply, a callback, a
   * reconciliation run's answer). Nobody needs to decide; each closes, a step of the system, with
   * the saga's last event about the request as evidence. A reconciliation mismatch's case is about
   * an operation already settled: only a person closes it.
   */
  private async closeSettledByEvidence(now: string): Promise<number> {
    // The SQL spares the common case (the request is in flight, or the card reference); what the
    // saga waits for is judged by alerted-operations.ts, as the sweep that opened the case.
    const candidates = await this.db.read((db) =>
      db.query<Array<SagaRow & { case_id: string; request_id: string }>>(
        `SELECT c.id AS case_id, c.request_id::text AS request_id, s.id, s.flow, s.endpoint_id, s.state
           FROM cases c JOIN sagas s ON s.id = c.saga_id
          WHERE c.status IN ('open', 'proposed') AND c.concern <> 'reconciliation-mismatch'
            AND c.request_id::text <> ALL (array_remove(
                  ARRAY[s.state->'inFlight'->>'requestId', s.state->'cardRefRequest'->>'requestId'],
                  NULL))
            AND (s.state->'decided'->>'caseId') IS DISTINCT FROM c.id::text
          LIMIT 500`,
      ),
    );
    const settled = candidates.filter(
      (row) =>
        !waitingOperations(row.flow, row.state).some((op) => op.requestId === row.request_id),
    );
    let closed = 0;
    for (const row of settled) {
      const events = await this.sagaEvidence(row.id, { by: 'request', requestId: row.request_id });
      const last: CaseEvidence = events.at(-1) ?? {
        at: now,
        source: 'saga-event',
        ref: 'settled',
        summary: 'the saga no longer waits for the operation',
      };
      if (await this.systemStep(row.case_id, (current) => closeSettled(current, last))) closed += 1;
    }
    return closed;
  }

  /**
   * Sagas with an alerted operation that has no case yet (alerted-operations.ts): the operation in
   * flight, a card payment's create-card-ref, a gateway-charged schedule's registration and
   * charges being confirmed (exact in SQL, so sagas already cased never crowd out the others);
   * and the schedules with cycles alerted not-found (their request ids derive from the cycle,
   * so which of them has its case is judged by the sweep).
   */
  private async alertedSagas(): Promise<SagaRow[]> {
    const operations = await this.db.read((db) =>
      db.query<SagaRow[]>(
        `SELECT s.id, s.flow, s.endpoint_id, s.state FROM sagas s
          WHERE s.flow = ANY($1) AND EXISTS (
            SELECT 1 FROM (
              SELECT s.state->'inFlight' AS op
              UNION ALL SELECT s.state->'cardRefRequest'
              UNION ALL SELECT s.state->'registration' WHERE s.state->>'status' = 'registering'
              UNION ALL SELECT ch->'op' FROM jsonb_array_elements(
                  CASE WHEN jsonb_typeof(s.state->'charges') = 'array'
                       THEN s.state->'charges' ELSE '[]'::jsonb END) ch
                WHERE ch->>'outcome' = 'confirming') o
             WHERE o.op->>'alerted' = 'true' AND o.op ? 'operation'
               AND (o.op->>'operation') IS DISTINCT FROM 'get-card-info'
               AND NOT EXISTS (SELECT 1 FROM cases c WHERE c.saga_id = s.id
                                AND c.request_id::text = o.op->>'requestId'))
          LIMIT 200`,
        [CASE_FLOWS],
      ),
    );
    const missing = await this.db.read((db) =>
      db.query<SagaRow[]>(
        `SELECT s.id, s.flow, s.endpoint_id, s.state FROM sagas s
          WHERE s.flow = 'recurring-schedule' AND jsonb_typeof(s.state->'missingCycles') = 'array'
            AND jsonb_array_length(s.state->'missingCycles') > 0
          LIMIT 500`,
      ),
    );
    const seen = new Set(operations.map((s) => s.id));
    return [...operations, ...missing.filter((s) => !seen.has(s.id))];
  }

  /** The saga's events about an operation, as evidence (references and what they said). */
  private async sagaEvidence(
    sagaId: string,
    about: EvidenceMatch,
    typeEndingWith?: string,
  ): Promise<CaseEvidence[]> {
    const [where, value] =
      about.by === 'request'
        ? [`event->>'requestId' = $2`, about.requestId]
        : about.by === 'type-prefix'
          ? [`event_type LIKE $2 || '%'`, about.prefix]
          : about.by === 'gateway-order'
            ? [`event->>'gatewayOrderId' = $2`, about.gatewayOrderId]
            : [`event->>'cycle' = $2`, String(about.cycle)];
    const rows = await this.db.read((db) =>
      db.query<
        Array<{
          version: number;
          event_type: string;
          occurred_at: Date;
          event: Record<string, unknown>;
        }>
      >(
        `SELECT version, event_type, occurred_at, event FROM saga_history
          WHERE saga_id = $1 AND ${where}
            AND ($3::text IS NULL OR event_type LIKE '%' || $3)
            AND ($4::text[] IS NULL OR event_type = ANY($4))
          ORDER BY version`,
        [sagaId, value, typeEndingWith ?? null, about.by === 'cycle' ? about.types : null],
      ),
    );
    return rows.map((r) => evidenceOf(r));
  }
}

/**
 * Per flow, the operations a decision does not settle: a schedule's registration (whether the
 * gateway registered it is its answer alone, and it charges nothing by itself).
 */
const NOT_SETTLEABLE_OPERATIONS: Readonly<Record<string, readonly string[]>> = {
  'recurring-schedule': ['create-recurring-payment'],
};

/** A case whose operation its flow settles by a decision (a reconciliation mismatch: finance's). */
function settleable(record: CaseRecord): boolean {
  return (
    record.concern === 'reconciliation-mismatch' ||
    (FLOW_COMMANDS[record.flow]?.settle !== undefined &&
      !(NOT_SETTLEABLE_OPERATIONS[record.flow] ?? []).includes(record.operation))
  );
}

function notSettleable(record: CaseRecord): CaseResult {
  return {
    kind: 'refused',
    code: 'CASE_FLOW_NOT_SETTLEABLE',
    message: `a ${record.flow} saga's ${record.operation} is not settled by a decision: its evidence is in the case; "refresh and wait" asks the gateway again, reconciliation and the gateway's answers settle it`,
  };
}

/** What an event says, as a case keeps it (its fields of money and outcome, never card data). */
function evidenceOf(r: {
  version: number;
  event_type: string;
  occurred_at: Date;
  event: Record<string, unknown>;
}): CaseEvidence {
  const e = r.event;
  const said = ['concern', 'answer', 'reason', 'code', 'decision']
    .filter((k) => typeof e[k] === 'string')
    .map((k) => `${k} ${String(e[k])}`);
  const money = (value: unknown): Money | undefined =>
    typeof value === 'object' && value !== null && 'minor' in value && 'currency' in value
      ? (value as Money)
      : undefined;
  const reported = money(e.reportedAmount);
  const amount = money(e.amount);
  return {
    at: new Date(r.occurred_at).toISOString(),
    source: 'saga-event',
    ref: `${r.event_type} v${r.version}`,
    summary: [
      r.event_type,
      ...said,
      ...(amount ? [`amount ${amount.minor} ${amount.currency}`] : []),
      ...(reported ? [`reported ${reported.minor} ${reported.currency}`] : []),
    ].join('; '),
    ...(reported === undefined ? {} : { reportedAmount: reported }),
  };
}
