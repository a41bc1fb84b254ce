/**
 * One slow endpoint holds up no other, on the real broker, a test PostgreSQL database and the
 * sandbox over real HTTP. The harness gives the adapter one partition consumed one message at a
 * time: the worst case for a consumer that made the gateway call inside its message handler,
 * where every request behind a slow one waited for it.
 *
 * The second sandbox merchant's endpoint (1213) may have one call in flight and three requests in
 * its lane; the gateway takes 2 s over each of its sales. Five sales go to it, then one to endpoint
 * 1113: the first three are accepted into its lane and sent one after another; the fourth and
 * fifth find the lane full and are answered not-sent with retryAt at once (nothing sent, nothing
 * charged); the sale to 1113 is answered, accepted, before the slow endpoint's third.
 */
import { type GatewayRequest } from '@payments/contracts';
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
import { SANDBOX_MERCHANT } from '../../../test/support/adapter-sandbox';
import { ADAPTER_REASONS } from '../src/domain/classify';

jest.setTimeout(180_000);

const keys = sealingKeys();
/** The sandbox's second merchant (apps/gateway-sandbox/sandbox.merchants.json, test-only values). */
const SLOW = {
  endpointId: '1213',
  login: 'sandbox-merchant-b',
  controlKey: '6C0E2F4A-93D1-4B7E-A5C8-1F2D3E4B5A69',
};
const LANE = 3;
// Long enough that the lane cannot drain one slow sale before the adapter has taken all of them
// from the topic, even on a starved machine (at 2 s a fourth was once admitted under load 25).
const SLOW_MS = 6_000;

function sale(endpointId: string): GatewayRequest {
  return saleRequest(keys.publicPem, 'lane', {
    merchant: { endpointId },
    amount: { minor: 1900, currency: 'USD' },
    orderDescription: 'Endpoint lanes test order',
  });
}

describe('endpoint lanes: a slow endpoint holds up no other', () => {
  let stack: AdapterStack;

  beforeAll(async () => {
    stack = await startAdapterStack({
      database: 'gateway_adapter_lanes',
      keys,
      endpoints: [
        { endpointId: SANDBOX_MERCHANT.endpointId },
        { ...SLOW, limits: { maxConcurrent: 1, maxWaitMs: 30_000, maxQueued: LANE } },
      ],
    });
  }, 120_000);

  afterAll(() => stack?.stop());

  it('answers the other endpoint while the slow one works through its lane; beyond the lane, not-sent with retryAt', async () => {
    const slow = Array.from({ length: LANE + 2 }, () => sale(SLOW.endpointId));
    for (const s of slow) {
      await stack.sandbox.addFault({
        clientOrderId: s.clientOrderId,
        operation: 'SALE',
        latencyMs: SLOW_MS,
      });
    }
    const other = sale(SANDBOX_MERCHANT.endpointId);
    await produceRequests([...slow, other]);

    const firstResult = async (request: GatewayRequest) => {
      const [result] = await resultsFor(stack.collector, request.requestId, 1, 90_000);
      if (!result) throw new Error(`no result for ${request.requestId}`);
      return result;
    };
    const answers = await Promise.all([...slow, other].map(firstResult));
    // The slow sales lie on several partitions, so the adapter takes them in no fixed order: the
    // first LANE it takes are accepted into the lane, the rest answered not-sent at once.
    const kindOf = (i: number) => answers[i]?.value.result.kind;
    const admitted = slow.filter((_, i) => kindOf(i) === 'accepted');
    const refusedIndexes = slow.flatMap((_, i) => (kindOf(i) === 'not-sent' ? [i] : []));
    expect(admitted).toHaveLength(LANE);
    expect(refusedIndexes).toHaveLength(2);
    expect(kindOf(slow.length)).toBe('accepted');
    // A gateway answer carries when it came (time to truth is timed from it), no later than its
    // publication; an answer of the adapter's own (not-sent) carries none.
    const answered = answers[slow.length]?.value;
    expect(Date.parse(answered?.answeredAt ?? '')).toBeLessThanOrEqual(
      Date.parse(answered?.completedAt ?? ''),
    );
    for (const i of refusedIndexes) expect(answers[i]?.value.answeredAt).toBeUndefined();
    for (const i of refusedIndexes) {
      const refused = answers[i];
      if (refused === undefined) throw new Error('no answer');
      const result = refused.value.result;
      expect(result).toMatchObject({ kind: 'not-sent', reason: ADAPTER_REASONS.queueFull });
      expect(Date.parse(result.kind === 'not-sent' ? (result.retryAt ?? '') : '')).toBeGreaterThan(
        Date.parse(refused.value.completedAt),
      );
    }

    // An ordering: the other endpoint's sale was answered before the slow endpoint's last sale
    // in its lane (which the gateway reached only after two others of 2 s each).
    const order = stack.collector.messages.map((m) =>
      JSON.parse(m.value?.toString('utf8') ?? '{}'),
    );
    const position = (r: GatewayRequest) =>
      order.findIndex((v: { requestId?: string }) => v.requestId === r.requestId);
    expect(position(other)).toBeLessThan(Math.max(...admitted.map(position)));

    // Charged once each where sent; nothing where held back.
    for (const s of [...admitted, other]) {
      await waitFor(
        async () => (await stack.sandbox.ledger(s.clientOrderId)).entries.length > 0,
        `the charge of ${s.clientOrderId} in the sandbox ledger`,
      );
      expect((await stack.sandbox.ledger(s.clientOrderId)).totals).toEqual({ charged: 1900 });
    }
    for (const i of refusedIndexes) {
      const s = slow[i];
      if (s === undefined) throw new Error('no sale');
      expect((await stack.sandbox.ledger(s.clientOrderId)).entries).toEqual([]);
    }
    // Every hand-off was answered and removed; the ledger holds the three sent slow sales and
    // the other (nothing for the two held back).
    const left = await withClient(stack.db.url, async (client) => {
      const handoffs = await client.query(
        'SELECT count(*)::int AS n FROM adapter_request_handoffs',
      );
      const sent = await client.query('SELECT count(*)::int AS n FROM adapter_sent_requests');
      return { handoffs: handoffs.rows[0]?.n as number, sent: sent.rows[0]?.n as number };
    });
    expect(left).toEqual({ handoffs: 0, sent: LANE + 1 });
  });
});
