import type { GatewayStatusRequest } from '@payments/contracts';
import { MERCHANT, SCHEDULE_ID } from '@payments/contracts/testing';
import * as schedules from '../../../../test/kits/recurring-schedule.kit';
import { addMs, msBetween } from '../../../domain/decision';
import { HELD_JITTER_MS, SECOND } from '../../../domain/gateway-operation/polling';
import { decideSchedule, type ScheduleInput } from './decide';
import { chargeSubjectId, expectedChargeSubjectId, registrationRequestId } from './gateway-charged';

const eur = (minor: number) => ({ minor, currency: 'EUR' });
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const at = (ms: number) => addMs(schedules.T0, ms);
const T1 = at(5_000);

/** The status request the outcome sent (the first send-gateway-request effect). */
function sentStatus(outcome: schedules.Outcome): GatewayStatusRequest {
  const effect = outcome.decision.effects.find((e) => e.type === 'send-gateway-request');
  if (effect?.type !== 'send-gateway-request' || effect.request.operation !== 'status')
    throw new Error('no status request sent');
  return effect.request;
}

const approvedReport = (gatewayOrderId: string) => ({
  kind: 'accepted' as const,
  gatewayOrderId,
  report: {
    status: 'approved' as const,
    gatewayOrderId,
    amount: eur(999),
    transactionType: 'sale',
    approvalCode: '242424',
  },
});

describe('schedule registered with the gateway: create', () => {
  it('given an endpoint configured for it, when created, then create-recurring-payment is sent and no charge timer is set', () => {
    schedules
      .withPolicy(schedules.GATEWAY_POLICY)
      .when(schedules.create(), schedules.T0)
      .then([{ type: 'schedule-created', chargedBy: 'gateway', skippedCycles: 0 }])
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: {
            operation: 'create-recurring-payment',
            requestId: registrationRequestId(SCHEDULE_ID),
            paymentId: SCHEDULE_ID,
            clientOrderId: SCHEDULE_ID,
            cardRefId: 'card-ref-1',
            amount: eur(999),
            period: 'month',
            interval: 1,
            startDate: '2026-01-31',
            repeats: 12,
          },
        },
      ])
      .thenStatus('registering');
  });

  it('given another endpoint, when created, then it is charged by rebills as before', () => {
    schedules
      .withPolicy({ ...schedules.GATEWAY_POLICY, gatewayRegistrationEndpoints: ['9999'] })
      .when(schedules.create(), schedules.T0)
      .thenEffects([{ type: 'set-charge-timer' }])
      .thenStatus('active');
  });

  it('sends a yearly schedule as 12-month intervals and refuses one the gateway cannot carry', () => {
    const yearly = (interval: number) =>
      schedules.create({
        rule: {
          period: 'year',
          interval,
          startDate: '2026-02-01',
          timeOfDay: '09:00',
          timeZone: 'Europe/Berlin',
          end: { kind: 'never' },
        },
      });
    const outcome = schedules.withPolicy(schedules.GATEWAY_POLICY).when(yearly(2), schedules.T0);
    outcome.thenEffects([
      { type: 'send-gateway-request', request: { period: 'month', interval: 24 } },
    ]);
    const [effect] = outcome.decision.effects;
    expect(effect?.type === 'send-gateway-request' && 'repeats' in effect.request).toBe(false);
    schedules
      .withPolicy(schedules.GATEWAY_POLICY)
      .when(yearly(84), schedules.T0)
      .thenRejected('INVALID_SCHEDULE');
  });
});

describe('schedule registered with the gateway: the registration reply', () => {
  it('when the gateway answers with a recurring-payment-id, then the schedule is registered', () => {
    schedules
      .registering()
      .when(schedules.registeredReply, schedules.T0)
      .then([{ type: 'schedule-registered', recurringPaymentId: '77', resolvedBy: 'reply' }])
      .thenStatus('registered');
  });

  it('when the gateway refuses it, then the registration failed and nothing can be changed', () => {
    const failed = schedules.registering().and(
      schedules.registrationReply({
        kind: 'rejected',
        code: '1',
        message: 'unknown card reference',
      }),
    );
    expect(failed.events.at(-1)).toMatchObject({
      type: 'schedule-registration-failed',
      reason: 'rejected',
      code: '1',
    });
    failed.when(schedules.pause(), schedules.T0).thenRejected('INVALID_STATE');
  });

  it('when it was not sent, then it is resent after the shared backoff until the attempts run out, then failed', () => {
    schedules
      .registering()
      .when(
        schedules.registrationReply({ kind: 'not-sent', reason: 'circuit open' }, 1),
        schedules.T0,
      )
      .then([])
      .thenEffects([
        {
          type: 'resend-registration',
          requestId: registrationRequestId(SCHEDULE_ID),
          attempt: 2,
          notBefore: at(1_000),
        },
      ]);
    schedules
      .registering()
      .when(
        schedules.registrationReply({ kind: 'not-sent', reason: 'circuit open' }, 3),
        schedules.T0,
      )
      .then([{ type: 'schedule-registration-failed', reason: 'not-sent' }]);
  });

  it('when the reply names no recurring-payment-id, then it is acknowledged and status queries bring its outcome', () => {
    schedules
      .registering()
      .when(schedules.registrationReply({ kind: 'accepted', serialNumber: 's-1' }), schedules.T0)
      .then([{ type: 'schedule-registration-accepted', serialNumber: 's-1' }])
      .thenEffects([
        {
          type: 'set-status-timer',
          kind: 'registration-status',
          at: at(3_000),
          timer: { kind: 'status-poll', attempt: 1 },
        },
      ])
      .thenStatus('registering');
  });
});

