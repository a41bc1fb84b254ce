import { z } from 'zod';
import { Instant, Money, Uuid } from './primitives';

/**
 * The operators' admin API: what an operator may ask of a saga, and the audit event
 * each action leaves on `payments.admin.audit.v1` (key: the saga id). The action itself enters as an
 * ordinary command on `payments.commands.v1`, in the same transaction as its audit.
 */
export const AdminAction = z.enum([
  'refresh-status',
  'resolve-unknown',
  'approve',
  'reject',
  'pause',
  'resume',
  'cancel',
]);
export type AdminAction = z.infer<typeof AdminAction>;
export const ADMIN_ACTIONS: readonly AdminAction[] = AdminAction.options;

/**
 * Viewers read; operators read and act (refresh, approve once, reject, pause, resume, cancel);
 * approvers do what operators do and give the second approval a four-eyes payout needs.
 */
export const AdminRole = z.enum(['viewer', 'operator', 'approver']);
export type AdminRole = z.infer<typeof AdminRole>;
export const ADMIN_ROLES: readonly AdminRole[] = AdminRole.options;

/** A gateway endpoint id: the merchant as the gateway and every command name it. */
const EndpointId = z.string().regex(/^\d{1,19}$/, 'a gateway endpoint id');

/**
 * Which merchants a token may see and act on: all of them, or a list of merchant endpoints (the
 * merchant's gateway endpoint id, as `merchant.endpointId` of every command). A saga of another
 * merchant does not exist for the token (404; lists never show it).
 */
export const AdminScope = z.union([
  z.literal('all'),
  z.strictObject({ endpoints: z.array(EndpointId).min(1).max(1000) }),
]);
export type AdminScope = z.infer<typeof AdminScope>;

/** GET /admin/whoami: who the bearer token names, its role and its scope. */
export interface AdminIdentity {
  readonly name: string;
  readonly role: AdminRole;
  readonly scope: AdminScope;
}

/** A stored admin token as `GET /admin/tokens` lists it (never the token, never its hash). */
export interface AdminTokenListing {
  readonly id: string;
  readonly name: string;
  readonly role: AdminRole;
  readonly scope: AdminScope;
  readonly createdAt: string;
  readonly createdBy: string;
  readonly revokedAt: string | null;
  readonly revokedBy: string | null;
}

/** One operator action: who (the token's name and role), why, on which saga, and the command sent. */
export const AdminActionAudited = z.strictObject({
  type: z.literal('admin-action-audited'),
  auditId: Uuid,
  actor: z.string().min(1).max(128),
  role: AdminRole,
  action: AdminAction,
  sagaId: Uuid,
  flow: z.string().min(1).max(64),
  reason: z.string().min(1).max(1024),
  commandId: Uuid,
  commandType: z.string().min(1).max(64),
  occurredAt: Instant,
});
export type AdminActionAudited = z.infer<typeof AdminActionAudited>;

/** The steps of a case (issue 33) that the admin audit records, each one event. */
export const CaseAuditStep = z.enum([
  'opened',
  'evidence-added',
  'proposed',
  'refresh-requested',
  'approved',
  'proposal-rejected',
  'closed',
  'reopened',
]);
export type CaseAuditStep = z.infer<typeof CaseAuditStep>;
export const CASE_AUDIT_STEPS: readonly CaseAuditStep[] = CaseAuditStep.options;

/**
 * One step of a case (issue 33) on `payments.admin.audit.v1` (key: the saga id), with its row in
 * `admin_audit` (written in the same transaction as the case): who (a person's token name and
 * role, or `system` for the automatic steps: opened, evidence added, closed by evidence,
 * reopened), what, why, the decision proposed or approved and how many evidence items the person
 * had before them. An approval names the saga's `settle-by-decision` command it sent, when the
 * saga takes one.
 */
export const CaseStepAudited = z.strictObject({
  type: z.literal('case-step-audited'),
  auditId: Uuid,
  caseId: Uuid,
  /** The step's place in the case's audit, from 0 (steps of one case come in this order). */
  index: z.number().int().min(0),
  step: CaseAuditStep,
  actor: z.string().min(1).max(128),
  role: z.union([AdminRole, z.literal('system')]),
  sagaId: Uuid,
  flow: z.string().min(1).max(64),
  requestId: Uuid,
  concern: z.string().min(1).max(64),
  decision: z.enum(['done', 'not-done', 'refresh-and-wait']).optional(),
  /** A "done" decision: the amount the gateway did it at. */
  amount: Money.optional(),
  reason: z.string().min(1).max(1024),
  evidenceSeen: z.number().int().min(0),
  commandId: Uuid.optional(),
  commandType: z.string().min(1).max(64).optional(),
  occurredAt: Instant,
});
export type CaseStepAudited = z.infer<typeof CaseStepAudited>;

/** Everything `payments.admin.audit.v1` carries. */
export const AdminAuditEvent = z.discriminatedUnion('type', [AdminActionAudited, CaseStepAudited]);
export type AdminAuditEvent = z.infer<typeof AdminAuditEvent>;

// ---- The admin API's read responses (the orchestrator answers them, the console reads them) ----

