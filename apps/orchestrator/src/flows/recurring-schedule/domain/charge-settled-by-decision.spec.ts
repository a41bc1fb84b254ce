/**
 * A gateway charge of a registered schedule whose outcome the gateway never cleared (reported by a
 * verified callback, alerted: another amount, or no answer), settled by a decision of two people (a
 * case, issue 33) by the shared rule (domain/gateway-operation/decided-operation.ts): "done at X"
 * (the cycle counts as charged at X) or "not done" (the cycle counts as not charged), as
 * `schedule-charge-settled-by-decision`, never `gateway-cycle-charged`; nothing sent to the
 * gateway; a later gateway answer contradicting it reopens the case and never rewrites history.
 */
import fc from 'fast-check';
import type {
  GatewayResult,
  ScheduleEvent,
  SettleScheduleChargeByDecisionCommand,
} from '@payments/contracts';
import { MERCHANT, SCHEDULE_ID, testUuid } from '@payments/contracts/testing';
import * as schedules from '../../../../test/kits/recurring-schedule.kit';
import { addMs } from '../../../domain/decision';
import { chargeSubjectId, expectedChargeSubjectId } from './gateway-charged';
import type { ScheduleInput } from './decide';
import type { ScheduleState } from './state';

const CASE_ID = '20000000-0000-4000-8000-00000000ca5d';
const ORDER = '1000007';
const SUBJECT = chargeSubjectId(SCHEDULE_ID, ORDER);
const HOUR = 3_600_000;
const eur = (minor: number) => ({ minor, currency: 'EUR' });
const T1 = addMs(schedules.T0, 5_000);

/** The case service's command about the charge (or `requestId`). */
const decided = (
  decision: 'done' | 'not-done',
  over: Partial<SettleScheduleChargeByDecisionCommand> = {},
): ScheduleInput => {
  const command: SettleScheduleChargeByDecisionCommand = {
    type: 'schedule-charge-settle-by-decision',
    commandId: testUuid(),
    scheduleId: SCHEDULE_ID,
    merchant: { ...MERCHANT },
    occurredAt: schedules.T0,
    requestId: SUBJECT,
    caseId: CASE_ID,
    decision,
    ...(decision === 'done'
      ? { amount: eur(99_900), amountWhy: "the gateway's ledger shows 999.00 EUR for the order" }
      : {}),
    decidedBy: 'alice',
    approvedBy: 'bob',
    reason: 'the gateway support confirmed the charge by phone',
    ...over,
  };
  return { kind: 'command', command };
};

/** A status reply about the charge's order (an answer to a query sent before or after). */
const answer = (result: GatewayResult['result']): ScheduleInput =>
  schedules.statusAnswer({ requestId: testUuid(), subjectRequestId: SUBJECT }, result, T1);

const approved = (minor: number) => ({
  kind: 'accepted' as const,
  gatewayOrderId: ORDER,
  report: {
    status: 'approved' as const,
    gatewayOrderId: ORDER,
    amount: eur(minor),
    transactionType: 'sale',
    approvalCode: '242424',
  },
});
const declined = {
  kind: 'accepted' as const,
  gatewayOrderId: ORDER,
  report: { status: 'declined' as const, gatewayOrderId: ORDER, transactionType: 'sale' },
};

/** Registered; cycle 1's charge reported, its status at another amount: unknown, alerted. */
const alertedCharge = () =>
  schedules
    .registered()
    .and(schedules.chargeCallback(1, ORDER), T1)
    .and(answer(approved(99_900)), T1);

const chargeOf = (state: ScheduleState) =>
  'charges' in state ? state.charges.find((c) => c.gatewayOrderId === ORDER) : undefined;