describe('schedule registered with the gateway: an unknown registration is resolved, never guessed', () => {
  const unknown = () =>
    schedules
      .registering()
      .and(schedules.registrationReply({ kind: 'unknown', reason: 'timeout' }));
  /** The same, on an endpoint declared to refuse a reused client_orderid (by default none is). */
  const unknownRefusing = () =>
    schedules
      .withPolicy(
        { ...schedules.GATEWAY_POLICY, gatewayRefusesReusedOrderId: [MERCHANT.endpointId] },
        [schedules.create(), schedules.T0],
      )
      .and(schedules.registrationReply({ kind: 'unknown', reason: 'timeout' }));

  it('when the reply is lost, then status queries by its client_orderid poll at the shared cadence and the alert is armed', () => {
    schedules
      .registering()
      .when(schedules.registrationReply({ kind: 'unknown', reason: 'timeout' }), schedules.T0)
      .then([{ type: 'schedule-registration-unknown', since: schedules.T0 }])
      .thenEffects([
        {
          type: 'set-status-timer',
          kind: 'registration-status',
          at: at(3_000),
          timer: { kind: 'status-poll', attempt: 1 },
        },
        {
          type: 'set-status-timer',
          kind: 'registration-alert',
          at: at(HOUR),
          timer: { kind: 'unknown-alert' },
        },
      ])
      .thenStatus('registering');
  });

  it('when the status query finds the registration, then it is registered (resolved by status)', () => {
    const polled = unknown().when(schedules.registrationTimer('status-poll', 1), T1);
    polled.thenEffects([
      {
        type: 'send-gateway-request',
        request: {
          operation: 'status',
          clientOrderId: SCHEDULE_ID,
          subjectRequestId: registrationRequestId(SCHEDULE_ID),
          subjectOperation: 'create-recurring-payment',
        },
      },
      { type: 'set-status-timer', kind: 'registration-status', timer: { attempt: 2 } },
    ]);
    unknown()
      .when(
        schedules.statusAnswer(sentStatus(polled), {
          kind: 'accepted',
          report: { status: 'approved', transactionType: 'create-recurring-payment' },
          recurringPaymentId: '77',
        }),
        T1,
      )
      .then([{ type: 'schedule-registered', recurringPaymentId: '77', resolvedBy: 'status' }])
      .thenEffects([
        { type: 'cancel-status-timer', kind: 'registration-status' },
        { type: 'cancel-status-timer', kind: 'registration-alert' },
        // From now on every cycle's charge is asked for once its time has passed.
        { type: 'set-status-timer', kind: 'expected-charge', timer: { poll: 1, expectedCycle: 0 } },
      ]);
  });

  it('an endpoint declared to refuse a reused client_orderid: no trace is judged on when the gateway answered: within the window nothing; after it, sent once more under the same client_orderid; no trace again: unknown with the alert, never failed', () => {
    const request = sentStatus(
      unknownRefusing().when(schedules.registrationTimer('status-poll', 1), T1),
    );
    const noTrace = {
      kind: 'rejected' as const,
      code: '2',
      message: 'unknown client_orderid',
      orderUnknown: true as const,
    };
    // Answered 5 s after the outcome became unknown: too soon to say it never arrived.
    unknownRefusing()
      .when(schedules.statusAnswer(request, noTrace, T1), T1)
      .thenIgnored('NO_NEWS');
    const late = at(MINUTE);
    const resent = unknownRefusing().when(schedules.statusAnswer(request, noTrace, late), late);
    resent.then([
      { type: 'schedule-registration-resent', attempt: 1000, unknownSince: schedules.T0 },
    ]);
    resent.thenEffects([
      {
        type: 'resend-registration',
        requestId: registrationRequestId(SCHEDULE_ID),
        afterNoTrace: true,
        attempt: 1000,
      },
      // Still unknown, since the repeat: the alert is armed again for its window.
      { type: 'set-status-timer', kind: 'registration-alert' },
    ]);
    const again = unknownRefusing().and(schedules.statusAnswer(request, noTrace, late), late);
    const second = sentStatus(again.when(schedules.registrationTimer('status-poll', 5), late));
    expect(second.requestId).not.toBe(request.requestId);
    const later = at(3 * MINUTE);
    const alerted = again.when(schedules.statusAnswer(second, noTrace, later), later);
    alerted
      .then([
        { type: 'schedule-registration-unknown', alert: true, concern: 'no-trace', since: late },
      ])
      .thenStatus('registering');
    // Polled on at the slow cadence (a slow gateway's late answer still settles it).
    const slow = again
      .and(schedules.statusAnswer(second, noTrace, later), later)
      .when(schedules.registrationTimer('status-poll', 6), later);
    slow.thenEffects([
      { type: 'send-gateway-request' },
      { type: 'set-status-timer', kind: 'registration-status', at: addMs(later, 5 * MINUTE) },
    ]);
  });

  it('by default (no endpoint declared to refuse a reused client_orderid) a registration with no trace is never sent again: unknown with the alert', () => {
    const request = sentStatus(unknown().when(schedules.registrationTimer('status-poll', 1), T1));
    const noTrace = {
      kind: 'rejected' as const,
      code: '2',
      message: 'unknown client_orderid',
      orderUnknown: true as const,
    };
    const late = at(MINUTE);
    unknown()
      .when(schedules.statusAnswer(request, noTrace, late), late)
      .then([
        {
          type: 'schedule-registration-unknown',
          alert: true,
          concern: 'no-trace',
          since: schedules.T0,
        },
      ])
      .thenEffects([{ type: 'cancel-status-timer', kind: 'registration-alert' }]);
  });

  it('a status query refused for another reason is no evidence; a status saying declined is a refusal, never sent again', () => {
    const request = sentStatus(unknown().when(schedules.registrationTimer('status-poll', 1), T1));
    unknown()
      .when(
        schedules.statusAnswer(request, {
          kind: 'rejected',
          code: 'authentication',
          message: 'forbidden',
        }),
        at(HOUR),
      )
      .thenIgnored('NO_NEWS');
    unknown()
      .when(
        schedules.statusAnswer(request, {
          kind: 'accepted',
          report: {
            status: 'declined',
            transactionType: 'create-recurring-payment',
            errorCode: '5',
            errorMessage: 'card reference not eligible',
          },
        }),
        T1,
      )
      .then([
        {
          type: 'schedule-registration-failed',
          reason: 'rejected',
          code: '5',
          message: 'card reference not eligible',
        },
      ])
      .thenEffects([
        { type: 'cancel-status-timer', kind: 'registration-status' },
        { type: 'cancel-status-timer', kind: 'registration-alert' },
      ]);
  });

  it('when the status query cannot tell, nothing changes; still unknown after the alert time: a person must look (once), and the polls go on', () => {
    const request = sentStatus(unknown().when(schedules.registrationTimer('status-poll', 1), T1));
    unknown()
      .when(schedules.statusAnswer(request, { kind: 'not-sent', reason: 'status budget' }), T1)
      .thenIgnored('NO_NEWS');
    // Past the fast band: every 5 to 10 minutes, never a silent stop.
    unknown()
      .when(schedules.registrationTimer('status-poll', 70), at(10 * MINUTE))
      .thenEffects([
        { type: 'send-gateway-request' },
        { type: 'set-status-timer', kind: 'registration-status' },
      ]);
    unknown()
      .when(schedules.registrationTimer('unknown-alert'), at(HOUR - 1))
      .then([])
      .thenEffects([{ type: 'set-status-timer', kind: 'registration-alert', at: at(HOUR) }]);
    const alerted = unknown().and(schedules.registrationTimer('unknown-alert'), at(HOUR));
    expect(alerted.events.at(-1)).toMatchObject({
      type: 'schedule-registration-unknown',
      alert: true,
      since: schedules.T0,
    });
    alerted
      .when(schedules.registrationTimer('unknown-alert'), at(HOUR))
      .thenIgnored('TIMER_OBSOLETE');
    // Alerted, still asked: hourly after the first hour.
    alerted.when(schedules.registrationTimer('status-poll', 20), at(HOUR + 1)).thenEffects([
      { type: 'send-gateway-request', request: { operation: 'status' } },
      { type: 'set-status-timer', kind: 'registration-status', at: at(2 * HOUR + 1) },
    ]);
  });

  it('a poll armed before the shared rules (`{ poll }`) is asked at the shared cadence and arms the alert it never had', () => {
    unknown()
      .when(schedules.statusTimer(4), T1)
      .thenEffects([
        { type: 'send-gateway-request', request: { operation: 'status' } },
        { type: 'set-status-timer', kind: 'registration-status', timer: { kind: 'status-poll' } },
        {
          type: 'set-status-timer',
          kind: 'registration-alert',
          at: addMs(T1, HOUR),
          timer: { kind: 'unknown-alert' },
        },
      ]);
  });
});

