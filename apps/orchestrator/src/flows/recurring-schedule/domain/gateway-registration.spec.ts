import type { GatewayStatusRequest } from '@payments/contracts';
import type { ScheduleInput } from './decide';
import { MERCHANT, SCHEDULE_ID } from '@payments/contracts/testing';
import {
  cancel,
  chargeCallback,
  command,
  create,
  GATEWAY_POLICY,
  type Outcome,
  pause,
  registrationReply,
  resume,
  Scenario,
  statusAnswer,
  statusTimer,
  T0,
  timer,
  update,
  withPolicy,
} from '../../../../test/kits/recurring-schedule.kit';
import { chargeSubjectId, registrationRequestId } from './gateway-charged';

const eur = (minor: number) => ({ minor, currency: 'EUR' });
const T1 = '2026-01-01T00:00:05.000Z';

/** Created on an endpoint that registers with the gateway; the reply gave recurring id 77. */
const registered = (): Scenario =>
  withPolicy(
    GATEWAY_POLICY,
    [create(), T0],
    [registrationReply({ kind: 'accepted', recurringPaymentId: '77' }), T0],
  );

/** The status request the outcome sent (the first send-gateway-request effect). */
function sentStatus(outcome: Outcome): GatewayStatusRequest {
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
    withPolicy(GATEWAY_POLICY)
      .when(create(), T0)
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
    withPolicy({ ...GATEWAY_POLICY, gatewayRegistrationEndpoints: ['9999'] })
      .when(create(), T0)
      .thenEffects([{ type: 'set-charge-timer' }])
      .thenStatus('active');
  });

  it('sends a yearly schedule as 12-month intervals and refuses one the gateway cannot carry', () => {
    const yearly = (interval: number) =>
      create({
        rule: {
          period: 'year',
          interval,
          startDate: '2026-02-01',
          timeOfDay: '09:00',
          timeZone: 'Europe/Berlin',
          end: { kind: 'never' },
        },
      });
    const outcome = withPolicy(GATEWAY_POLICY).when(yearly(2), T0);
    outcome.thenEffects([
      { type: 'send-gateway-request', request: { period: 'month', interval: 24 } },
    ]);
    const [effect] = outcome.decision.effects;
    expect(effect?.type === 'send-gateway-request' && 'repeats' in effect.request).toBe(false);
    withPolicy(GATEWAY_POLICY).when(yearly(84), T0).thenRejected('INVALID_SCHEDULE');
  });
});

describe('schedule registered with the gateway: the registration reply', () => {
  it('when the gateway answers with a recurring-payment-id, then the schedule is registered', () => {
    withPolicy(GATEWAY_POLICY, [create(), T0])
      .when(registrationReply({ kind: 'accepted', recurringPaymentId: '77' }), T0)
      .then([{ type: 'schedule-registered', recurringPaymentId: '77', resolvedBy: 'reply' }])
      .thenStatus('registered');
  });

  it('when the gateway refuses it, then the registration failed and nothing can be changed', () => {
    const failed = withPolicy(GATEWAY_POLICY, [create(), T0]).and(
      registrationReply({ kind: 'rejected', code: '1', message: 'unknown card reference' }),
    );
    expect(failed.events.at(-1)).toMatchObject({
      type: 'schedule-registration-failed',
      reason: 'rejected',
      code: '1',
    });
    failed.when(pause(), T0).thenRejected('INVALID_STATE');
  });

  it('when it was not sent, then it is resent until the attempts run out, then failed', () => {
    withPolicy(GATEWAY_POLICY, [create(), T0])
      .when(registrationReply({ kind: 'not-sent', reason: 'circuit open' }, 1), T0)
      .then([])
      .thenEffects([
        {
          type: 'resend-registration',
          requestId: registrationRequestId(SCHEDULE_ID),
          attempt: 2,
          notBefore: T1,
        },
      ]);
    withPolicy(GATEWAY_POLICY, [create(), T0])
      .when(registrationReply({ kind: 'not-sent', reason: 'circuit open' }, 3), T0)
      .then([{ type: 'schedule-registration-failed', reason: 'not-sent' }]);
  });
});