export interface SagaSummary {
  readonly id: string;
  readonly flow: string;
  readonly kind: string | null;
  readonly status: string;
  readonly endpointId: string;
  /** The merchant's order id (client_orderid) when the flow has one. */
  readonly merchantOrderId: string | null;
  readonly version: number;
  readonly amount: { readonly minor: number; readonly currency: string } | null;
  readonly unknownSince: string | null;
  /** A registered two-step payout: when its approval window closes. */
  readonly approvalDeadline: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface SagaPage {
  readonly items: SagaSummary[];
  /** Pass as `cursor` for the next page; absent on the last one. */
  readonly nextCursor?: string;
}

/**
 * The money positions of a saga that keeps them (card payments), minor units. `remaining` is what
 * the payer is still charged or held for: the captured sum (the authorized one while nothing was
 * captured and the hold stands) less what was returned.
 */
export interface MoneyFigures {
  readonly currency: string;
  readonly authorized: number;
  readonly captured: number;
  readonly returned: number;
  readonly remaining: number;
}

/** What the saga's history says of one gateway request (see SagaDetail.gatewayRequests). */
export interface GatewayRequestAnswer {
  readonly result: string;
  readonly serial: string | null;
  readonly code: string | null;
  readonly at: string;
}

export interface SagaDetail {
  readonly saga: SagaSummary & { readonly state: unknown };
  /** Absent for flows that keep no money positions (payouts carry their amount in the summary). */
  readonly money: MoneyFigures | null;
  /**
   * The admin actions this saga offers now, to this token: derived from its state by its flow's
   * own rules (a paid payout offers no approve; a cancelled schedule nothing). Any other action is
   * refused with 409 `ACTION_NOT_ALLOWED_IN_STATE` (or the flow's own code) before any command.
   */
  readonly actions: AdminAction[];
  readonly history: Array<{ version: number; type: string; occurredAt: string; event: unknown }>;
  readonly events: Array<{
    id: string;
    type: string;
    publishedAt: string | null;
    sequence: string;
  }>;
  /** The gateway requests as first sent (sealed cards left out), each with its answer so far. */
  readonly gatewayRequests: Array<{
    requestId: string;
    operation: string;
    createdAt: string;
    request: unknown;
    /**
     * The latest event of the saga's history about this request (its `requestId`): what the
     * gateway's answers made of it (`approved`, `declined`, `outcome-unknown`, …), the gateway's
     * serial and code when named, and when. Null while nothing was recorded about it (a status
     * request is about its subject: its answer shows on the subject's request).
     */
    answer: GatewayRequestAnswer | null;
  }>;
  readonly audit: Array<{
    id: string;
    at: string;
    actor: string;
    role: string;
    action: string;
    reason: string;
    /** Null for a case's step that sent no command. */
    commandId: string | null;
    commandType: string | null;
    /** A case's step (`case-opened`, `case-proposed` …): its case; else null. */
    caseId?: string | null;
  }>;
}

/**
 * One event of `payments.events.v1` as the admin API's live stream shows it: a projection that
 * names only the saga, the event's type, version and time and, where it carries one, its amount.
 * Nothing else of the event is copied, so no card field can reach a stream.
 */
export interface LiveEvent {
  /** `<partition>-<offset>` on the event topic (unique, for de-duplication). */
  readonly id: string;
  readonly type: string;
  readonly sagaId: string;
  readonly version: number;
  readonly occurredAt: string;
  readonly amount: { readonly minor: number; readonly currency: string } | null;
  /** The event says money moved (approved, captured, returned, paid-out, transferred). */
  readonly moneyMoved: boolean;
}

/** One minute of the live counts: events, and money moved by currency (minor units). */
export interface LiveMinute {
  /** The minute's start (ISO 8601, UTC). */
  readonly minute: string;
  readonly events: number;
  readonly moved: Readonly<Record<string, number>>;
}

export interface LiveMinutes {
  /** Counted since this time (the answering replica's stream started then). */
  readonly since: string;
  readonly minutes: LiveMinute[];
}

/** A reconciliation run as the admin API lists it, with its counts so far. */
export interface ReconciliationRunSummary {
  readonly id: string;
  /** `scheduled` or `requested`. */
  readonly trigger: string;
  readonly requestedBy: string;
  readonly from: string;
  readonly to: string;
  readonly endpointId: string | null;
  /** `running` or `completed`. */
  readonly status: string;
  readonly startedAt: string;
  readonly completedAt: string | null;
  /** Operations checked (with a verdict so far) and how many of them differ. */
  readonly checked: number;
  readonly mismatched: number;
}

/** One operation a run found differing (details on `payments.reconciliation.v1` and the saga). */
export interface ReconciliationMismatchRow {
  readonly sagaId: string;
  readonly flow: string;
  readonly endpointId: string;
  /** A MISMATCH_KINDS value. */
  readonly kind: string;
}

export interface ReconciliationRunDetail {
  readonly run: ReconciliationRunSummary;
  readonly mismatches: ReconciliationMismatchRow[];
}

/**
 * `POST /admin/cases/:id/propose` (issue 33): what a person proposes for a case, with the reason
 * (the evidence it rests on). "done" names the amount the gateway did it at (for an amount
 * mismatch, the gateway's, with `amountWhy`); "not-done" none; "refresh-and-wait" asks the
 * gateway again and leaves the case open. A money decision waits for a second person with the
 * approver role (`POST /admin/cases/:id/approve`).
 */
export const CaseProposeBody = z.discriminatedUnion('decision', [
  z.strictObject({
    decision: z.literal('done'),
    amount: Money,
    amountWhy: z.string().trim().min(1).max(1024).optional(),
    reason: z.string().trim().min(1).max(1024),
  }),
  z.strictObject({
    decision: z.literal('not-done'),
    reason: z.string().trim().min(1).max(1024),
  }),
  z.strictObject({
    decision: z.literal('refresh-and-wait'),
    reason: z.string().trim().min(1).max(1024),
  }),
]);
export type CaseProposeBody = z.infer<typeof CaseProposeBody>;
export const CASE_DECISIONS = ['done', 'not-done', 'refresh-and-wait'] as const;

/** `POST /admin/cases/:id/reject-proposal`: why the pending proposal is rejected. */
export const CaseRejectBody = z.strictObject({ reason: z.string().trim().min(1).max(1024) });
