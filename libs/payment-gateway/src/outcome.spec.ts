import { startServer, type TestServer } from '../test/support';
import { PaymentGatewayClient, type OperationCall } from './client';
import { REPLY_RULES, replyVerdict, type ReplyFacts, type ReplyVerdict } from './outcome';

/**
 * The classification as the README's outcome table states it, written as the if-chain the
 * client had before the table (the oracle the table must agree with on every input).
 */
function oracle(f: ReplyFacts): ReplyVerdict {
  const s = f.httpStatus;
  const fromErrorReply = (): ReplyVerdict =>
    f.errorType === 'validation-error'
      ? { outcome: 'rejected', reason: 'validation' }
      : { outcome: 'rejected', reason: 'business-rule' };
  if (s >= 500) return { outcome: 'unknown', reason: 'server-error', errorMessage: true };
  if (s === 401 || s === 403) return { outcome: 'rejected', reason: 'authentication' };
  if (s === 429) return { outcome: 'not-sent', reason: 'rate-limited' };
  if (s >= 400) {
    if (s === 408) return { outcome: 'unknown', reason: 'unexpected-status' };
    if (f.errorType !== undefined) return fromErrorReply();
    return s === 400 || s === 422
      ? { outcome: 'rejected', reason: 'validation' }
      : { outcome: 'rejected', reason: 'http-status' };
  }
  if (s < 200 || s >= 300) return { outcome: 'unknown', reason: 'unexpected-status' };
  if (!f.parsed) return { outcome: 'unknown', reason: 'unparseable-reply' };
  if (f.errorType !== undefined) return fromErrorReply();
  return { outcome: 'accepted' };
}

describe('REPLY_RULES', () => {
  const facts: ReplyFacts[] = [];
  for (let httpStatus = 100; httpStatus < 600; httpStatus++) {
    facts.push({ httpStatus, parsed: false });
    facts.push({ httpStatus, parsed: true });
    facts.push({ httpStatus, parsed: true, errorType: 'validation-error' });
    facts.push({ httpStatus, parsed: true, errorType: 'error' });
  }

  it('agrees with the README table on every status, parse result and error reply type', () => {
    const disagreements = facts.filter(
      (f) => JSON.stringify(replyVerdict(f)) !== JSON.stringify(oracle(f)),
    );
    expect(disagreements).toEqual([]);
  });

  it('every row decides some input (no dead row shadowed by an earlier one)', () => {
    const used = new Set(facts.map((f) => REPLY_RULES.findIndex((r) => r.matches(f))));
    expect(REPLY_RULES.map((_, i) => used.has(i))).toEqual(REPLY_RULES.map(() => true));
  });
});

describe('client.call with an operation call object', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer((_req, res) => {
      res.statusCode = 503;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ type: 'error', 'error-message': 'busy' }));
    });
  });
  afterAll(() => server.close());

  it('sends the same request and classifies by the operation the object names', async () => {
    const client = new PaymentGatewayClient({
      baseUrl: server.baseUrl,
      endpoint: { endpointId: '42' },
      login: 'm',
      controlKey: 'k',
    });
    try {
      const calls: OperationCall<'v2/status' | 'v2/void'>[] = [
        { id: 'v2/status', fields: { client_orderid: 'c1', orderid: '9' } },
        { id: 'v2/void', fields: { client_orderid: 'c1', orderid: '9', comment: 'x' } },
      ];
      const byObject = [];
      for (const call of calls) byObject.push(await client.call(call));
      const byId = [
        await client.call('v2/status', { client_orderid: 'c1', orderid: '9' }),
        await client.call('v2/void', { client_orderid: 'c1', orderid: '9', comment: 'x' }),
      ];
      const strip = ({ durationMs: _d, ...rest }: { durationMs: number }) => rest;
      expect(byObject.map(strip)).toEqual(byId.map(strip));
      expect(byObject.map((r) => [r.operation, r.outcome])).toEqual([
        ['v2/status', 'unknown'],
        ['v2/void', 'unknown'],
      ]);
      // status is read-only (retry it), void mutates (resolve by a status query).
      expect(
        byObject.map((r) => (r.outcome === 'unknown' ? r.resolveByStatusQuery : undefined)),
      ).toEqual([false, true]);
      expect(server.requests.map((r) => r.url)).toEqual([
        '/paynet/api/v2/status/42',
        '/paynet/api/v2/void/42',
        '/paynet/api/v2/status/42',
        '/paynet/api/v2/void/42',
      ]);
    } finally {
      await client.close();
    }
  });
});
