/**
 * The adapter's own database out while a sale waits for its call, on the real broker, a test
 * PostgreSQL database (made unreachable: new connections refused, open ones cut, as a failover
 * does) and the sandbox over real HTTP.
 *
 * Endpoint 1113 may have one call in flight; the gateway takes 10 s over the first sale, so the
 * second waits in its lane for the slot. While it waits the database goes out; when the slot
 * frees, the second sale's run needs the database once more before its call (the hand-off's
 * fence), and that fails. The request was not sent: the run keeps its hand-off and runs again
 * once the database answers, and the sale reaches the gateway — once. Before (session 17's
 * failover suite), the run gave up, the lease ran out and the sweep answered `unknown` ("may
 * have been sent") for a request the gateway never had.
 */
import { type GatewayRequest } from '@payments/contracts';
import { DatabaseOutage } from '../../../scripts/stack/database-outage';
import { waitFor } from '../../../test/support/kafka';
import { withClient } from '../../../test/support/postgres';
import {
  type AdapterStack,
  produceRequests,
  resultsFor,
  saleRequest,
  sealingKeys,
  startAdapterStack,
} from '../../../test/support/adapter-harness';

jest.setTimeout(180_000);

const keys = sealingKeys();
// Long enough that the database is out before the first call ends on a loaded machine.
const FIRST_CALL_MS = 10_000;

function sale(): GatewayRequest {
  return saleRequest(keys.publicPem, 'outage', {
    amount: { minor: 2100, currency: 'USD' },
    orderDescription: 'Database outage test order',
  });
}

describe("the adapter's database out before a call", () => {
  let stack: AdapterStack;

  beforeAll(async () => {
    stack = await startAdapterStack({
      database: 'gateway_adapter_outage',
      keys,
      endpoints: [{ limits: { maxConcurrent: 1, maxWaitMs: 30_000, maxQueued: 4 } }],
    });
  }, 120_000);

  afterAll(() => stack?.stop());

  it('a sale whose run failed before its call is run again once the database answers, and sent once', async () => {
    const [first, second] = [sale(), sale()];
    await stack.sandbox.addFault({
      clientOrderId: first.clientOrderId,
      operation: 'SALE',
      latencyMs: FIRST_CALL_MS,
    });
    // The first takes the slot (its call 10 s at the gateway), then the second comes and waits
    // for it. Produced one after the other, each waited for: the requests topic may have several
    // partitions (an earlier suite of this worker created it), where two messages of different
    // payments are taken in any order — CI's run of session 17's stop: the second went first.
    const handedOff = (request: GatewayRequest) =>
      waitFor(
        () =>
          withClient(stack.db.url, async (client) => {
            const { rowCount } = await client.query(
              'SELECT 1 FROM adapter_request_handoffs WHERE request_id = $1',
              [request.requestId],
            );
            return rowCount === 1;
          }),
        `${request === first ? 'the first' : 'the second'} sale handed off`,
        30_000,
      );
    await produceRequests([first]);
    await handedOff(first);
    await produceRequests([second]);
    await handedOff(second);
    const outage = await DatabaseOutage.start(stack.db.url);
    let ended = false;
    try {
      // The scenario holds only if the first call is still at the gateway: the second waits.
      expect((await stack.sandbox.ledger(first.clientOrderId)).entries).toEqual([]);
      // The slot frees while the database is out: the second run's fence fails.
      await waitFor(
        () =>
          stack.adapter.logs.some(
            (line) =>
              line.includes(second.requestId) &&
              // Run again (now), or given up for the sweep to answer (before).
              (line.includes("the adapter's database failed before the call") ||
                line.includes('handed-off gateway request failed')),
          ),
        'the second run failing before its call',
        FIRST_CALL_MS + 20_000,
      ).catch((error: unknown) => {
        // What the adapter said of the two sales: the way to tell why, when it times out.
        const said = stack.adapter.logs.filter(
          (line) => line.includes(first.requestId) || line.includes(second.requestId),
        );
        throw new Error(`${String(error)}; the adapter's lines:\n${said.join('\n')}`);
      });
      expect((await stack.sandbox.ledger(second.clientOrderId)).entries).toEqual([]);
      await outage.end();
      ended = true;
    } finally {
      if (!ended) await outage.end();
    }

    const [answer] = await resultsFor(stack.collector, second.requestId, 1, 60_000);
    expect(answer?.value.result.kind).toBe('accepted');
    await waitFor(
      async () => (await stack.sandbox.ledger(second.clientOrderId)).entries.length > 0,
      'the second sale at the gateway',
      30_000,
    );
    expect((await stack.sandbox.ledger(second.clientOrderId)).totals).toEqual({ charged: 2100 });
    expect((await stack.sandbox.ledger(first.clientOrderId)).totals).toEqual({ charged: 2100 });
  });
});
