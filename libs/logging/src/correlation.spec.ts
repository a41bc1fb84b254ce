import { correlationIdFromHeaders, traceIdFromTraceparent } from './correlation';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('correlationIdFromHeaders', () => {
  it('prefers x-correlation-id', () => {
    expect(
      correlationIdFromHeaders({
        'x-correlation-id': 'abc-123',
        traceparent: `00-${TRACE}-00f067aa0ba902b7-01`,
      }),
    ).toBe('abc-123');
  });

  it('falls back to the traceparent trace id', () => {
    expect(correlationIdFromHeaders({ traceparent: `00-${TRACE}-00f067aa0ba902b7-01` })).toBe(
      TRACE,
    );
  });

  it('rejects unsafe or invalid values and generates a UUID', () => {
    const id = correlationIdFromHeaders({
      'x-correlation-id': 'evil\n{"level":"fatal"}',
      traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
    });
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(traceIdFromTraceparent('garbage')).toBeUndefined();
  });
});
