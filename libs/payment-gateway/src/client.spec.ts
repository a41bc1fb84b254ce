import { startServer, type TestServer } from '../test/support';
import { PaymentGatewayClient, type CallOptions, type OperationCall } from './client';

/**
 * The client keeps each operation's route for its configured endpoint: a call with the
 * configured endpoint, first or later, and a call with another endpoint between them, each go
 * where `prepare` (which builds its URL afresh every time) says, with the same body.
 */
describe('routes kept per operation', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer((_req, res) => {
      res.setHeader('content-type', 'application/vnd.pay+json; charset=utf-8');
      res.end(JSON.stringify({ type: 'status-response', status: 'approved' }));
    });
  });
  afterAll(() => server.close());

  it('the configured endpoint and per-call endpoints, in any order', async () => {
    const client = new PaymentGatewayClient({
      baseUrl: `${server.baseUrl}//`,
      endpoint: { endpointId: '42' },
      login: 'm',
      controlKey: 'k',
    });
    const calls: OperationCall[] = [
      { id: 'v2/status', fields: { client_orderid: 'c1', orderid: '9' } },
      {
        id: '3ds/v1/upload-cres-result',
        fields: { 'client-order-id': 'c', orderid: 'o', cRes: 'e' },
      },
    ];
    const endpoints: (CallOptions | undefined)[] = [
      undefined,
      undefined,
      { endpoint: { endpointGroupId: '77' } },
      { endpoint: { endpointId: '43' } },
      { endpoint: { endpointId: '42' } },
      undefined,
    ];
    try {
      for (const options of endpoints) {
        for (const call of calls) {
          const before = server.requests.length;
          const expected = client.prepare(call.id, call.fields, options);
          const result = await client.call(call, options);
          const sent = server.requests[before];
          expect(sent.url).toBe(expected.url.pathname);
          expect(sent.body).toBe(expected.body);
          expect(result.operation).toBe(call.id);
        }
      }
      expect(server.requests.map((r) => r.url).slice(0, 6)).toEqual([
        '/paynet/api/v2/status/42',
        '/paynet/api/3ds/v1/upload-cres-result/42',
        '/paynet/api/v2/status/42',
        '/paynet/api/3ds/v1/upload-cres-result/42',
        '/paynet/api/v2/status/group/77',
        '/paynet/api/3ds/v1/upload-cres-result/77',
      ]);
    } finally {
      await client.close();
    }
  });
});
