import { type CloseReport, closeCsv, closeLines, reportCsv } from './close';

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

  const report: CloseReport = {
    endpointId: '1111',
    day: '2026-11-28',
    version: 2,
    runId: '00000000-0000-4000-8000-000000000002',
    timeZone: 'Europe/Berlin',
    from: '2026-11-27T23:00:00.000Z',
    to: '2026-11-28T23:00:00.000Z',
    state: 'open-with-exceptions',
    trigger: 'settlement',
    requestedBy: 'day-close',
    startedAt: '2026-11-29T00:00:00.000Z',
    completedAt: '2026-11-29T00:01:00.000Z',
    totals: [
      {
        currency: 'EUR',
        type: 'approved',
        count: 2,
        oursMinor: '350',
        gatewayMinor: '300',
        differenceMinor: '50',
      },
    ],
    lines: [
      {
        sagaId: 's-1',
        flow: 'card-payment',
        requestId: 'r-1',
        operation: 'sale',
        type: 'approved',
        currency: 'EUR',
        oursMinor: '300',
        gatewayMinor: '300',
        differenceMinor: '0',
        status: 'matched',
        verdict: 'match',
      },
      {
        sagaId: 's-2',
        flow: 'card-payment',
        requestId: 'r-2',
        operation: 'sale',
        type: 'approved',
        currency: 'EUR',
        oursMinor: '50',
        gatewayMinor: null,
        differenceMinor: '50',
        status: 'unconfirmed',
        verdict: 'unanswered, twice',
        caseId: 'c-2',
      },
    ],
    exceptions: [
      {
        kind: 'unconfirmed',
        sagaId: 's-2',
        flow: 'card-payment',
        requestId: 'r-2',
        operation: 'sale',
        currency: 'EUR',
        minor: '50',
        caseId: 'c-2',
      },
    ],
  };

  it('writes the close report as two CSV files: totals per currency and type, a line per operation (a field with a comma quoted)', () => {
    expect(reportCsv([report])).toEqual({
      totals: [
        'day,endpoint_id,time_zone,version,state,currency,type,count,ours_minor,gateway_minor,difference_minor',
        '2026-11-28,1111,Europe/Berlin,2,open-with-exceptions,EUR,approved,2,350,300,50',
      ],
      lines: [
        'day,endpoint_id,version,saga_id,flow,request_id,operation,type,currency,ours_minor,gateway_minor,difference_minor,status,verdict,case_id',
        '2026-11-28,1111,2,s-1,card-payment,r-1,sale,approved,EUR,300,300,0,matched,match,',
        '2026-11-28,1111,2,s-2,card-payment,r-2,sale,approved,EUR,50,,50,unconfirmed,"unanswered, twice",c-2',
      ],
    });
    // A report still reconciling has no rows yet.
    expect(
      reportCsv([{ ...report, state: 'reconciling', totals: undefined, lines: undefined }]).lines,
    ).toHaveLength(1);
  });

  it('prints the close report under its close: state, totals, each exception', () => {
    expect(closeLines([{ ...close, totals: [], report }]).slice(1)).toEqual([
      `  report v2 open-with-exceptions (settlement by day-close, run ${report.runId})`,
      '    approved EUR count=2 ours=350 gateway=300 difference=50',
      '    exception unconfirmed: card-payment saga s-2 request r-2 sale 50 EUR case c-2',
    ]);
    expect(closeLines([{ ...close, totals: [], report: null }]).slice(1)).toEqual([
      '  report: none yet',
    ]);
  });
});
