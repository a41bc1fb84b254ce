import { answerOf } from './admin-query.service';

const R = '10000000-0000-4000-8000-000000000001';
const at = (s: number) => new Date(Date.UTC(2026, 10, 29, 10, 0, s));
const row = (event_type: string, s: number, fields: Record<string, unknown> = {}) => ({
  event_type,
  occurred_at: at(s),
  event: { type: event_type, requestId: R, ...fields },
});

describe("answerOf: a request's answer as its history tells it", () => {
  it('a sale settled by its callback whose serial was learnt afterwards: answered approved, with that serial', () => {
    expect(
      answerOf(R, [
        row('operation-requested', 0),
        row('outcome-unknown', 1),
        row('approved', 2),
        row('accepted-by-gateway', 3, { serialNumber: 'sn-1' }),
      ]),
    ).toEqual({ result: 'approved', serial: 'sn-1', code: null, at: at(2).toISOString() });
  });

  it('a request the gateway took and has not answered yet: accepted-by-gateway, as before', () => {
    expect(
      answerOf(R, [
        row('operation-requested', 0),
        row('accepted-by-gateway', 1, { serialNumber: 'sn-2' }),
      ]),
    ).toMatchObject({ result: 'accepted-by-gateway', serial: 'sn-2' });
    expect(
      answerOf(R, [
        row('payout-requested', 0),
        row('payout-outcome-unknown', 1),
        row('payout-accepted-by-gateway', 2),
      ]),
    ).toMatchObject({ result: 'payout-accepted-by-gateway' });
  });
});
