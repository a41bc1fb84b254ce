/**
 * A PAN-eligibility check the gateway never cleared, settled by a decision of two people (a case,
 * issue 33 item 3) by the shared rule (domain/gateway-operation/decided-operation.ts,
 * single-operation.ts's settlementDecision): "not done" only (eligible or not is the gateway's
 * answer, which nobody gives in its place); nothing sent to the gateway; a later gateway answer
 * reopens the case and never rewrites a published event.
 */
import fc from 'fast-check';
import type { PanEligibilityEvent } from '@payments/contracts';
import { statusReply } from '../../../../test/kits/flow.kit';
import * as checks from '../../../../test/kits/pan-eligibility.kit';
import * as payouts from '../../../../test/kits/payout.kit';
import type { CheckInput, CheckState } from './model';

const CASE_ID = '20000000-0000-4000-8000-00000000ca5f';

const decided =
  (decision: 'done' | 'not-done', requestId?: string) =>
  (state: CheckState): CheckInput => {
    if (state.status === 'initial') throw new Error('no check');
    return {
      kind: 'command',
      command: {
        type: 'pan-eligibility-settle-by-decision',
        commandId: payouts.uuid(),
        checkId: state.checkId,
        merchant: state.merchant,
        occurredAt: payouts.T0,
        requestId: requestId ?? state.inFlight?.requestId ?? payouts.uuid(),
        caseId: CASE_ID,
        decision,
        ...(decision === 'done' ? { amount: { minor: 0, currency: 'EUR' } } : {}),
        decidedBy: 'alice',
        approvedBy: 'bob',
        reason: 'no trace of the check at the gateway',
      },
    };
  };

const unknownCheck = () => {
  const id = payouts.uuid();
  const world = checks.panEligibilityWorld();
  world.given(
    checks.panEligibility(id),
    checks.eligibilityAnswer({ kind: 'unknown', reason: 'timeout' }),
  );
  return { world, id };
};

describe('a PAN-eligibility check settled by decision (a case)', () => {
  it('given a check whose outcome is unknown, when "not done" is decided, then settled-by-decision, failed, nothing sent', () => {
    const { world } = unknownCheck();
    world
      .when(decided('not-done'))
      .then([
        {
          type: 'pan-eligibility-settled-by-decision',
          operation: 'pan-eligibility',
          decision: 'not-done',
          caseId: CASE_ID,
          decidedBy: 'alice',
          approvedBy: 'bob',
        },
      ])
      .thenStatus('failed');
    expect(world.types()).not.toContain('pan-eligibility-answered');
    // Nothing asked of the gateway: the decision's effects only drop the check's timers.
    const { world: again } = unknownCheck();
    const decision = again.apply(decided('not-done'));
    expect(decision.outcome).toBe('accepted');
    expect(decision.effects.map((e) => e.type)).not.toContain('send-gateway-request');
  });

  it('"done" is refused: whether the card is eligible is the gateway\'s answer alone', () => {
    const { world } = unknownCheck();
    world.when(decided('done')).thenRejected('CASE_DECISION_INVALID').thenStatus('checking');
  });

  it('refused while the check is still processing, or about another request', () => {
    const id = payouts.uuid();
    const world = checks.panEligibilityWorld().given(checks.panEligibility(id));
    world.when(decided('not-done')).thenRejected('CASE_OPERATION_SETTLED');
    const { world: unknown } = unknownCheck();
    unknown.when(decided('not-done', payouts.uuid())).thenRejected('CASE_OPERATION_SETTLED');
  });

  it('a later gateway answer reopens the case with an alert, once; the decision stands', () => {
    const { world, id } = unknownCheck();
    const requestId = (world.state(id) as { inFlight?: { requestId: string } }).inFlight?.requestId;
    world.when(decided('not-done')).thenStatus('failed');
    const lateAnswer = (s: CheckState): CheckInput => {
      const input = statusReply(s, id, { status: 'approved', requestSerial: 'sn-p' }, [
        'pan-eligibility',
      ]);
      return input.result.operation === 'status'
        ? { ...input, result: { ...input.result, subjectRequestId: requestId ?? '' } }
        : input;
    };
    world
      .when(lateAnswer)
      .then([{ type: 'pan-eligibility-case-reopened', caseId: CASE_ID, alert: true }])
      .thenStatus('failed');
    expect(world.apply(lateAnswer).outcome).toBe('ignored');
  });
});

describe('PAN eligibility decisions: properties (the case rules)', () => {
  const stepArb = fc.constantFrom(
    'unknown' as const,
    'decide-not-done' as const,
    'decide-done' as const,
    'late-approved' as const,
    'late-declined' as const,
  );

  it('whatever is decided and answered after: no decision sends a gateway request, no ordinary answer without the gateway, published events never change', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 8 }), (steps) => {
        const id = payouts.uuid();
        const world = checks.panEligibilityWorld().given(checks.panEligibility(id));
        let requestId: string | undefined = (
          world.state(id) as { inFlight?: { requestId: string } }
        ).inFlight?.requestId;
        for (const step of steps) {
          const before: PanEligibilityEvent[] = world.events(id).map((e) => ({ ...e }));
          const state = world.state(id);
          requestId =
            (state as { inFlight?: { requestId: string } }).inFlight?.requestId ?? requestId;
          const input =
            step === 'unknown'
              ? checks.eligibilityAnswer({ kind: 'unknown', reason: 'timeout' })
              : step === 'decide-not-done'
                ? decided('not-done', requestId)
                : step === 'decide-done'
                  ? decided('done', requestId)
                  : (s: CheckState): CheckInput => {
                      const reply = statusReply(
                        s,
                        id,
                        {
                          status: step === 'late-approved' ? 'approved' : 'declined',
                          requestSerial: 'sn-p',
                        },
                        ['pan-eligibility'],
                      );
                      return {
                        ...reply,
                        result: { ...reply.result, subjectRequestId: requestId ?? '' },
                      };
                    };
          const decision = world.apply(input, id);
          // Published history is never rewritten, whatever comes.
          expect(world.events(id).slice(0, before.length)).toEqual(before);
          if (step === 'decide-not-done' || step === 'decide-done') {
            // A decision never asks the gateway anything, and says only settled-by-decision.
            expect(decision.effects.map((e) => e.type)).not.toContain('send-gateway-request');
            if (decision.outcome === 'accepted')
              expect(decision.events.map((e) => e.type)).toEqual([
                'pan-eligibility-settled-by-decision',
              ]);
            if (step === 'decide-done') expect(decision.outcome).toBe('rejected');
          }
          // An ordinary answer only follows a gateway input.
          if (step === 'decide-not-done' || step === 'decide-done')
            expect(decision.events.map((e) => e.type)).not.toContain('pan-eligibility-answered');
        }
      }),
      { numRuns: 300 },
    );
  });
});