describe("a registered schedule's charge settled by decision (a case)", () => {
  it('given a charge alerted amount-mismatch, when "done at the gateway\'s amount" is decided, then schedule-charge-settled-by-decision with both amounts, its timers dropped, nothing sent', () => {
    const history = alertedCharge();
    expect(chargeOf(history.state)?.op).toMatchObject({ stage: 'outcome-unknown', alerted: true });
    history
      .when(decided('done'))
      .then([
        {
          type: 'schedule-charge-settled-by-decision',
          operation: 'rebill',
          cycle: 0,
          gatewayOrderId: ORDER,
          clientOrderId: `${SCHEDULE_ID}-1`,
          requestId: SUBJECT,
          caseId: CASE_ID,
          decision: 'done',
          amount: eur(99_900),
          requestedAmount: eur(999),
          decidedBy: 'alice',
          approvedBy: 'bob',
        },
      ])
      .thenEffectsEqual([
        { type: 'cancel-status-timer', kind: `charge-status:${ORDER}` },
        { type: 'cancel-status-timer', kind: `charge-alert:${ORDER}` },
      ])
      .thenStatus('registered');
    const after = history.and(decided('done'));
    expect(chargeOf(after.state)).toMatchObject({
      outcome: 'charged',
      decided: { requestId: SUBJECT, caseId: CASE_ID, decision: 'done', amount: eur(99_900) },
    });
    expect(chargeOf(after.state)?.op).toBeUndefined();
    expect(after.state).toMatchObject({ decided: { caseId: CASE_ID } });
  });

  it('"not done": the cycle counts as not charged (declined by decision); a second decision is refused', () => {
    const after = alertedCharge().and(decided('not-done'));
    expect(chargeOf(after.state)).toMatchObject({
      outcome: 'declined',
      decided: { decision: 'not-done' },
    });
    after.when(decided('not-done')).thenRejected('CASE_OPERATION_SETTLED');
  });

  it('refused: a charge the gateway shows in progress (its answer settles it), an incomplete decision, a cycle alerted not-found, another request', () => {
    const inProgress = schedules
      .registered()
      .and(schedules.chargeCallback(1, ORDER), T1)
      .and(
        answer({
          kind: 'accepted',
          gatewayOrderId: ORDER,
          report: { status: 'processing', gatewayOrderId: ORDER, transactionType: 'sale' },
        }),
        T1,
      );
    expect(chargeOf(inProgress.state)?.op?.stage).toBe('processing');
    inProgress.when(decided('not-done')).thenRejected('CASE_OPERATION_SETTLED');
    alertedCharge()
      .when(decided('done', { amount: undefined, amountWhy: undefined }))
      .thenRejected('CASE_DECISION_INVALID');
    alertedCharge()
      .when(decided('not-done', { amount: eur(999) }))
      .thenRejected('CASE_DECISION_INVALID');
    alertedCharge()
      .when(decided('not-done', { requestId: testUuid() }))
      .thenRejected('CASE_OPERATION_SETTLED');
    // A cycle alerted not-found names no gateway order: "refresh and wait" only.
    const events = alertedCharge().events;
    const last = events[events.length - 1];
    const missing = schedules.history(
      [
        ...events,
        {
          type: 'gateway-charge-alert',
          scheduleId: SCHEDULE_ID,
          commandId: testUuid(),
          version: last.version + 1,
          occurredAt: T1,
          cycle: 2,
          clientOrderId: `${SCHEDULE_ID}-3`,
          reason: 'not-found',
        },
      ],
      schedules.GATEWAY_POLICY,
    );
    expect(missing.state).toMatchObject({ missingCycles: [2] });
    missing
      .when(decided('not-done', { requestId: expectedChargeSubjectId(SCHEDULE_ID, 2) }))
      .thenRejected('CASE_DECISION_INVALID');
  });

  it('a later answer contradicting the decision reopens the case with an alert, once; one agreeing is ignored; the decision stands', () => {
    const done = alertedCharge().and(decided('done'));
    done.when(answer(declined)).then([
      {
        type: 'schedule-charge-case-reopened',
        operation: 'rebill',
        requestId: SUBJECT,
        caseId: CASE_ID,
        decision: 'done',
        answer: 'declined',
        gatewayOrderId: ORDER,
        cycle: 0,
        alert: true,
      },
    ]);
    done.when(answer(approved(99_900))).thenIgnored();
    done
      .when(answer(approved(999)))
      .then([
        { type: 'schedule-charge-case-reopened', answer: 'succeeded', reportedAmount: eur(999) },
      ]);
    const reopened = done.and(answer(declined));
    expect(chargeOf(reopened.state)).toMatchObject({
      outcome: 'charged',
      decided: { reopened: true },
    });
    expect(reopened.state).toMatchObject({ decided: { caseId: CASE_ID, reopened: true } });
    reopened.when(answer(declined)).thenIgnored();

    const notDone = alertedCharge().and(decided('not-done'));
    notDone
      .when(answer(approved(99_900)))
      .then([{ type: 'schedule-charge-case-reopened', decision: 'not-done', answer: 'succeeded' }]);
    notDone.when(answer(declined)).thenIgnored();
  });

  it('a callback about a decided charge asks its order once (urgent), records nothing', () => {
    const done = alertedCharge().and(decided('not-done'));
    const outcome = done.when(schedules.chargeCallback(1, ORDER), T1).then([]);
    expect(outcome.decision.effects).toMatchObject([
      {
        type: 'send-gateway-request',
        request: { operation: 'status', subjectRequestId: SUBJECT, gatewayOrderId: ORDER },
      },
    ]);
  });
});