describe('schedule registered with the gateway: its charges', () => {
  it('when a verified callback names a charge, then it is reported (not charged), its status asked about that order, polled, and its alert armed', () => {
    schedules
      .registered()
      .when(schedules.chargeCallback(3, '1000007'), T1)
      .then([
        {
          type: 'gateway-charge-reported',
          cycle: 2,
          gatewayOrderId: '1000007',
          clientOrderId: `${SCHEDULE_ID}-3`,
          reportedStatus: 'approved',
        },
      ])
      .thenEffects([
        {
          type: 'send-gateway-request',
          request: {
            operation: 'status',
            clientOrderId: `${SCHEDULE_ID}-3`,
            gatewayOrderId: '1000007',
            subjectRequestId: chargeSubjectId(SCHEDULE_ID, '1000007'),
            subjectOperation: 'rebill',
          },
        },
        {
          type: 'set-status-timer',
          kind: 'charge-status:1000007',
          at: addMs(T1, 3_000),
          timer: { kind: 'status-poll', attempt: 1 },
        },
        {
          type: 'set-status-timer',
          kind: 'charge-alert:1000007',
          at: addMs(T1, HOUR),
          timer: { kind: 'unknown-alert' },
        },
      ]);
  });

  it('when the status reply about that order says approved, then the cycle is charged once; a second answer or callback changes nothing', () => {
    const reported = schedules.registered().and(schedules.chargeCallback(1, '1000007'), T1);
    const request = sentStatus(
      schedules.registered().when(schedules.chargeCallback(1, '1000007'), T1),
    );
    const charged = reported.when(schedules.statusAnswer(request, approvedReport('1000007')), T1);
    charged
      .then([
        {
          type: 'gateway-cycle-charged',
          cycle: 0,
          gatewayOrderId: '1000007',
          amount: eur(999),
          approvalCode: '242424',
        },
      ])
      .thenEffects([
        { type: 'cancel-status-timer', kind: 'charge-status:1000007' },
        { type: 'cancel-status-timer', kind: 'charge-alert:1000007' },
      ]);
    const after = reported.and(schedules.statusAnswer(request, approvedReport('1000007')), T1);
    after
      .when(schedules.statusAnswer(request, approvedReport('1000007')), T1)
      .thenIgnored('STALE_RESULT');
    after.when(schedules.chargeCallback(1, '1000007'), T1).thenIgnored('CHARGE_ALREADY_RECORDED');
    after
      .when(schedules.chargeTimer('1000007', 'status-poll', 2), T1)
      .thenIgnored('TIMER_OBSOLETE');
    after.when(schedules.statusTimer(2, '1000007'), T1).thenIgnored('TIMER_OBSOLETE');
    // A second charge of the gateway is another order: recorded on its own.
    after
      .when(schedules.chargeCallback(2, '1000008'), T1)
      .then([{ type: 'gateway-charge-reported', cycle: 1 }]);
  });

  it('when the status reply says declined, then the cycle is recorded declined (no dunning of ours)', () => {
    const request = sentStatus(
      schedules.registered().when(schedules.chargeCallback(1, '1000007', 'declined'), T1),
    );
    schedules
      .registered()
      .and(schedules.chargeCallback(1, '1000007', 'declined'), T1)
      .when(
        schedules.statusAnswer(request, {
          kind: 'accepted',
          report: { status: 'declined', gatewayOrderId: '1000007', errorCode: '116' },
        }),
        T1,
      )
      .then([{ type: 'gateway-cycle-declined', cycle: 0, outcome: 'declined', code: '116' }])
      .thenEffects([{ type: 'cancel-status-timer' }, { type: 'cancel-status-timer' }]);
  });

  it("another amount than the schedule's is no charge: unknown with the alert (amount-mismatch), for a person", () => {
    const reported = schedules.registered().and(schedules.chargeCallback(1, '1000007'), T1);
    const request = sentStatus(
      schedules.registered().when(schedules.chargeCallback(1, '1000007'), T1),
    );
    const other = approvedReport('1000007');
    reported
      .when(
        schedules.statusAnswer(request, {
          ...other,
          report: { ...other.report, amount: eur(99_900) },
        }),
        T1,
      )
      .then([
        {
          type: 'gateway-charge-outcome-unknown',
          gatewayOrderId: '1000007',
          alert: true,
          concern: 'amount-mismatch',
          reportedAmount: eur(99_900),
        },
      ]);
  });

  it('a callback alone never says money moved: no answer about that very order, no charge event', () => {
    const reported = schedules.registered().and(schedules.chargeCallback(1, '1000007'), T1);
    const request = sentStatus(
      schedules.registered().when(schedules.chargeCallback(1, '1000007'), T1),
    );
    // About another order, a refund of the order, an unknown outcome: no news.
    reported
      .when(schedules.statusAnswer(request, approvedReport('1000099')), T1)
      .thenIgnored('NOT_ABOUT_THIS_OPERATION');
    const refund = approvedReport('1000007');
    reported
      .when(
        schedules.statusAnswer(request, {
          ...refund,
          report: { ...refund.report, transactionType: 'return' },
        }),
        T1,
      )
      .thenIgnored('NOT_ABOUT_THIS_OPERATION');
    reported
      .when(schedules.statusAnswer(request, { kind: 'unknown', reason: 'timeout' }), T1)
      .thenIgnored('NO_NEWS');
    // In progress at the gateway: no longer unknown (its alert dropped), still not charged.
    reported
      .when(
        schedules.statusAnswer(request, { kind: 'accepted', report: { status: 'processing' } }),
        T1,
      )
      .then([{ type: 'gateway-charge-accepted', gatewayOrderId: '1000007' }])
      .thenEffects([{ type: 'cancel-status-timer', kind: 'charge-alert:1000007' }]);
    // A verified callback about it again only brings the status query forward.
    reported
      .when(schedules.chargeCallback(1, '1000007', 'declined'), T1)
      .thenEffects([
        { type: 'set-status-timer', kind: 'charge-status:1000007', at: T1, timer: { attempt: 1 } },
      ]);
    expect(
      reported.when(schedules.chargeCallback(1, '1000007', 'declined'), T1).decision.events,
    ).toEqual([]);
    // The next poll asks again.
    reported
      .when(schedules.chargeTimer('1000007', 'status-poll', 2), T1)
      .thenEffects([
        { type: 'send-gateway-request' },
        { type: 'set-status-timer', timer: { attempt: 3 } },
      ]);
    // Never confirmed within the alert time: a person must look (once); nothing is assumed
    // charged, and the polls go on.
    const alerted = reported.when(
      schedules.chargeTimer('1000007', 'unknown-alert'),
      addMs(T1, HOUR),
    );
    alerted
      .then([
        {
          type: 'gateway-charge-outcome-unknown',
          gatewayOrderId: '1000007',
          alert: true,
          since: T1,
        },
      ])
      .thenEffects([]);
    const afterAlert = reported.and(
      schedules.chargeTimer('1000007', 'unknown-alert'),
      addMs(T1, HOUR),
    );
    afterAlert
      .when(schedules.chargeTimer('1000007', 'unknown-alert'), addMs(T1, HOUR))
      .thenIgnored('TIMER_OBSOLETE');
    afterAlert
      .when(schedules.chargeTimer('1000007', 'status-poll', 20), addMs(T1, HOUR))
      .thenEffects([
        { type: 'send-gateway-request', request: { gatewayOrderId: '1000007' } },
        { type: 'set-status-timer', kind: 'charge-status:1000007', at: addMs(T1, 2 * HOUR) },
      ]);
  });

  it('a charge whose order the gateway does not know is never sent again: after the window, unknown with the alert (no-trace)', () => {
    const reported = schedules.registered().and(schedules.chargeCallback(2, '999999'), T1);
    const request = sentStatus(
      schedules.registered().when(schedules.chargeCallback(2, '999999'), T1),
    );
    const noSuchOrder = {
      kind: 'rejected' as const,
      code: '1',
      message: 'unknown order',
      orderUnknown: true as const,
    };
    reported.when(schedules.statusAnswer(request, noSuchOrder, T1), T1).thenIgnored('NO_NEWS');
    const late = addMs(T1, MINUTE);
    reported
      .when(schedules.statusAnswer(request, noSuchOrder, late), late)
      .then([{ type: 'gateway-charge-outcome-unknown', alert: true, concern: 'no-trace' }])
      .thenEffects([{ type: 'cancel-status-timer', kind: 'charge-alert:999999' }]);
  });

  it('a charge being confirmed before the shared rules (no operation stored, a `{ poll }` timer) is polled and gets its alert', () => {
    const reported = schedules.registered().and(schedules.chargeCallback(1, '1000007'), T1);
    const state = reported.state;
    if (state.status !== 'registered') throw new Error(state.status);
    const legacy = {
      ...state,
      charges: state.charges.map(({ op: _op, ...charge }) => charge),
    };
    const decision = decideSchedule(schedules.statusTimer(7, '1000007'), legacy, {
      now: T1,
      policy: schedules.GATEWAY_POLICY,
    });
    expect(decision.effects).toMatchObject([
      { type: 'send-gateway-request', request: { operation: 'status', gatewayOrderId: '1000007' } },
      // Asked long ago as far as the rules can tell: the slowest cadence.
      { type: 'set-status-timer', kind: 'charge-status:1000007', at: addMs(T1, HOUR) },
      { type: 'set-status-timer', kind: 'charge-alert:1000007', at: addMs(T1, HOUR) },
    ]);
  });
});

