import type {
  AdminRole,
  CaseAuditStep,
  MismatchKind,
  Money,
  ReconciliationMismatch,
} from '@payments/contracts';

/**
 * Cases: the one place where a person decides (issue 33). A case belongs to a saga and one of its
 * operations (the request id), names why a person must look, holds the evidence gathered
 * (references and copies of gateway answers, never card data), and is closed by a decision of two
 * people: one proposes with a reason (operator role), another with the approver role approves.
 * Pure rules: no I/O; the application stores the case and sends the saga its command.
 *
 * Truth about money (DESIGN.md): a decision never sends the gateway anything, and the saga
 * settles it with its own `settled-by-decision` event (never `approved`, `paid-out` …).
 * "Refresh and wait" is no decision: it asks the gateway again and leaves the case open.
 */

/** Why a person must look at the operation. */
export type CaseConcern =
  | 'no-trace'
  | 'amount-mismatch'
  | 'reconciliation-mismatch'
  /** The outcome was alerted (unknown for the alert window) and stayed so CASE_AFTER_ALERT_HOURS. */
  | 'alerted-too-long';

export const CASE_CONCERNS: readonly CaseConcern[] = [
  'no-trace',
  'amount-mismatch',
  'reconciliation-mismatch',
  'alerted-too-long',
];

/** open → proposed → closed (approved); a proposal rejected goes back to open; reopened by a contradiction. */
export type CaseStatus = 'open' | 'proposed' | 'closed' | 'reopened';

/** What a person proposes. `refresh-and-wait` moves nothing: the gateway is asked again. */
export type CaseProposal =
  | { readonly decision: 'done'; readonly amount: Money; readonly amountWhy?: string }
  | { readonly decision: 'not-done' }
  | { readonly decision: 'refresh-and-wait' };

export type MoneyDecision = Exclude<CaseProposal, { decision: 'refresh-and-wait' }>;

/** One piece of evidence: what the saga's events, the gateway or reconciliation said, and when. */
export interface CaseEvidence {
  readonly at: string;
  readonly source: 'saga-event' | 'status-reply' | 'callback' | 'reconciliation' | 'gateway-answer';
  /** A reference: an event type and version, a reconciliation run and row … */
  readonly ref: string;
  readonly summary: string;
  readonly reportedAmount?: Money;
}

export interface CaseActor {
  readonly name: string;
  readonly role: AdminRole;
}

/** One line of the case's audit: who did what, why, and how much evidence they saw. */
export interface CaseAuditEntry {
  readonly at: string;
  /** A person's token name, or `system` for the automatic steps. */
  readonly actor: string;
  /** The person's role (absent: `system`). */
  readonly role?: AdminRole;
  /** Each step is also one row of `admin_audit` and one `case-step-audited` event. */
  readonly action: CaseAuditStep;
  readonly decision?: CaseProposal['decision'];
  /** A "done" decision: the amount the gateway did it at. */
  readonly amount?: Money;
  readonly reason?: string;
  /** The evidence items the person had before them (the case's evidence count then). */
  readonly evidenceSeen: number;
}

export interface PendingProposal {
  readonly proposal: MoneyDecision;
  readonly reason: string;
  readonly by: string;
  readonly at: string;
}

export interface CaseDecided extends PendingProposal {
  readonly approvedBy: string;
  readonly approvedAt: string;
}

export interface CaseRecord {
  readonly caseId: string;
  readonly flow: string;
  readonly sagaId: string;
  readonly endpointId: string;
  readonly requestId: string;
  readonly operation: string;
  readonly concern: CaseConcern;
  readonly status: CaseStatus;
  readonly requestedAmount?: Money;
  readonly reportedAmount?: Money;
  readonly evidence: readonly CaseEvidence[];
  readonly proposal?: PendingProposal;
  readonly decided?: CaseDecided;
  readonly audit: readonly CaseAuditEntry[];
  readonly openedAt: string;
  readonly updatedAt: string;
}

/** Why a person's step on a case is refused (the admin API's 409 codes). */
export type CaseRefusalCode =
  | 'CASE_OPERATOR_ROLE_REQUIRED'
  | 'CASE_APPROVER_ROLE_REQUIRED'
  | 'CASE_SAME_PERSON'
  | 'CASE_CLOSED'
  | 'CASE_REOPENED'
  | 'CASE_PROPOSAL_PENDING'
  | 'CASE_NO_PROPOSAL'
  | 'CASE_REASON_REQUIRED'
  | 'CASE_DECISION_INVALID';