describe('schedule registered with the gateway: an unknown registration is resolved, never guessed', () => {
  const unknown = () =>
    withPolicy(GATEWAY_POLICY, [create(), T0]).and(
      registrationReply({ kind: 'unknown', reason: 'timeout' }),
    );

  it('when the reply is lost, then status queries by its client_orderid are armed', () => {
    withPolicy(GATEWAY_POLICY, [create(), T0])
      .when(registrationReply({ kind: 'unknown', reason: 'timeout' }), T0)
      .then([{ type: 'schedule-registration-unknown', reason: 'timeout' }])
      .thenEffects([
        { type: 'set-status-timer', kind: 'registration-status', at: T1, timer: { poll: 1 } },
      ])
      .thenStatus('registering');
  });

  it('when the status query finds the registration, then it is registered (resolved by status)', () => {
    const polled = unknown().when(statusTimer(1), T1);
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
      { type: 'set-status-timer', kind: 'registration-status', timer: { poll: 2 } },
    ]);
    unknown()
      .when(
        statusAnswer(sentStatus(polled), {
          kind: 'accepted',
          report: { status: 'approved', transactionType: 'create-recurring-payment' },
          recurringPaymentId: '77',
        }),
        T1,
      )
      .then([{ type: 'schedule-registered', recurringPaymentId: '77', resolvedBy: 'status' }])
      .thenEffects([
        { type: 'cancel-status-timer', kind: 'registration-status' },
        // From now on every cycle's charge is asked for once its time has passed.
        { type: 'set-status-timer', kind: 'expected-charge', timer: { poll: 1, expectedCycle: 0 } },
      ]);
  });

  it('when the status query finds no trace, then it is sent once more under the same client_orderid; no trace again: failed', () => {
    const request = sentStatus(unknown().when(statusTimer(1), T1));
    const noTrace = {
      kind: 'rejected' as const,
      code: '2',
      message: 'unknown client_orderid',
      orderUnknown: true as const,
    };
    const resent = unknown().when(statusAnswer(request, noTrace), T1);
    resent.then([{ type: 'schedule-registration-resent' }]).thenEffects([
      { type: 'cancel-status-timer' },
      {
        type: 'resend-registration',
        requestId: registrationRequestId(SCHEDULE_ID),
        afterNoTrace: true,
        attempt: 4,
      },
    ]);
    const again = unknown()
      .and(statusAnswer(request, noTrace), T1)
      .and(registrationReply({ kind: 'unknown', reason: 'timeout' }, 4), T1);
    const second = sentStatus(again.when(statusTimer(1), T1));
    expect(second.requestId).not.toBe(request.requestId);
    again
      .when(statusAnswer(second, noTrace), T1)
      .then([{ type: 'schedule-registration-failed', reason: 'no-trace' }])
      .thenStatus('registration-failed');
  });

  it('a status query refused for another reason is no evidence; a status saying declined is a refusal, never sent again', () => {
    const request = sentStatus(unknown().when(statusTimer(1), T1));
    unknown()
      .when(
        statusAnswer(request, { kind: 'rejected', code: 'authentication', message: 'forbidden' }),
        T1,
      )
      .then([])
      .thenEffects([]);
    unknown()
      .when(
        statusAnswer(request, {
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
      .thenEffects([{ type: 'cancel-status-timer', kind: 'registration-status' }]);
  });

  it('when the status query cannot tell (processing, not sent), then nothing changes and the next poll is already armed', () => {
    const request = sentStatus(unknown().when(statusTimer(1), T1));
    unknown()
      .when(statusAnswer(request, { kind: 'not-sent', reason: 'status budget' }), T1)
      .then([])
      .thenEffects([]);
    // The last poll arms one more timer; when it fires the registration is still unknown: a
    // person must look (once), never a silent wait.
    unknown()
      .when(statusTimer(3), T1)
      .thenEffects([
        { type: 'send-gateway-request' },
        { type: 'set-status-timer', kind: 'registration-status', timer: { poll: 4 } },
      ]);
    unknown()
      .when(statusTimer(4), T1)
      .then([{ type: 'schedule-registration-unknown', alert: true }])
      .thenStatus('registering');
    unknown().when(statusTimer(5), T1).thenIgnored('TIMER_OBSOLETE');
  });
});

describe('schedule registered with the gateway: its charges', () => {
  it('when a verified callback names a charge, then it is reported (not charged) and confirmed by a status query about that order', () => {
    registered()
      .when(chargeCallback(3, '1000007'), T1)
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
          },
        },
        { type: 'set-status-timer', kind: 'charge-status:1000007', timer: { poll: 2 } },
      ]);
  });

  it('when the status reply about that order says approved, then the cycle is charged once; a second answer or callback changes nothing', () => {
    const reported = registered().and(chargeCallback(1, '1000007'), T1);
    const request = sentStatus(registered().when(chargeCallback(1, '1000007'), T1));
    const charged = reported.when(statusAnswer(request, approvedReport('1000007')), T1);
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
      .thenEffects([{ type: 'cancel-status-timer', kind: 'charge-status:1000007' }]);
    const after = reported.and(statusAnswer(request, approvedReport('1000007')), T1);
    after.when(statusAnswer(request, approvedReport('1000007')), T1).thenIgnored('STALE_RESULT');
    after.when(chargeCallback(1, '1000007'), T1).thenIgnored('CHARGE_ALREADY_RECORDED');
    after.when(statusTimer(2, '1000007'), T1).thenIgnored('TIMER_OBSOLETE');
    // A second charge of the gateway is another order: recorded on its own.
    after
      .when(chargeCallback(2, '1000008'), T1)
      .then([{ type: 'gateway-charge-reported', cycle: 1 }]);
  });

  it('when the status reply says declined, then the cycle is recorded declined (no dunning of ours)', () => {
    const request = sentStatus(registered().when(chargeCallback(1, '1000007', 'declined'), T1));
    registered()
      .and(chargeCallback(1, '1000007', 'declined'), T1)
      .when(
        statusAnswer(request, {
          kind: 'accepted',
          report: { status: 'declined', gatewayOrderId: '1000007', errorCode: '116' },
        }),
        T1,
      )
      .then([{ type: 'gateway-cycle-declined', cycle: 0, outcome: 'declined', code: '116' }])
      .thenEffects([{ type: 'cancel-status-timer' }]);
  });

  it('a callback alone never says money moved: no answer about that very order, no charge event', () => {
    const reported = registered().and(chargeCallback(1, '1000007'), T1);
    const request = sentStatus(registered().when(chargeCallback(1, '1000007'), T1));
    // About another order, still processing, an unknown outcome, approved without an amount.
    reported.when(statusAnswer(request, approvedReport('1000099')), T1).then([]);
    reported
      .when(statusAnswer(request, { kind: 'accepted', report: { status: 'processing' } }), T1)
      .then([]);
    reported.when(statusAnswer(request, { kind: 'unknown', reason: 'timeout' }), T1).then([]);
    reported
      .when(
        statusAnswer(request, {
          kind: 'accepted',
          report: { status: 'approved', gatewayOrderId: '1000007' },
        }),
        T1,
      )
      .then([]);
    // The next poll asks again.
    reported
      .when(statusTimer(2, '1000007'), T1)
      .thenEffects([
        { type: 'send-gateway-request' },
        { type: 'set-status-timer', timer: { poll: 3 } },
      ]);
    // The last poll arms one more timer: it says the asking is over.
    reported
      .when(statusTimer(3, '1000007'), T1)
      .thenEffects([
        { type: 'send-gateway-request' },
        { type: 'set-status-timer', timer: { poll: 4 } },
      ]);
    // Never confirmed: a person must look (once); nothing is assumed charged.
    reported
      .when(statusTimer(4, '1000007'), T1)
      .then([{ type: 'gateway-charge-alert', reason: 'unconfirmed', gatewayOrderId: '1000007' }])
      .thenEffects([]);
    reported.when(statusTimer(5, '1000007'), T1).thenIgnored('TIMER_OBSOLETE');
  });

  it("ignores callbacks that are not this schedule's charges and browser returns", () => {
    registered()
      .when(chargeCallback(1, '1', 'approved', { clientOrderId: SCHEDULE_ID }), T1)
      .thenIgnored('NOT_A_CHARGE_OF_THIS_SCHEDULE');
    registered()
      .when(chargeCallback(1, '1', 'approved', { clientOrderId: `${MERCHANT.endpointId}-1` }), T1)
      .thenIgnored('NOT_A_CHARGE_OF_THIS_SCHEDULE');
    registered()
      .when(chargeCallback(1, '1', 'approved', { source: 'browser-return' }), T1)
      .thenIgnored('NOT_A_CHARGE_OF_THIS_SCHEDULE');
  });

  it('records charges while the registration is still unknown (the callback proves it exists)', () => {
    withPolicy(
      GATEWAY_POLICY,
      [create(), T0],
      [registrationReply({ kind: 'unknown', reason: 'x' }), T0],
    )
      .when(chargeCallback(1, '1000007'), T1)
      .then([{ type: 'gateway-charge-reported', cycle: 0 }])
      .thenStatus('registering');
  });
});

