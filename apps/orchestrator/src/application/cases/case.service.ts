import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Money } from '@payments/contracts';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../../config';
import { type AdminPrincipal, scopedEndpoints } from '../../domain/admin/admin-tokens';
import {
  approve,
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
import { derivedUuid } from '../../domain/derived-id';
import { Database } from '../../persistence/database';
import { Clock } from '../../runtime/clock';
import { SagaRuntime } from '../../runtime/saga-runtime';

/**
 * Cases (issue 33), the application side of domain/cases/case.ts: opened by a sweep of the sagas
 * (an operation alerted with a concern, no trace or amount mismatch, at once; a plain alert after
 * CASE_AFTER_ALERT_HOURS), reopened when a saga says a gateway answer contradicted its decision
 * (`case-reopened`), and the people's steps: propose, approve (a second person, approver role),
 * reject a proposal, refresh and wait. An approved decision enters the saga as its flow's internal
 * `settle-by-decision` command (origin `saga`, never the commands topic), decided by the flow
 * through the shared rule; its command id derives from the case, so a retried approval is the
 * same command.
 */

/** Per flow: the saga id field and the commands a case sends it. */
const FLOW_COMMANDS: Readonly<
  Record<string, { idField: string; settle: string; refresh: string }>
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
};

/** The flows whose operations a case can settle. */
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
    amount?: Money;
    inFlight?: {
      operation: string;
      requestId: string;
      alerted?: boolean;
      concern?: string;
      unknownSince?: string;
      amount?: Money;
    };
    decided?: { requestId: string; caseId: string; reopened?: boolean };
  };
}