export interface CaseRefusal {
  readonly ok: false;
  readonly code: CaseRefusalCode;
  readonly message: string;
}

/** What the application does after a step: nothing more, ask the gateway again, or settle the saga. */
export type CaseFollowUp =
  | { readonly kind: 'none' }
  | { readonly kind: 'refresh' }
  | { readonly kind: 'settle'; readonly command: SettleFields };

/** The fields of the saga's `<prefix>settle-by-decision` command (the contracts' DECISION_FIELDS). */
export interface SettleFields {
  readonly requestId: string;
  readonly caseId: string;
  readonly decision: 'done' | 'not-done';
  readonly amount?: Money;
  readonly amountWhy?: string;
  readonly decidedBy: string;
  readonly approvedBy: string;
  readonly reason: string;
}

export type CaseStep =
  { readonly ok: true; readonly record: CaseRecord; readonly followUp: CaseFollowUp } | CaseRefusal;

const refuse = (code: CaseRefusalCode, message: string): CaseRefusal => ({
  ok: false,
  code,
  message,
});

const RANK: Readonly<Record<AdminRole, number>> = { viewer: 0, operator: 1, approver: 2 };

/** A new case about one operation of a saga, with the evidence that raised it. */
export function openCase(facts: {
  readonly caseId: string;
  readonly flow: string;
  readonly sagaId: string;
  readonly endpointId: string;
  readonly requestId: string;
  readonly operation: string;
  readonly concern: CaseConcern;
  readonly at: string;
  readonly evidence: readonly CaseEvidence[];
  readonly requestedAmount?: Money;
  readonly reportedAmount?: Money;
}): CaseRecord {
  const { at, ...rest } = facts;
  return {
    ...rest,
    status: 'open',
    audit: [{ at, actor: 'system', action: 'opened', evidenceSeen: facts.evidence.length }],
    openedAt: at,
    updatedAt: at,
  };
}

/**
 * Evidence gathered later (a status reply, a reconciliation finding), audited as a step of the
 * system; never changes a decision. The same evidence (its `ref`) twice is kept once.
 */
export function withEvidence(record: CaseRecord, evidence: CaseEvidence): CaseRecord {
  if (record.evidence.some((e) => e.ref === evidence.ref)) return record;
  return {
    ...record,
    evidence: [...record.evidence, evidence],
    audit: [
      ...record.audit,
      {
        at: evidence.at,
        actor: 'system',
        action: 'evidence-added',
        reason: evidence.summary,
        evidenceSeen: record.evidence.length + 1,
      },
    ],
    updatedAt: evidence.at,
  };
}

/**
 * The saga settled the operation by the gateway's evidence (a status reply, a callback, a
 * reconciliation run's answer) while the case was open or proposed: nobody needs to decide any
 * more; the case closes, a step of the system, and a pending proposal lapses. A case already
 * closed or reopened is left as it is.
 */
export function closeSettled(record: CaseRecord, evidence: CaseEvidence): CaseRecord {
  if (record.status === 'closed' || record.status === 'reopened') return record;
  const withIt = withEvidence(record, evidence);
  const { proposal: _p, ...rest } = withIt;
  return {
    ...rest,
    status: 'closed',
    audit: [
      ...withIt.audit,
      {
        at: evidence.at,
        actor: 'system',
        action: 'closed',
        reason: `settled by the gateway's evidence: ${evidence.summary}`,
        evidenceSeen: withIt.evidence.length,
      },
    ],
    updatedAt: evidence.at,
  };
}

function stillOpen(record: CaseRecord): CaseRefusal | undefined {
  if (record.status === 'closed')
    return refuse('CASE_CLOSED', `case ${record.caseId} was decided already`);
  if (record.status === 'reopened')
    return refuse(
      'CASE_REOPENED',
      `case ${record.caseId}: the gateway contradicted the decision; the saga's history stands, so it is settled with finance outside the saga`,
    );
  return undefined;
}

/**
 * A person proposes. `refresh-and-wait` (operator role) asks the gateway again and leaves the case
 * open; a money decision ("done" at the gateway's amount, "not done") waits for a second person.
 */
