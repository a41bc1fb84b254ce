import { serializeRequest, serializeResponse } from './http-serializers';

describe('HTTP log serializers', () => {
  it('keeps the path and query parameter names but no values, and only allow-listed headers', () => {
    const line = JSON.stringify(
      serializeRequest({
        id: 'abc-1',
        method: 'GET',
        url: '/callbacks/gateway/1111?status=approved&control=652ace404c4dfe8bba069ecee594ec23a89340e1&email=jane%40example.com',
        headers: {
          authorization: 'OAuth oauth_signature="c2lnbmF0dXJl"',
          cookie: 'session=secret-session',
          'user-agent': 'gateway/1.0',
        },
      }),
    );
    expect(line).toContain('/callbacks/gateway/1111');
    expect(line).toContain('"queryKeys":["status","control","email"]');
    expect(line).toContain('gateway/1.0');
    for (const secret of [
      '652ace404c4d',
      'jane',
      'example.com',
      'c2lnbmF0dXJl',
      'secret-session',
      'approved',
    ]) {
      expect(line).not.toContain(secret);
    }
  });

  it('masks a card number in the path, a query name or a logged header', () => {
    const pan = '4111111111111111';
    const line = JSON.stringify(
      serializeRequest({
        method: 'GET',
        url: `/callbacks/gateway/${pan}?${pan}=1`,
        headers: { 'user-agent': `card ${pan}` },
      }),
    );
    expect(line).toContain('/callbacks/gateway/411111******1111');
    expect(line).not.toContain(pan);
  });

  it('handles a URL without a query and a raw request', () => {
    expect(serializeRequest({ method: 'POST', raw: { url: '/return/1111' } })).toEqual({
      id: undefined,
      method: 'POST',
      path: '/return/1111',
      headers: {},
    });
    expect(serializeResponse({ statusCode: 503 })).toEqual({ statusCode: 503 });
  });
});