describe('schedule charge decisions: properties (the case rules)', () => {
  type Step =
    | 'alert'
    | 'decide-done'
    | 'decide-not-done'
    | 'late-approved'
    | 'late-approved-other'
    | 'late-declined'
    | 'callback';
  const stepArb = fc.constantFrom<Step>(
    'alert',
    'decide-done',
    'decide-not-done',
    'late-approved',
    'late-approved-other',
    'late-declined',
    'callback',
  );

  it('whatever is decided and answered after: no decision sends a gateway request, no gateway-cycle-charged without a gateway answer about that order, published events never change', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 10 }), (steps) => {
        let history = schedules.registered().and(schedules.chargeCallback(1, ORDER), T1);
        let clock = 0;
        for (const step of steps) {
          const before: ScheduleEvent[] = history.events.map((e) => ({ ...e }));
          clock += HOUR;
          const now = addMs(T1, clock);
          const input =
            step === 'alert'
              ? schedules.chargeTimer(ORDER, 'unknown-alert')
              : step === 'decide-done'
                ? decided('done')
                : step === 'decide-not-done'
                  ? decided('not-done')
                  : step === 'late-approved'
                    ? answer(approved(999))
                    : step === 'late-approved-other'
                      ? answer(approved(99_900))
                      : step === 'late-declined'
                        ? answer(declined)
                        : schedules.chargeCallback(1, ORDER);
          const outcome = history.when(input, now);
          const decision = outcome.decision;
          history = history.and(input, now);
          // Published history is never rewritten, whatever comes.
          expect(history.events.slice(0, before.length)).toEqual(before);
          const types = decision.events.map((e) => e.type);
          if (step === 'decide-done' || step === 'decide-not-done') {
            // A decision never asks the gateway anything, and says only its own event.
            expect(decision.effects.map((e) => e.type)).not.toContain('send-gateway-request');
            if (decision.outcome === 'accepted')
              expect(types).toEqual(['schedule-charge-settled-by-decision']);
          }
          // Charged only on the gateway's status answer saying approved at the schedule's amount.
          if (types.includes('gateway-cycle-charged')) expect(step).toBe('late-approved');
          // Once decided, no ordinary outcome of that charge is ever published.
          const settled = history.events.findIndex(
            (e) => e.type === 'schedule-charge-settled-by-decision',
          );
          if (settled >= 0)
            expect(
              history.events
                .slice(settled)
                .filter(
                  (e) => e.type === 'gateway-cycle-charged' || e.type === 'gateway-cycle-declined',
                ),
            ).toEqual([]);
        }
      }),
      { numRuns: 300 },
    );
  });
});