export function propose(
  record: CaseRecord,
  actor: CaseActor,
  proposal: CaseProposal,
  reason: string,
  now: string,
): CaseStep {
  if (RANK[actor.role] < RANK.operator)
    return refuse(
      'CASE_OPERATOR_ROLE_REQUIRED',
      `${actor.name} is a ${actor.role}; proposing needs the operator role`,
    );
  const closed = stillOpen(record);
  if (closed) return closed;
  if (reason.trim().length === 0)
    return refuse('CASE_REASON_REQUIRED', 'a proposal says why (the evidence it rests on)');
  const entry = (action: CaseAuditEntry['action']): CaseAuditEntry => ({
    at: now,
    actor: actor.name,
    role: actor.role,
    action,
    decision: proposal.decision,
    ...(proposal.decision === 'done' ? { amount: proposal.amount } : {}),
    reason,
    evidenceSeen: record.evidence.length,
  });
  if (proposal.decision === 'refresh-and-wait')
    return {
      ok: true,
      record: { ...record, audit: [...record.audit, entry('refresh-requested')], updatedAt: now },
      followUp: { kind: 'refresh' },
    };
  if (record.status === 'proposed')
    return refuse(
      'CASE_PROPOSAL_PENDING',
      `case ${record.caseId} has a proposal by ${record.proposal?.by ?? 'someone'} awaiting approval or rejection`,
    );
  if (
    proposal.decision === 'done' &&
    (!Number.isSafeInteger(proposal.amount.minor) || proposal.amount.minor < 0)
  )
    return refuse('CASE_DECISION_INVALID', '"done" names the gateway\'s amount in minor units');
  return {
    ok: true,
    record: {
      ...record,
      status: 'proposed',
      proposal: { proposal, reason, by: actor.name, at: now },
      audit: [...record.audit, entry('proposed')],
      updatedAt: now,
    },
    followUp: { kind: 'none' },
  };
}

/**
 * A second person approves the pending proposal: a different person, with the approver role.
 * The case closes and the saga is told to settle by decision.
 */
export function approve(record: CaseRecord, actor: CaseActor, now: string): CaseStep {
  const closed = stillOpen(record);
  if (closed) return closed;
  const pending = record.proposal;
  if (record.status !== 'proposed' || pending === undefined)
    return refuse('CASE_NO_PROPOSAL', `case ${record.caseId} has no proposal to approve`);
  if (pending.by === actor.name)
    return refuse(
      'CASE_SAME_PERSON',
      `${actor.name} proposed this decision; a different person must approve it (four eyes)`,
    );
  if (actor.role !== 'approver')
    return refuse(
      'CASE_APPROVER_ROLE_REQUIRED',
      `${actor.name} is a ${actor.role}; approving a decision needs the approver role`,
    );
  const decided: CaseDecided = { ...pending, approvedBy: actor.name, approvedAt: now };
  const { proposal: _p, ...rest } = record;
  return {
    ok: true,
    record: {
      ...rest,
      status: 'closed',
      decided,
      audit: [
        ...record.audit,
        {
          at: now,
          actor: actor.name,
          role: actor.role,
          action: 'approved',
          decision: pending.proposal.decision,
          ...(pending.proposal.decision === 'done' ? { amount: pending.proposal.amount } : {}),
          reason: pending.reason,
          evidenceSeen: record.evidence.length,
        },
      ],
      updatedAt: now,
    },
    followUp: { kind: 'settle', command: settleFields(record, decided) },
  };
}

/** The pending proposal rejected (the approver role, or its proposer withdrawing it): open again. */
export function rejectProposal(
  record: CaseRecord,
  actor: CaseActor,
  reason: string,
  now: string,
): CaseStep {
  const closed = stillOpen(record);
  if (closed) return closed;
  const pending = record.proposal;
  if (record.status !== 'proposed' || pending === undefined)
    return refuse('CASE_NO_PROPOSAL', `case ${record.caseId} has no proposal to reject`);
  if (actor.role !== 'approver' && actor.name !== pending.by)
    return refuse(
      'CASE_APPROVER_ROLE_REQUIRED',
      `${actor.name} is a ${actor.role}; rejecting another's proposal needs the approver role`,
    );
  const { proposal: _p, ...rest } = record;
  return {
    ok: true,
    record: {
      ...rest,
      status: 'open',
      audit: [
        ...record.audit,
        {
          at: now,
          actor: actor.name,
          role: actor.role,
          action: 'proposal-rejected',
          decision: pending.proposal.decision,
          reason,
          evidenceSeen: record.evidence.length,
        },
      ],
      updatedAt: now,
    },
    followUp: { kind: 'none' },
  };
}

