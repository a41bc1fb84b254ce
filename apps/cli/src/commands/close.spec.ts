import { closeCsv, closeLines } from './close';

const close = {
  type: 'day-closed' as const,
  closeId: '00000000-0000-4000-8000-00000000c105',
  merchant: { endpointId: '1111' },
  day: '2026-11-28',
  timeZone: 'Europe/Berlin',
  from: '2026-11-27T23:00:00.000Z',
  to: '2026-11-28T23:00:00.000Z',
  totals: [
    { eventType: 'approved', currency: 'EUR', count: 2, sumMinor: '350' },
    { eventType: 'returned', currency: 'EUR', count: 1, sumMinor: '50' },
  ],
  count: 3,
  lastMerchantSeq: 9,
  occurredAt: '2026-11-28T23:15:00.000Z',
  closedBy: 'scheduler',
  fresh: false,
};

describe('payments close', () => {
  it('prints the totals as CSV, a row per type and currency, and an empty day as one row', () => {
    expect(
      closeCsv([close, { ...close, merchant: { endpointId: '2222' }, totals: [], count: 0 }]),
    ).toEqual([
      'day,endpoint_id,time_zone,from,to,event_type,currency,count,sum_minor,last_merchant_seq',
      '2026-11-28,1111,Europe/Berlin,2026-11-27T23:00:00.000Z,2026-11-28T23:00:00.000Z,approved,EUR,2,350,9',
      '2026-11-28,1111,Europe/Berlin,2026-11-27T23:00:00.000Z,2026-11-28T23:00:00.000Z,returned,EUR,1,50,9',
      '2026-11-28,2222,Europe/Berlin,2026-11-27T23:00:00.000Z,2026-11-28T23:00:00.000Z,,,0,0,9',
    ]);
  });

  it('prints a line per merchant and per type', () => {
    expect(closeLines([close])).toEqual([
      '2026-11-28 endpoint=1111 zone=Europe/Berlin [2026-11-27T23:00:00.000Z .. 2026-11-28T23:00:00.000Z) closed before by scheduler: 3 money event(s), last merchantSeq 9',
      '  approved EUR count=2 sum=350',
      '  returned EUR count=1 sum=50',
    ]);
  });
});