describe('schedule registered with the gateway: never rebilled, and what the gateway cannot do', () => {
  it('a charge timer (left from anywhere) starts no rebill', () => {
    registered().when(timer(0), T1).thenIgnored('TIMER_OBSOLETE');
  });

  it.each([
    ['pause', pause()],
    ['resume', resume()],
    ['update', update(eur(1999))],
    ['cancel', cancel()],
  ])('refuses %s: the gateway offers no operation for it', (_name, input) => {
    const outcome = registered().when(input, T1);
    outcome.thenRejected('NOT_SUPPORTED_BY_GATEWAY');
    expect(outcome.decision.outcome === 'rejected' && outcome.decision.rejection.message).toContain(
      'recurring-payment-id 77',
    );
  });

  it('refuses a cycle outcome: there is no rebill to report one', () => {
    registered()
      .when(
        command({
          type: 'record-cycle-outcome',
          commandId: '00000000-0000-4000-8000-0000000000aa',
          scheduleId: SCHEDULE_ID,
          merchant: { ...MERCHANT },
          occurredAt: T0,
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
  const expected = (cycle: number, poll: number): ScheduleInput => ({
    kind: 'status-timer',
    timer: { poll, expectedCycle: cycle },
  });
  const noSuchOrder = {
    kind: 'rejected' as const,
    code: '1',
    message: 'unknown client_orderid',
    orderUnknown: true as const,
  };

  it('registered: the first cycle is expected a grace after its time', () => {
    withPolicy(GATEWAY_POLICY, [create(), T0])
      .when(registrationReply({ kind: 'accepted', recurringPaymentId: '77' }), T0)
      .thenEffects([
        { type: 'cancel-status-timer', kind: 'registration-status' },
        {
          type: 'set-status-timer',
          kind: 'expected-charge',
          at: CYCLE0_ASKED,
          timer: { poll: 1, expectedCycle: 0 },
        },
      ]);
  });

  it('a charge whose callback was lost is found by its client order id and recorded once, settled by that very answer', () => {
    const asked = registered().when(expected(0, 1), CYCLE0_ASKED);
    const request = sentStatus(asked);
    expect(request).toMatchObject({
      clientOrderId: `${SCHEDULE_ID}-1`,
      subjectOperation: 'rebill',
    });
    expect(request).not.toHaveProperty('gatewayOrderId');
    asked.thenEffects([
      { type: 'send-gateway-request' },
      { type: 'set-status-timer', kind: 'expected-charge', timer: { poll: 2, expectedCycle: 0 } },
    ]);
    const found = registered()
      .and(expected(0, 1), CYCLE0_ASKED)
      .when(statusAnswer(request, approvedReport('1000009')), CYCLE0_ASKED);
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
    const recorded = registered()
      .and(expected(0, 1), CYCLE0_ASKED)
      .and(statusAnswer(request, approvedReport('1000009')), CYCLE0_ASKED);
    recorded
      .when(chargeCallback(1, '1000009'), CYCLE0_ASKED)
      .thenIgnored('CHARGE_ALREADY_RECORDED');
    recorded
      .when(statusAnswer(request, approvedReport('1000009')), CYCLE0_ASKED)
      .thenIgnored('CHARGE_ALREADY_RECORDED');
  });

  it('no charge found while it is asked: a person is alerted (not-found) and the next cycle is expected', () => {
    let s = registered();
    const max = GATEWAY_POLICY.maxStatusPolls ?? 0;
    for (let poll = 1; poll <= max; poll += 1) {
      const asked = s.when(expected(0, poll), CYCLE0_ASKED);
      asked.then([]);
      s = s
        .and(expected(0, poll), CYCLE0_ASKED)
        .and(statusAnswer(sentStatus(asked), noSuchOrder), CYCLE0_ASKED);
    }
    s.when(expected(0, max + 1), CYCLE0_ASKED)
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
      ]);
  });

  it('a cycle its callback recorded is not asked for again', () => {
    registered()
      .and(chargeCallback(1, '1000007'), T1)
      .when(expected(0, 1), CYCLE0_ASKED)
      .then([])
      .thenEffects([
        { type: 'set-status-timer', kind: 'expected-charge', timer: { poll: 1, expectedCycle: 1 } },
      ]);
  });

  it("cycles whose time had passed at creation are not registered: the gateway's n-th charge is cycle first + n − 1", () => {
    const late = withPolicy(
      GATEWAY_POLICY,
      [
        create({
          rule: {
            period: 'month',
            interval: 1,
            startDate: '2025-11-15',
            timeOfDay: '09:00',
            timeZone: 'Europe/Berlin',
            end: { kind: 'count', count: 12 },
          },
        }),
        T0,
      ],
      [registrationReply({ kind: 'accepted', recurringPaymentId: '78' }), T0],
    );
    expect(late.events[0]).toMatchObject({ type: 'schedule-created', skippedCycles: 2 });
    late
      .when(chargeCallback(1, '1000011'), T1)
      .then([{ type: 'gateway-charge-reported', cycle: 2, clientOrderId: `${SCHEDULE_ID}-1` }]);
  });

  it('a registration the gateway has charged under is never declared failed', () => {
    const charging = withPolicy(
      GATEWAY_POLICY,
      [create(), T0],
      [registrationReply({ kind: 'unknown', reason: 'timeout' }), T0],
    ).and(chargeCallback(1, '1000007'), T1);
    const polled = charging.when(statusTimer(1), T1);
    charging
      .and(statusTimer(1), T1)
      .when(statusAnswer(sentStatus(polled), noSuchOrder), T1)
      .then([])
      .thenStatus('registering');
  });
});