/**
 * The saga said a later gateway answer contradicts the decision (`case-reopened`): the case is
 * open again for a person, with that answer as evidence. The decision and its audit stay as they
 * were (history is not rewritten).
 */
export function reopen(record: CaseRecord, evidence: CaseEvidence): CaseRecord {
  const withIt = withEvidence(record, evidence);
  if (record.status === 'reopened') return withIt;
  return {
    ...withIt,
    status: 'reopened',
    audit: [
      ...withIt.audit,
      {
        at: evidence.at,
        actor: 'system',
        action: 'reopened',
        reason: evidence.summary,
        evidenceSeen: withIt.evidence.length,
      },
    ],
    updatedAt: evidence.at,
  };
}

/** The saga's command fields of an approved decision. */
export function settleFields(record: CaseRecord, decided: CaseDecided): SettleFields {
  const p = decided.proposal;
  return {
    requestId: record.requestId,
    caseId: record.caseId,
    decision: p.decision,
    ...(p.decision === 'done'
      ? {
          amount: p.amount,
          ...(p.amountWhy === undefined ? {} : { amountWhy: p.amountWhy }),
        }
      : {}),
    decidedBy: decided.by,
    approvedBy: decided.approvedBy,
    reason: decided.reason,
  };
}

/**
 * The concern of an alerted operation, when a case is due: its named concern at once (no trace,
 * amount mismatch); an alert without one once it has lasted `afterAlertMs` (undefined: not yet).
 */
export function dueConcern(
  op: { readonly alerted?: boolean; readonly concern?: string; readonly unknownSince?: string },
  now: string,
  afterAlertMs: number,
): CaseConcern | undefined {
  if (op.alerted !== true) return undefined;
  if (op.concern === 'no-trace' || op.concern === 'amount-mismatch') return op.concern;
  const since = op.unknownSince === undefined ? undefined : Date.parse(op.unknownSince);
  if (since === undefined || Number.isNaN(since)) return undefined;
  return Date.parse(now) - since >= afterAlertMs ? 'alerted-too-long' : undefined;
}

/**
 * Reconciliation's mismatches that open a case: the saga reported the operation settled and the
 * gateway's answer about it says otherwise (our approved, its declined; another operation; another
 * amount; no such order; a second order under our client order id). The saga cannot settle those
 * by a rule (its history stands), so a person must. An operation still unknown is not among them:
 * its case is the alert's (the sweep's), and a finding about it is added to that case as evidence.
 */
export const CASE_MISMATCH_KINDS: ReadonlySet<MismatchKind> = new Set<MismatchKind>([
  'charged-but-reported-declined',
  'reported-charged-but-not',
  'operation-differs',
  'amount-differs',
  'no-trace-at-gateway',
  'paid-twice',
]);

/** What a reconciliation mismatch means for a case: the evidence it holds, and whether it opens one. */
export function findingOfMismatch(mismatch: ReconciliationMismatch): {
  readonly evidence: CaseEvidence;
  /** The saga reported the operation settled: the finding opens a case of its own. */
  readonly opensCase: boolean;
} {
  const { ours, gateway, otherOrder } = mismatch;
  const money = (m: Money | undefined) => (m === undefined ? '' : ` ${m.minor} ${m.currency}`);
  const side = (label: string, g: typeof gateway) =>
    g === undefined
      ? `${label}: no answer`
      : `${label}: ${g.status}${g.transactionType === undefined ? '' : ` ${g.transactionType}`}${money(g.amount)}${g.gatewayOrderId === undefined ? '' : ` order ${g.gatewayOrderId}`}${g.errorCode === undefined ? '' : ` code ${g.errorCode}`}`;
  const summary = [
    `reconciliation ${mismatch.kind}`,
    `ours: ${ours.status} ${ours.operation}${money(ours.amount)}`,
    side('gateway', gateway),
    ...(otherOrder === undefined ? [] : [side('other order', otherOrder)]),
  ].join('; ');
  return {
    evidence: {
      at: mismatch.detectedAt,
      source: 'reconciliation',
      ref: `reconciliation ${mismatch.runId} ${mismatch.kind} ${ours.requestId ?? ours.operation}`,
      summary,
      ...(gateway?.amount === undefined ? {} : { reportedAmount: gateway.amount }),
    },
    opensCase: CASE_MISMATCH_KINDS.has(mismatch.kind),
  };
}