describe('schedule registered with the gateway: never rebilled, and what the gateway cannot do', () => {
  it('a charge timer (left from anywhere) starts no rebill', () => {
    schedules.registered().when(schedules.timer(0), T1).thenIgnored('TIMER_OBSOLETE');
  });

  it.each([
    ['pause', schedules.pause()],
    ['resume', schedules.resume()],
    ['update', schedules.update(eur(1999))],
    ['cancel', schedules.cancel()],
  ])('refuses %s: the gateway offers no operation for it', (_name, input) => {
    const outcome = schedules.registered().when(input, T1);
    outcome.thenRejected('NOT_SUPPORTED_BY_GATEWAY');
    expect(outcome.decision.outcome === 'rejected' && outcome.decision.rejection.message).toContain(
      'recurring-payment-id 77',
    );
  });

  it('refuses a cycle outcome: there is no rebill to report one', () => {
    schedules
      .registered()
      .when(
        schedules.command({
          type: 'record-cycle-outcome',
          commandId: '00000000-0000-4000-8000-0000000000aa',
          scheduleId: SCHEDULE_ID,
          merchant: { ...MERCHANT },
          occurredAt: schedules.T0,
          cycle: 0,
          attempt: 1,
          paymentId: '00000000-0000-4000-8000-0000000000ab',
          outcome: 'approved',
        }),
        T1,
      )
      .thenRejected('INVALID_STATE');
  });
});

