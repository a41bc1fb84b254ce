import { CORRELATION_ID_HEADER } from '@payments/logging';
import { answerHeaders } from './handoff-keeper';

describe('answerHeaders', () => {
  it('keeps only the trace and correlation headers a handed-off answer continues', () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(
      answerHeaders({
        traceparent,
        tracestate: 'vendor=1',
        [CORRELATION_ID_HEADER]: 'corr-1',
        ce_id: 'c1',
        ce_type: 'payments.gateway.request.sale',
        'x-anything': '4111111111111111',
      }),
    ).toEqual({ traceparent, tracestate: 'vendor=1', [CORRELATION_ID_HEADER]: 'corr-1' });
    expect(answerHeaders({})).toEqual({});
  });
});
