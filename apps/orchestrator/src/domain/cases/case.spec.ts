import fc from 'fast-check';
import type { AdminRole, Money } from '@payments/contracts';
import { settleByDecision } from '../gateway-operation/decided-operation';
import type { OperationInFlight } from '../gateway-operation/operation-model';
import {
  approve,
  closeSettled,
  findingOfMismatch,
  withEvidence,
  type CaseActor,
  type CaseProposal,
  type CaseRecord,
  type CaseStep,
  dueConcern,
  openCase,
  propose,
  rejectProposal,
  reopen,
} from './case';

const T0 = '2026-11-29T03:00:00.000Z';
const eur = (minor: number): Money => ({ minor, currency: 'EUR' });
const alice: CaseActor = { name: 'alice', role: 'operator' };
const bob: CaseActor = { name: 'bob', role: 'approver' };
const carol: CaseActor = { name: 'carol', role: 'operator' };
const vic: CaseActor = { name: 'vic', role: 'viewer' };

const noTrace = (): CaseRecord =>
  openCase({
    caseId: '30000000-0000-4000-8000-000000000001',
    flow: 'card-payment',
    sagaId: '30000000-0000-4000-8000-0000000000aa',
    endpointId: '1234',
    requestId: '30000000-0000-4000-8000-0000000000bb',
    operation: 'return',
    concern: 'no-trace',
    at: T0,
    requestedAmount: eur(2_000),
    evidence: [
      {
        at: T0,
        source: 'saga-event',
        ref: 'outcome-unknown v7',
        summary: 'no trace of the return after the window',
      },
    ],
  });

const ok = (step: CaseStep): Extract<CaseStep, { ok: true }> => {
  if (!step.ok) throw new Error(`${step.code}: ${step.message}`);
  return step;
};
const code = (step: CaseStep) => (step.ok ? 'ok' : step.code);

describe('cases: propose and approve (four eyes)', () => {
  it('given a no-trace case, when alice proposes "not done" and bob (approver) approves, then it closes with the saga told to settle', () => {
    const proposed = ok(propose(noTrace(), alice, { decision: 'not-done' }, 'bank: no refund', T0));
    expect(proposed.record.status).toBe('proposed');
    expect(proposed.followUp).toEqual({ kind: 'none' });
    const approved = ok(approve(proposed.record, bob, T0));
    expect(approved.record).toMatchObject({
      status: 'closed',
      decided: { by: 'alice', approvedBy: 'bob', reason: 'bank: no refund' },
    });
    expect(approved.followUp).toEqual({
      kind: 'settle',
      command: {
        requestId: noTrace().requestId,
        caseId: noTrace().caseId,
        decision: 'not-done',
        decidedBy: 'alice',
        approvedBy: 'bob',
        reason: 'bank: no refund',
      },
    });
    // Both audited, with the evidence they saw.
    expect(approved.record.audit.map((a) => [a.action, a.actor, a.evidenceSeen])).toEqual([
      ['opened', 'system', 1],
      ['proposed', 'alice', 1],
      ['approved', 'bob', 1],
    ]);
  });

  it('refuses the same person approving their own proposal (CASE_SAME_PERSON), even an approver', () => {
    const byBob = ok(propose(noTrace(), bob, { decision: 'not-done' }, 'no refund', T0)).record;
    expect(code(approve(byBob, bob, T0))).toBe('CASE_SAME_PERSON');
  });

  it('requires the approver role to approve, and the operator role to propose', () => {
    const proposed = ok(propose(noTrace(), alice, { decision: 'not-done' }, 'r', T0)).record;
    expect(code(approve(proposed, carol, T0))).toBe('CASE_APPROVER_ROLE_REQUIRED');
    expect(code(propose(noTrace(), vic, { decision: 'not-done' }, 'r', T0))).toBe(
      'CASE_OPERATOR_ROLE_REQUIRED',
    );
  });

  it('one proposal at a time; a reason is required; no approval without a proposal; nothing after closing', () => {
    const proposed = ok(propose(noTrace(), alice, { decision: 'not-done' }, 'r', T0)).record;
    expect(code(propose(proposed, carol, { decision: 'done', amount: eur(1) }, 'r', T0))).toBe(
      'CASE_PROPOSAL_PENDING',
    );
    expect(code(propose(noTrace(), alice, { decision: 'not-done' }, '  ', T0))).toBe(
      'CASE_REASON_REQUIRED',
    );
    expect(code(approve(noTrace(), bob, T0))).toBe('CASE_NO_PROPOSAL');
    const closed = ok(approve(proposed, bob, T0)).record;
    expect(code(approve(closed, bob, T0))).toBe('CASE_CLOSED');
    expect(code(propose(closed, alice, { decision: 'not-done' }, 'r', T0))).toBe('CASE_CLOSED');
  });

  it('a rejected proposal opens the case again; refresh-and-wait asks the gateway and leaves it open', () => {
    const proposed = ok(propose(noTrace(), alice, { decision: 'not-done' }, 'r', T0)).record;
    expect(code(rejectProposal(proposed, carol, 'no', T0))).toBe('CASE_APPROVER_ROLE_REQUIRED');
    const rejected = ok(rejectProposal(proposed, bob, 'the bank has not answered', T0));
    expect(rejected.record.status).toBe('open');
    expect(rejected.record.proposal).toBeUndefined();
    const refresh = ok(propose(noTrace(), alice, { decision: 'refresh-and-wait' }, 'ask', T0));
    expect(refresh.followUp).toEqual({ kind: 'refresh' });
    expect(refresh.record.status).toBe('open');
  });

  it('a case is due at once for no-trace and amount-mismatch, and after the window for a plain alert', () => {
    const H = 3_600_000;
    expect(dueConcern({ alerted: true, concern: 'no-trace' }, T0, H)).toBe('no-trace');
    expect(dueConcern({ alerted: false, concern: 'no-trace' }, T0, H)).toBeUndefined();
    const since = new Date(Date.parse(T0) - H).toISOString();
    expect(dueConcern({ alerted: true, unknownSince: since }, T0, H)).toBe('alerted-too-long');
    expect(dueConcern({ alerted: true, unknownSince: since }, T0, H + 1)).toBeUndefined();
  });
});