describe('schedule registered with the gateway: every cycle is asked for, callbacks or not', () => {
  /** Cycle 0 is due 2026-01-31 09:00 Berlin; asked a day (the grace) later. */
  const CYCLE0_ASKED = '2026-02-01T08:00:00.000Z';
  const expected = schedules.expectedTimer;
  const noSuchOrder = {
    kind: 'rejected' as const,
    code: '1',
    message: 'unknown client_orderid',
    orderUnknown: true as const,
  };

  it('registered: the first cycle is expected a grace after its time', () => {
    schedules
      .registering()
      .when(schedules.registeredReply, schedules.T0)
      .thenEffects([
        { type: 'cancel-status-timer', kind: 'registration-status' },
        { type: 'cancel-status-timer', kind: 'registration-alert' },
        {
          type: 'set-status-timer',
          kind: 'expected-charge',
          at: CYCLE0_ASKED,
          timer: { poll: 1, expectedCycle: 0 },
        },
      ]);
  });

  it('a charge whose callback was lost is found by its client order id and recorded once, settled by that very answer', () => {
    const asked = schedules.registered().when(expected(0, 1), CYCLE0_ASKED);
    const request = sentStatus(asked);
    expect(request).toMatchObject({
      clientOrderId: `${SCHEDULE_ID}-1`,
      subjectOperation: 'rebill',
    });
    expect(request).not.toHaveProperty('gatewayOrderId');
    asked.thenEffects([
      { type: 'send-gateway-request' },
      { type: 'set-status-timer', kind: 'expected-charge', timer: { poll: 2, expectedCycle: 0 } },
      {
        type: 'set-status-timer',
        kind: 'expected-charge-alert',
        at: addMs(CYCLE0_ASKED, HOUR),
        timer: { kind: 'unknown-alert', requestId: request.subjectRequestId },
      },
    ]);
    const found = schedules
      .registered()
      .and(expected(0, 1), CYCLE0_ASKED)
      .when(schedules.statusAnswer(request, approvedReport('1000009')), CYCLE0_ASKED);
    found
      .then([
        {
          type: 'gateway-charge-reported',
          cycle: 0,
          gatewayOrderId: '1000009',
          clientOrderId: `${SCHEDULE_ID}-1`,
        },
        { type: 'gateway-cycle-charged', cycle: 0, gatewayOrderId: '1000009', amount: eur(999) },
      ])
      .thenEffects([
        { type: 'set-status-timer', kind: 'expected-charge', timer: { poll: 1, expectedCycle: 1 } },
      ]);
    // Its callback arriving after all changes nothing; nor does the answer twice.
    const recorded = schedules
      .registered()
      .and(expected(0, 1), CYCLE0_ASKED)
      .and(schedules.statusAnswer(request, approvedReport('1000009')), CYCLE0_ASKED);
    recorded
      .when(schedules.chargeCallback(1, '1000009'), CYCLE0_ASKED)
      .thenIgnored('CHARGE_ALREADY_RECORDED');
    recorded
      .when(schedules.statusAnswer(request, approvedReport('1000009')), CYCLE0_ASKED)
      .thenIgnored('CHARGE_ALREADY_RECORDED');
  });

  it('a charge found still in progress is reported and confirmed by polling, no longer unknown', () => {
    const asked = schedules.registered().when(expected(0, 1), CYCLE0_ASKED);
    schedules
      .registered()
      .and(expected(0, 1), CYCLE0_ASKED)
      .when(
        schedules.statusAnswer(sentStatus(asked), {
          kind: 'accepted',
          gatewayOrderId: '1000010',
          report: { status: 'processing', gatewayOrderId: '1000010', transactionType: 'sale' },
        }),
        CYCLE0_ASKED,
      )
      .then([
        { type: 'gateway-charge-reported', cycle: 0, gatewayOrderId: '1000010' },
        { type: 'gateway-charge-accepted', gatewayOrderId: '1000010' },
      ])
      .thenEffects([
        { type: 'set-status-timer', kind: 'charge-status:1000010' },
        { type: 'set-status-timer', kind: 'charge-alert:1000010' },
        { type: 'cancel-status-timer', kind: 'charge-alert:1000010' },
        { type: 'set-status-timer', kind: 'expected-charge', timer: { expectedCycle: 1 } },
      ]);
  });

  it('no charge found within the alert window: asked at the shared cadence, then a person is alerted (not-found) and the next cycle is expected', () => {
    /** The time a set-status-timer effect of `kind` fires at. */
    const timerAt = (outcome: schedules.Outcome, kind: string): string => {
      const effect = outcome.decision.effects.find(
        (e) => e.type === 'set-status-timer' && e.kind === kind,
      );
      if (effect?.type !== 'set-status-timer') throw new Error(`no ${kind} timer set`);
      return effect.at;
    };
    const ALERT_AT = addMs(CYCLE0_ASKED, HOUR);
    // Each poll fires when the one before armed it; the gateway knows no such order yet.
    let s = schedules.registered();
    let pollAt = CYCLE0_ASKED;
    for (let poll = 1; msBetween(CYCLE0_ASKED, pollAt) < 10 * MINUTE; poll += 1) {
      const asked = s.when(expected(0, poll), pollAt);
      asked.then([]);
      expect(timerAt(asked, 'expected-charge-alert')).toBe(ALERT_AT);
      s = s
        .and(expected(0, poll), pollAt)
        .and(schedules.statusAnswer(sentStatus(asked), noSuchOrder, pollAt), pollAt);
      pollAt = timerAt(asked, 'expected-charge');
    }
    const alert = schedules.expectedAlertTimer(0);
    // Fired early (a window grown since it was armed): armed again for the rest, no event.
    s.when(alert, addMs(CYCLE0_ASKED, 30 * MINUTE))
      .then([])
      .thenEffects([{ type: 'set-status-timer', kind: 'expected-charge-alert', at: ALERT_AT }]);
    s.when(alert, ALERT_AT)
      .then([
        {
          type: 'gateway-charge-alert',
          cycle: 0,
          clientOrderId: `${SCHEDULE_ID}-1`,
          reason: 'not-found',
        },
      ])
      .thenEffects([
        { type: 'set-status-timer', kind: 'expected-charge', timer: { poll: 1, expectedCycle: 1 } },
        { type: 'set-status-timer', kind: 'missing-charge:0', timer: { expectedCycle: 0 } },
      ]);
  });

  it('asked late (the orchestrator was down): the search gets the whole alert window from its first query, polled fast', () => {
    const LATE = addMs(CYCLE0_ASKED, 24 * HOUR);
    const asked = schedules.registered().when(expected(0, 1), LATE);
    asked.thenEffects([
      { type: 'send-gateway-request' },
      {
        type: 'set-status-timer',
        kind: 'expected-charge',
        timer: { poll: 2, expectedCycle: 0, askedSince: LATE },
      },
      { type: 'set-status-timer', kind: 'expected-charge-alert', at: addMs(LATE, HOUR) },
    ]);
    const next = asked.decision.effects[1];
    expect(next?.type === 'set-status-timer' && msBetween(LATE, next.at)).toBeLessThanOrEqual(
      5_000,
    );
    // Its second poll still arms the alert an hour after the first query.
    schedules
      .registered()
      .when(schedules.expectedTimer(0, 2, LATE), addMs(LATE, 5_000))
      .thenEffects([
        { type: 'send-gateway-request' },
        { type: 'set-status-timer', kind: 'expected-charge' },
        { type: 'set-status-timer', kind: 'expected-charge-alert', at: addMs(LATE, HOUR) },
      ]);
  });

  it('a cycle alerted not-found is still asked for at the slow cadence, and its charge made late (callbacks lost) is found, the later search left as it is', () => {
    const ALERT_AT = addMs(CYCLE0_ASKED, HOUR);
    const missing = (poll: number): ScheduleInput => ({
      kind: 'status-timer',
      timerKind: 'missing-charge:0',
      timer: { poll, expectedCycle: 0 },
    });
    const alerted = schedules.registered().and(schedules.expectedAlertTimer(0), ALERT_AT);
    expect(alerted.events.at(-1)).toMatchObject({ type: 'gateway-charge-alert', cycle: 0 });
    // The alert keeps the cycle's search alive: a timer of its own, beside the next cycle's.
    schedules
      .registered()
      .when(schedules.expectedAlertTimer(0), ALERT_AT)
      .thenEffects([
        { type: 'set-status-timer', kind: 'expected-charge', timer: { expectedCycle: 1 } },
        {
          type: 'set-status-timer',
          kind: 'missing-charge:0',
          at: ALERT_AT,
          timer: { poll: 1, expectedCycle: 0 },
        },
      ]);
    // Each slow poll asks by the cycle's client order id and arms the next at the slow cadence.
    const DAY_LATER = addMs(ALERT_AT, 24 * HOUR);
    const polled = alerted.when(missing(7), DAY_LATER);
    const request = sentStatus(polled);
    expect(request).toMatchObject({
      clientOrderId: `${SCHEDULE_ID}-1`,
      subjectRequestId: expectedChargeSubjectId(SCHEDULE_ID, 0),
    });
    polled.then([]).thenEffects([
      { type: 'send-gateway-request' },
      {
        type: 'set-status-timer',
        kind: 'missing-charge:0',
        timer: { poll: 8, expectedCycle: 0 },
      },
    ]);
    const next = polled.decision.effects[1];
    expect(
      next?.type === 'set-status-timer' && msBetween(DAY_LATER, next.at),
    ).toBeGreaterThanOrEqual(5 * MINUTE);
    // The gateway charged it late, its callbacks lost: found, recorded once, its search ended;
    // the next cycle's search (already under way) is not started again.
    const found = alerted
      .and(missing(7), DAY_LATER)
      .when(schedules.statusAnswer(request, approvedReport('1000042')), DAY_LATER);
    found
      .then([
        { type: 'gateway-charge-reported', cycle: 0, gatewayOrderId: '1000042' },
        { type: 'gateway-cycle-charged', cycle: 0, gatewayOrderId: '1000042', amount: eur(999) },
      ])
      .thenEffects([{ type: 'cancel-status-timer', kind: 'missing-charge:0' }]);
    expect(
      found.decision.effects.some(
        (e) => e.type === 'set-status-timer' && e.kind === 'expected-charge',
      ),
    ).toBe(false);
    // Found: its slow timer is obsolete.
    alerted
      .and(missing(7), DAY_LATER)
      .and(schedules.statusAnswer(request, approvedReport('1000042')), DAY_LATER)
      .when(missing(8), addMs(DAY_LATER, HOUR))
      .thenIgnored('TIMER_OBSOLETE');
  });

  it('a search held back by the adapter (not-sent with retryAt) asks again at retryAt plus a jitter, not at its next cadence (issue #38)', () => {
    const ALERT_AT = addMs(CYCLE0_ASKED, HOUR);
    const DAY_LATER = addMs(ALERT_AT, 24 * HOUR);
    const missing: ScheduleInput = {
      kind: 'status-timer',
      timerKind: 'missing-charge:0',
      timer: { poll: 7, expectedCycle: 0 },
    };
    const polled = schedules
      .registered()
      .and(schedules.expectedAlertTimer(0), ALERT_AT)
      .and(missing, DAY_LATER);
    const request = sentStatus(polled.when(missing, DAY_LATER));
    const retryAt = addMs(DAY_LATER, 4 * SECOND);
    const held = polled.when(
      schedules.statusAnswer(request, { kind: 'not-sent', reason: 'status budget', retryAt }),
      addMs(DAY_LATER, 100),
    );
    held.then([]).thenEffects([{ type: 'advance-status-timer', kind: 'missing-charge:0' }]);
    const [advance] = held.decision.effects;
    const after = advance?.type === 'advance-status-timer' ? msBetween(retryAt, advance.at) : -1;
    expect(after).toBeGreaterThanOrEqual(0);
    expect(after).toBeLessThan(HELD_JITTER_MS);
    // An expected cycle's search the same way, under its own timer.
    const expected = schedules.registered();
    const asked = sentStatus(expected.when(schedules.expectedTimer(0, 1), CYCLE0_ASKED));
    expected
      .and(schedules.expectedTimer(0, 1), CYCLE0_ASKED)
      .when(
        schedules.statusAnswer(asked, {
          kind: 'not-sent',
          reason: 'status budget',
          retryAt: addMs(CYCLE0_ASKED, SECOND),
        }),
        CYCLE0_ASKED,
      )
      .then([])
      .thenEffects([{ type: 'advance-status-timer', kind: 'expected-charge' }]);
  });

  it('the alert of a cycle found meanwhile is obsolete', () => {
    schedules
      .registered()
      .and(schedules.chargeCallback(1, '1000007'), T1)
      .when(schedules.expectedAlertTimer(0), addMs(CYCLE0_ASKED, HOUR))
      .thenIgnored('TIMER_OBSOLETE');
  });

  it('a cycle its callback recorded is not asked for again', () => {
    schedules
      .registered()
      .and(schedules.chargeCallback(1, '1000007'), T1)
      .when(expected(0, 1), CYCLE0_ASKED)
      .then([])
      .thenEffects([
        { type: 'set-status-timer', kind: 'expected-charge', timer: { poll: 1, expectedCycle: 1 } },
      ]);
  });

  it("cycles whose time had passed at creation are not registered: the gateway's n-th charge is cycle first + n − 1", () => {
    const late = schedules.withPolicy(
      schedules.GATEWAY_POLICY,
      [
        schedules.create({
          rule: {
            period: 'month',
            interval: 1,
            startDate: '2025-11-15',
            timeOfDay: '09:00',
            timeZone: 'Europe/Berlin',
            end: { kind: 'count', count: 12 },
          },
        }),
        schedules.T0,
      ],
      [schedules.registrationReply({ kind: 'accepted', recurringPaymentId: '78' }), schedules.T0],
    );
    expect(late.events[0]).toMatchObject({ type: 'schedule-created', skippedCycles: 2 });
    late
      .when(schedules.chargeCallback(1, '1000011'), T1)
      .then([{ type: 'gateway-charge-reported', cycle: 2, clientOrderId: `${SCHEDULE_ID}-1` }]);
  });

  it('a registration the gateway has charged under is never declared failed', () => {
    const charging = schedules
      .withPolicy(
        schedules.GATEWAY_POLICY,
        [schedules.create(), schedules.T0],
        [schedules.registrationReply({ kind: 'unknown', reason: 'timeout' }), schedules.T0],
      )
      .and(schedules.chargeCallback(1, '1000007'), T1);
    const polled = charging.when(schedules.registrationTimer('status-poll', 1), T1);
    charging
      .and(schedules.registrationTimer('status-poll', 1), T1)
      .when(
        schedules.statusAnswer(sentStatus(polled), {
          kind: 'accepted',
          report: { status: 'declined', transactionType: 'create-recurring-payment' },
        }),
        T1,
      )
      .then([{ type: 'schedule-registration-unknown', alert: true }])
      .thenStatus('registering');
  });
});
