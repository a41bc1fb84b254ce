import type { GatewayStatusRequest } from '@payments/contracts';
import { SCHEDULE_ID } from '@payments/contracts/testing';
import * as schedules from '../../../../test/kits/recurring-schedule.kit';
import { addMs } from '../../../domain/decision';
import { chargeSubjectId, registrationRequestId } from './gateway-charged';

const T1 = addMs(schedules.T0, 5_000);

/** The status queries a refresh asked for: its only effects, and no event. */
function asked(outcome: schedules.Outcome): GatewayStatusRequest[] {
  expect(outcome.decision).toMatchObject({ outcome: 'accepted', events: [] });
  return outcome.decision.effects.map((effect) => {
    if (effect.type !== 'send-gateway-request' || effect.request.operation !== 'status')
      throw new Error(`not a status query: ${JSON.stringify(effect)}`);
    return effect.request;
  });
}

describe("refresh-schedule-status (an operator's refresh-status / resolve-unknown on a schedule): asks the gateway now, its answer decides", () => {
  it('a registration whose reply was lost: a status query about it by its client_orderid; the answer registers it', () => {
    const unknown = schedules
      .withPolicy(schedules.GATEWAY_POLICY, [schedules.create(), schedules.T0])
      .and(schedules.registrationReply({ kind: 'unknown', reason: 'timeout' }));
    const [query, ...more] = asked(unknown.when(schedules.refresh(), T1));
    expect(more).toEqual([]);
    expect(query).toMatchObject({
      clientOrderId: SCHEDULE_ID,
      subjectRequestId: registrationRequestId(SCHEDULE_ID),
      subjectOperation: 'create-recurring-payment',
    });
    if (query === undefined) throw new Error('no query');
    unknown
      .when(
        schedules.statusAnswer(query, {
          kind: 'accepted',
          report: { status: 'approved', transactionType: 'create-recurring-payment' },
          recurringPaymentId: '77',
        }),
        T1,
      )
      .then([{ type: 'schedule-registered', recurringPaymentId: '77', resolvedBy: 'status' }]);
  });

  it("a gateway charge still being confirmed: a status query about that very order; the answer records the cycle's charge", () => {
    const registered = schedules.registered();
    // Registered, nothing in flight: nothing to ask.
    registered.when(schedules.refresh(), T1).thenRejected('NOTHING_TO_REFRESH');
    const reported = registered.and(schedules.chargeCallback(1, '1000007'), T1);
    const [query, ...more] = asked(reported.when(schedules.refresh(), T1));
    expect(more).toEqual([]);
    expect(query).toMatchObject({
      gatewayOrderId: '1000007',
      subjectRequestId: chargeSubjectId(SCHEDULE_ID, '1000007'),
      subjectOperation: 'rebill',
    });
    if (query === undefined) throw new Error('no query');
    reported
      .when(
        schedules.statusAnswer(query, {
          kind: 'accepted',
          gatewayOrderId: '1000007',
          report: {
            status: 'approved',
            gatewayOrderId: '1000007',
            amount: { minor: 999, currency: 'EUR' },
            transactionType: 'sale',
          },
        }),
        T1,
      )
      .then([{ type: 'gateway-cycle-charged', cycle: 0, gatewayOrderId: '1000007' }]);
  });

  it('a schedule we charge ourselves has nothing of its own at the gateway: refused, naming the rebill payment to refresh', () => {
    const created = schedules.givenInputs([schedules.create(), schedules.T0]);
    created.when(schedules.refresh(), T1).thenRejected('NOTHING_TO_REFRESH');
    const charging = created.and(
      schedules.dueTimer(created.state),
      addMs(schedules.T0, 31 * 86_400_000),
    );
    const refused = charging.when(schedules.refresh(), T1).thenRejected('NOTHING_TO_REFRESH');
    const state = charging.state;
    const paymentId = 'charge' in state ? state.charge?.paymentId : undefined;
    expect(paymentId).toEqual(expect.any(String));
    expect(refused.decision).toMatchObject({
      rejection: { message: expect.stringContaining(paymentId ?? '?') },
    });
  });
});