// ---- properties ---------------------------------------------------------------------------

const roleArb = fc.constantFrom<AdminRole>('viewer', 'operator', 'approver');
const actorArb = fc.record({ name: fc.constantFrom('alice', 'bob'), role: roleArb });
const proposalArb: fc.Arbitrary<CaseProposal> = fc.oneof(
  fc.constant({ decision: 'not-done' as const }),
  fc.constant({ decision: 'refresh-and-wait' as const }),
  fc
    .integer({ min: 0, max: 1_000_000 })
    .map((m) => ({ decision: 'done' as const, amount: eur(m) })),
);
const actionArb = fc.oneof(
  fc.record({ kind: fc.constant('propose' as const), actor: actorArb, proposal: proposalArb }),
  fc.record({ kind: fc.constant('approve' as const), actor: actorArb }),
  fc.record({ kind: fc.constant('reject' as const), actor: actorArb }),
  fc.record({ kind: fc.constant('reopen' as const) }),
);

describe('cases: properties', () => {
  it('whatever people do, a settlement follows only an approval by a second person with the approver role, and no step sends the gateway a money request', () => {
    fc.assert(
      fc.property(fc.array(actionArb, { maxLength: 12 }), (actions) => {
        let record = noTrace();
        for (const action of actions) {
          if (action.kind === 'reopen') {
            const before = record;
            record = reopen(record, {
              at: T0,
              source: 'gateway-answer',
              ref: `answer-${record.evidence.length}`,
              summary: 'the gateway approved it after all',
            });
            // Reopen never rewrites: the decision and the audit so far stay as they were.
            expect(record.decided).toEqual(before.decided);
            expect(record.audit.slice(0, before.audit.length)).toEqual(before.audit);
            continue;
          }
          const step =
            action.kind === 'propose'
              ? propose(record, action.actor, action.proposal, 'because', T0)
              : action.kind === 'approve'
                ? approve(record, action.actor, T0)
                : rejectProposal(record, action.actor, 'no', T0);
          if (!step.ok) continue;
          if (step.followUp.kind === 'settle') {
            expect(action.kind).toBe('approve');
            expect(action.actor.role).toBe('approver');
            expect(step.followUp.command.approvedBy).not.toBe(step.followUp.command.decidedBy);
            expect(step.followUp.command.approvedBy).toBe(action.actor.name);
          }
          // A refresh (a status query) is the only thing a step may ask of the gateway.
          expect(['none', 'refresh', 'settle']).toContain(step.followUp.kind);
          record = step.record;
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it('the shared decision rule never sends a gateway request and publishes only settled-by-decision', () => {
    const stageArb = fc.constantFrom<OperationInFlight['stage']>(
      'requested',
      'processing',
      'action-required',
      'outcome-unknown',
    );
    fc.assert(
      fc.property(
        stageArb,
        fc.constantFrom<'done' | 'not-done'>('done', 'not-done'),
        fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: undefined }),
        fc.boolean(),
        (stage, decision, minor, sameRequest) => {
          const op: OperationInFlight = {
            operation: 'return',
            requestId: 'r-1',
            commandId: 'c-1',
            requestedAt: T0,
            stage,
          };
          const step = settleByDecision(
            {
              requestId: sameRequest ? 'r-1' : 'r-2',
              caseId: 'case-1',
              decision,
              ...(minor === undefined ? {} : { amount: eur(minor) }),
              decidedBy: 'alice',
              approvedBy: 'bob',
              reason: 'r',
            },
            op,
            {
              settledByDecision: (o, d) => ({ type: 'settled-by-decision', op: o.requestId, d }),
              decidedEffects: () => [{ type: 'release-budget' as const }],
            },
          );
          if (step.outcome === 'refused' || step.outcome === 'ignored') {
            expect(step.outcome === 'ignored' ? step.effects : []).toEqual([]);
            return;
          }
          expect(stage).toBe('outcome-unknown');
          expect(step.drafts.map((d) => d.type)).toEqual(['settled-by-decision']);
          for (const effect of step.effects)
            expect(['send-gateway-request', 'resend-gateway-request']).not.toContain(effect.type);
        },
      ),
    );
  });
});

describe('cases: the steps of the system, each one audit entry', () => {
  const answer = {
    at: T0,
    source: 'status-reply' as const,
    ref: 'declined v9',
    summary: 'the gateway declined the return',
  };

  it('evidence added is an audit entry of the system; the same evidence twice is kept once', () => {
    const once = withEvidence(noTrace(), answer);
    expect(once.evidence).toHaveLength(2);
    expect(once.audit.map((a) => [a.action, a.actor, a.evidenceSeen])).toEqual([
      ['opened', 'system', 1],
      ['evidence-added', 'system', 2],
    ]);
    expect(withEvidence(once, answer)).toBe(once);
  });

  it('a case whose operation the gateway settled closes by the system, a pending proposal lapsing; a closed case stays as it was', () => {
    const proposed = ok(propose(noTrace(), alice, { decision: 'not-done' }, 'bank', T0)).record;
    const closed = closeSettled(proposed, answer);
    expect(closed.status).toBe('closed');
    expect(closed.proposal).toBeUndefined();
    expect(closed.decided).toBeUndefined();
    expect(closed.audit.map((a) => [a.action, a.actor])).toEqual([
      ['opened', 'system'],
      ['proposed', 'alice'],
      ['evidence-added', 'system'],
      ['closed', 'system'],
    ]);
    expect(code(approve(closed, bob, T0))).toBe('CASE_CLOSED');
    const decided = ok(approve(proposed, bob, T0)).record;
    expect(closeSettled(decided, answer)).toBe(decided);
  });

  it('a person\'s steps carry their role, and a "done" its amount, into the audit', () => {
    const done = ok(
      propose(noTrace(), alice, { decision: 'done', amount: eur(1_500) }, 'statement', T0),
    );
    const approved = ok(approve(done.record, bob, T0));
    expect(approved.record.audit.slice(1)).toEqual([
      expect.objectContaining({ action: 'proposed', role: 'operator', amount: eur(1_500) }),
      expect.objectContaining({ action: 'approved', role: 'approver', amount: eur(1_500) }),
    ]);
  });

  it('a reopen adds the contradicting answer as evidence, then reopens: both audited', () => {
    const decided = ok(
      approve(ok(propose(noTrace(), alice, { decision: 'not-done' }, 'x', T0)).record, bob, T0),
    ).record;
    const reopened = reopen(decided, answer);
    expect(reopened.audit.slice(decided.audit.length).map((a) => a.action)).toEqual([
      'evidence-added',
      'reopened',
    ]);
  });
});

describe('cases: what a reconciliation mismatch means for a case', () => {
  const mismatch = (kind: Parameters<typeof findingOfMismatch>[0]['kind']) => ({
    type: 'reconciliation-mismatch' as const,
    runId: '30000000-0000-4000-8000-0000000000c1',
    sagaId: '30000000-0000-4000-8000-0000000000aa',
    flow: 'card-payment',
    endpointId: '1234',
    kind,
    ours: {
      status: 'approved',
      operation: 'sale',
      amount: eur(2_000),
      requestId: '30000000-0000-4000-8000-0000000000bb',
    },
    gateway: { status: 'declined' as const, transactionType: 'sale', amount: eur(1_900) },
    detectedAt: T0,
  });

  it.each([
    ['charged-but-reported-declined', true],
    ['reported-charged-but-not', true],
    ['operation-differs', true],
    ['amount-differs', true],
    ['no-trace-at-gateway', true],
    ['paid-twice', true],
    ['unknown-over-an-hour', false],
    ['unresolved', false],
  ] as const)('%s opens a case: %s', (kind, opens) => {
    const finding = findingOfMismatch(mismatch(kind));
    expect(finding.opensCase).toBe(opens);
    expect(finding.evidence).toMatchObject({
      source: 'reconciliation',
      reportedAmount: eur(1_900),
    });
    expect(finding.evidence.summary).toContain(`reconciliation ${kind}`);
    expect(finding.evidence.summary).toContain('ours: approved sale 2000 EUR');
    expect(finding.evidence.summary).toContain('gateway: declined sale 1900 EUR');
  });
});
