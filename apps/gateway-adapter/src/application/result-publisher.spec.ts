import type { GatewayClassification } from '@payments/contracts';
import { type ResultAddress, statusClassEcho } from './result-publisher';

const URGENT_SINCE = '2026-11-29T10:00:00.000Z';
const query: ResultAddress = {
  requestId: '10000000-0000-4000-8000-000000000001',
  paymentId: '10000000-0000-4000-8000-000000000002',
  operation: 'status',
  attempt: 1,
  subjectRequestId: '10000000-0000-4000-8000-000000000003',
  priority: 'urgent',
  urgentSince: URGENT_SINCE,
};

describe("statusClassEcho: what a status query's result says of its class", () => {
  it.each<[string, GatewayClassification]>([
    ['held back by the budget', { kind: 'not-sent', reason: 'status budget spent' }],
    ['not answered by the gateway (a 5xx)', { kind: 'unknown', reason: 'server-error' }],
  ])('%s: its class and when its urgency began, so it is asked again in it', (_n, result) => {
    expect(statusClassEcho(query, result)).toEqual({
      priority: 'urgent',
      urgentSince: URGENT_SINCE,
    });
  });

  it('an answer, a money operation or a query that named no class echoes nothing', () => {
    expect(statusClassEcho(query, { kind: 'rejected', code: '403', message: 'refused' })).toEqual(
      {},
    );
    expect(
      statusClassEcho({ ...query, operation: 'sale' }, { kind: 'unknown', reason: 'x' }),
    ).toEqual({});
    const { priority: _p, urgentSince: _u, ...unclassed } = query;
    expect(statusClassEcho(unclassed, { kind: 'unknown', reason: 'x' })).toEqual({});
  });

  it('an urgent query by its age (no hint) echoes its class only', () => {
    const { urgentSince: _u, ...byAge } = query;
    expect(statusClassEcho(byAge, { kind: 'unknown', reason: 'timeout' })).toEqual({
      priority: 'urgent',
    });
  });
});
