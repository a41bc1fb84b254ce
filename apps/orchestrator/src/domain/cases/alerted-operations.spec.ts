import { expectedChargeSubjectId } from '../../flows/recurring-schedule/domain/gateway-charged-model';
import { alertedOperations, waitingOperations } from './alerted-operations';

/** What the case sweep reads of a saga's stored state (issue 33 item 3). */
describe('alerted operations of a saga (what a case is about)', () => {
  const R1 = '10000000-0000-4000-8000-000000000001';
  const R2 = '10000000-0000-4000-8000-000000000002';
  const S = '10000000-0000-4000-8000-0000000000aa';

  it("a card payment: its operation in flight and its create-card-ref; a get-card-info is no case's", () => {
    const state = {
      inFlight: { operation: 'return', requestId: R1, alerted: true, concern: 'no-trace' },
      cardRefRequest: { operation: 'create-card-ref', requestId: R2, alerted: true },
    };
    expect(alertedOperations('card-payment', state)).toEqual([
      expect.objectContaining({ operation: 'return', requestId: R1, concern: 'no-trace' }),
      expect.objectContaining({
        operation: 'create-card-ref',
        requestId: R2,
        evidence: { by: 'request', requestId: R2 },
      }),
    ]);
    const info = { cardRefRequest: { operation: 'get-card-info', requestId: R2, alerted: true } };
    expect(waitingOperations('card-payment', info)).toEqual([]);
    // Another flow's state is read for its operation in flight alone.
    expect(alertedOperations('payout', state).map((o) => o.requestId)).toEqual([R1]);
  });

  it('waiting but not alerted: waiting, not alerted', () => {
    const state = { cardRefRequest: { operation: 'create-card-ref', requestId: R2 } };
    expect(waitingOperations('card-payment', state).map((o) => o.requestId)).toEqual([R2]);
    expect(alertedOperations('card-payment', state)).toEqual([]);
  });

  it("a gateway-charged schedule: its registration while registering, charges being confirmed, cycles alerted not-found — each at the schedule's amount, with its own evidence", () => {
    const amount = { minor: 1_500, currency: 'EUR' };
    const state = {
      status: 'registered',
      terms: { scheduleId: S, amount },
      // Registered: a registration left in the state is no longer waited for.
      registration: { operation: 'create-recurring-payment', requestId: R1, alerted: true },
      charges: [
        {
          gatewayOrderId: 'gw-1',
          cycle: 1,
          outcome: 'confirming',
          op: { operation: 'rebill', requestId: R2, alerted: true },
        },
        { gatewayOrderId: 'gw-0', cycle: 0, outcome: 'charged' },
      ],
      missingCycles: [3],
    };
    expect(alertedOperations('recurring-schedule', state)).toEqual([
      {
        operation: 'rebill',
        requestId: R2,
        alerted: true,
        amount,
        evidence: { by: 'gateway-order', gatewayOrderId: 'gw-1' },
      },
      {
        operation: 'rebill',
        requestId: expectedChargeSubjectId(S, 3),
        alerted: true,
        concern: 'no-trace',
        amount,
        evidence: { by: 'cycle', cycle: 3, types: ['gateway-charge-alert'] },
      },
    ]);
    expect(
      alertedOperations('recurring-schedule', { ...state, status: 'registering', charges: [] }).map(
        (o) => [o.operation, o.evidence.by],
      ),
    ).toEqual([
      ['create-recurring-payment', 'type-prefix'],
      ['rebill', 'cycle'],
    ]);
  });

  it('a row of another shape says nothing', () => {
    expect(alertedOperations('card-payment', null)).toEqual([]);
    expect(
      alertedOperations('recurring-schedule', {
        status: 'registering',
        registration: { requestId: R1, unknown: true, resent: false },
      }),
    ).toEqual([]);
  });
});