@Injectable()
export class CaseService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly runtime: SagaRuntime,
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
   */
  async approve(principal: AdminPrincipal, caseId: string): Promise<CaseResult> {
    const record = await this.get(principal, caseId);
    if (record === undefined) return { kind: 'not-found' };
    const step = approve(record, principal, this.clock.now().toISOString());
    if (!step.ok) return { kind: 'refused', code: step.code, message: step.message };
    if (step.followUp.kind !== 'settle') throw new Error('an approval settles');
    const settled = await this.settle(record, step.followUp.command);
    if (settled !== undefined) return settled;
    return this.step(principal, caseId, (current, now) => approve(current, principal, now));
  }

  /** Sends the saga its settle-by-decision; a refusal (settled meanwhile) comes back. */
  private async settle(record: CaseRecord, fields: SettleFields): Promise<CaseResult | undefined> {
    const flow = FLOW_COMMANDS[record.flow];
    if (flow === undefined)
      return {
        kind: 'refused',
        code: 'CASE_FLOW_NOT_SETTLEABLE',
        message: `a ${record.flow} saga takes no decisions`,
      };
    const saga = await this.saga(record.sagaId);
    if (saga === undefined) return { kind: 'not-found' };
    const commandId = derivedUuid(`case-settle:${record.caseId}`);
    await this.runtime.process([
      {
        kind: 'command',
        origin: 'saga',
        meta: {},
        raw: {
          type: flow.settle,
          commandId,
          [flow.idField]: record.sagaId,
          merchant: saga.state.merchant ?? { endpointId: record.endpointId },
          occurredAt: this.clock.now().toISOString(),
          ...fields,
        },
      },
    ]);
    const after = await this.saga(record.sagaId);
    if (after?.state.decided?.caseId === record.caseId) return undefined;
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
    const flow = FLOW_COMMANDS[record.flow];
    const saga = await this.saga(record.sagaId);
    if (flow === undefined || saga === undefined) return;
    const now = this.clock.now().toISOString();
    await this.runtime.process([
      {
        kind: 'command',
        meta: {},
        raw: {
          type: flow.refresh,
          commandId: derivedUuid(`case-refresh:${record.caseId}:${now}`),
          [flow.idField]: record.sagaId,
          merchant: saga.state.merchant ?? { endpointId: record.endpointId },
          occurredAt: now,
        },
      },
    ]);
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
  ): Promise<CaseResult> {
    return this.db.transaction(async (tx) => {
      const endpoints = scopedEndpoints(principal.scope);
      const [row] = await tx.query<CaseRow[]>(
        `SELECT id, record FROM cases WHERE id = $1 AND ($2::text[] IS NULL OR endpoint_id = ANY($2))
           FOR UPDATE`,
        [caseId, endpoints ?? null],
      );
      if (row === undefined) return { kind: 'not-found' };
      const step = decide(row.record, this.clock.now().toISOString());
      if (!step.ok) return { kind: 'refused', code: step.code, message: step.message };
      await save(tx, step.record);
      return { kind: 'ok', record: step.record };
    });
  }

  /**
   * Opens the cases that are due (an alerted operation of a flow that takes decisions with no
   * case yet) and reopens those whose saga says a gateway answer contradicted the decision.
   * Returns how many it opened and reopened.
   */
  async sweep(): Promise<{ opened: number; reopened: number }> {
    const now = this.clock.now().toISOString();
    const afterAlertMs = this.config.cases.afterAlertHours * 3_600_000;
    const alerted = await this.db.read((db) =>
      db.query<SagaRow[]>(
        `SELECT s.id, s.flow, s.endpoint_id, s.state FROM sagas s
          WHERE s.flow = ANY($1) AND s.state->'inFlight'->>'alerted' = 'true'
            AND NOT EXISTS (SELECT 1 FROM cases c WHERE c.saga_id = s.id
                             AND c.request_id::text = s.state->'inFlight'->>'requestId')
          LIMIT 200`,
        [CASE_FLOWS],
      ),
    );
    let opened = 0;
    for (const saga of alerted) {
      const op = saga.state.inFlight;
      if (op === undefined) continue;
      const concern = dueConcern(op, now, afterAlertMs);
      if (concern === undefined) continue;
      const evidence = await this.sagaEvidence(saga.id, op.requestId);
      const reported = evidence.map((e) => e.reportedAmount).find((a) => a !== undefined);
      const requested = op.amount ?? saga.state.amount;
      const record = openCase({
        caseId: derivedUuid(`case:${saga.id}:${op.requestId}`),
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
      const inserted = await this.db.transaction((tx) => save(tx, record, true));
      if (inserted) opened += 1;
    }
    const contradicted = await this.db.read((db) =>
      db.query<Array<SagaRow & { record: CaseRecord }>>(
        `SELECT s.id, s.flow, s.endpoint_id, s.state, c.record FROM sagas s
           JOIN cases c ON c.id::text = s.state->'decided'->>'caseId'
          WHERE s.state->'decided'->>'reopened' = 'true' AND c.status = 'closed' LIMIT 200`,
      ),
    );
    for (const row of contradicted) {
      const [answer] = await this.sagaEvidence(row.id, row.record.requestId, 'case-reopened');
      const record = reopen(
        row.record,
        answer ?? {
          at: now,
          source: 'gateway-answer',
          ref: 'case-reopened',
          summary: 'a gateway answer contradicted the decision',
        },
      );
      await this.db.transaction((tx) => save(tx, record));
    }
    return { opened, reopened: contradicted.length };
  }

  /** The saga's events about the request, as evidence (references and what they said). */
  private async sagaEvidence(
    sagaId: string,
    requestId: string,
    typeEndingWith?: string,
  ): Promise<CaseEvidence[]> {
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
          WHERE saga_id = $1 AND event->>'requestId' = $2
            AND ($3::text IS NULL OR event_type LIKE '%' || $3)
          ORDER BY version`,
        [sagaId, requestId, typeEndingWith ?? null],
      ),
    );
    return rows.map((r) => evidenceOf(r));
  }
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

/** Writes the case (`insertOnly`: a new one, once per saga request); whether a row was written. */
async function save(tx: EntityManager, record: CaseRecord, insertOnly = false): Promise<boolean> {
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
       insertOnly
         ? 'DO NOTHING'
         : '(id) DO UPDATE SET status = EXCLUDED.status, record = EXCLUDED.record, updated_at = EXCLUDED.updated_at'
     }
     RETURNING id`,
    values,
  );
  return rows.length > 0;
}
