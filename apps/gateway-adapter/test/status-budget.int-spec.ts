/**
 * Status polls do not starve money operations, on the real broker, a test
 * PostgreSQL database and the sandbox over real HTTP. One partition, one request at a time (the
 * harness), so the order below is the order the adapter handles them in.
 *
 * A flood of status queries for many payments (two back to back for each, as a poll backlog
 * leaves them) is produced together with a few sales behind them. The endpoint's rate limit is
 * tight (20 tokens, 1 per second, no waiting); its status budget allows 4 queries (refilling one
 * per 100 s, so none during the test) and keeps 10 tokens for money. Every sale must be sent and
 * accepted; exactly the first four payments' first status queries reach the gateway; every other
 * status query is answered not-sent at once with a retryAt. Before the status budget, the status
 * queries spent the whole bucket and the sales behind them were refused as rate-limited.
 */
import { randomUUID } from 'node:crypto';
import { type GatewayRequest } from '@payments/contracts';
import { waitFor } from '../../../test/support/kafka';
import {
  type AdapterStack,
  type CollectedResult,
  produceRequests,
  resultsFor,
  saleRequest,
  sealingKeys,
  startAdapterStack,
} from '../../../test/support/adapter-harness';
import { SANDBOX_MERCHANT } from '../../../test/support/adapter-sandbox';
import { register } from 'prom-client';
import { ADAPTER_REASONS } from '../src/domain/classify';

jest.setTimeout(180_000);

const keys = sealingKeys();
const PAYMENTS_POLLED = 40;
const STATUS_BURST = 4;
/** After how many status queries of the flood each sale is produced. */
const SALES_AFTER = [30, 45, 60, 75, 80];

function sale(): GatewayRequest {
  return saleRequest(keys.publicPem, 'bud', {
    amount: { minor: 2500, currency: 'USD' },
    orderDescription: 'Status budget test order',
  });
}

function status(paymentId: string): GatewayRequest {
  return {
    operation: 'status',
    requestId: randomUUID(),
    paymentId,
    merchant: { endpointId: SANDBOX_MERCHANT.endpointId },
    clientOrderId: `bud-${paymentId.slice(0, 8)}`,
    attempt: 1,
    requestedAt: new Date().toISOString(),
    subjectRequestId: randomUUID(),
    subjectOperation: 'sale',
    // An unknown backlog's polls (money may have moved): the whole status burst is theirs. The
    // classes' shares (routine leaves the urgent reserve) are status-budget.spec.ts's subject.
    priority: 'urgent',
    urgentSince: URGENT_SINCE,
  };
}

/** When the flood's urgency began: echoed on each held result (the orchestrator's heldPoll). */
const URGENT_SINCE = new Date(Date.now() - 60_000).toISOString();

describe('status budget: a flood of status queries and a few money operations', () => {
  let stack: AdapterStack;

  beforeAll(async () => {
    stack = await startAdapterStack({
      database: 'gateway_adapter_budget',
      keys,
      endpoints: [
        {
          limits: {
            ratePerSecond: 1,
            burst: 20,
            maxWaitMs: 0,
            statusRatePerSecond: 0.01,
            statusBurst: STATUS_BURST,
            moneyReservedTokens: 10,
            statusMinIntervalMs: 600_000,
          },
        },
      ],
    });
  }, 120_000);

  afterAll(() => stack?.stop());

  it('sends every money operation; polls get their bounded share, one per payment, the rest not-sent with retryAt', async () => {
    const polled = Array.from({ length: PAYMENTS_POLLED }, () => randomUUID());
    const statuses = polled.flatMap((paymentId) => [status(paymentId), status(paymentId)]);
    const sales = SALES_AFTER.map(() => sale());
    const flood: GatewayRequest[] = [];
    statuses.forEach((s, index) => {
      flood.push(s);
      SALES_AFTER.forEach((after, i) => {
        const money = sales[i];
        if (after === index + 1 && money) flood.push(money);
      });
    });
    expect(flood).toHaveLength(statuses.length + sales.length);
    await produceRequests(flood);

    const resultOf = async (request: GatewayRequest): Promise<CollectedResult['value']> => {
      const [first] = await resultsFor(stack.collector, request.requestId);
      if (!first) throw new Error(`no result for ${request.requestId}`);
      return first.value;
    };
    const saleResults = await Promise.all(sales.map(resultOf));
    const statusResults = await Promise.all(statuses.map(resultOf));

    // Every money operation was sent and taken by the gateway, none held back.
    expect(saleResults.map((r) => r.result.kind)).toEqual(sales.map(() => 'accepted'));

    // Status queries: exactly STATUS_BURST payments get their first query to the gateway (which
    // ones depends on how the partitions interleave: one payment's queries share a partition and
    // keep their order, different payments' do not); that payment's second query is not-sent
    // because its first was just sent; every other query is not-sent because the budget is spent.
    // Each not-sent carries a retryAt.
    const reasons = statuses.map((s, i) => {
      const r = statusResults[i]?.result;
      if (r?.kind !== 'not-sent') return 'sent';
      expect(Date.parse(r.retryAt ?? '')).toBeGreaterThan(Date.parse(s.requestedAt));
      // The class it was asked in, so the orchestrator asks again in it (issue #38).
      expect(statusResults[i]?.priority).toBe('urgent');
      // …urgent no longer than its urgency lasts from when it began (not from this hold).
      expect(statusResults[i]?.urgentSince).toBe(URGENT_SINCE);
      return r.reason;
    });
    // A payment's second query answered "sent moments ago" proves its first was admitted to the
    // gateway, whatever that first one's own result says (sent; "sent moments ago" again when its
    // result was lost and the request redelivered, seen once in CI on a loaded machine). So the
    // budget is judged on the pairs: STATUS_BURST admitted, every other payment refused twice.
    const perPayment = polled.map((_, p) => [reasons[2 * p], reasons[2 * p + 1]]);
    const tally: Record<string, number> = {};
    for (const [first, second] of perPayment) {
      const pair = `${first} | ${second}`;
      tally[pair] = (tally[pair] ?? 0) + 1;
    }
    // A payment is admitted when its first query went out (its second is then "sent moments
    // ago"; an admitted first query may also read so after a redelivery). A fresh-clone run of
    // 2026-11-26 once saw a first query refused as budget-spent with a token left and the second
    // sent: the bucket read the clock again and a millisecond had passed (fixed in TokenBucket;
    // the unit property test in status-budget.spec.ts replays it on a ticking clock).
    const once = new Set<string>(['sent', ADAPTER_REASONS.statusRecent]);
    const admitted = perPayment.filter(
      ([first, second]) => once.has(first ?? '') && second === ADAPTER_REASONS.statusRecent,
    );
    const refused = perPayment.filter(
      ([first, second]) =>
        first === ADAPTER_REASONS.statusBudget && second === ADAPTER_REASONS.statusBudget,
    );
    if (admitted.length !== STATUS_BURST || refused.length !== PAYMENTS_POLLED - STATUS_BURST) {
      throw new Error(
        `expected ${STATUS_BURST} payments admitted (first sent) and ${PAYMENTS_POLLED - STATUS_BURST} refused twice; the pairs were ${JSON.stringify(tally, null, 2)}`,
      );
    }

    // The sandbox charged each sale once (it processes asynchronously after accepting).
    for (const s of sales) {
      await waitFor(
        async () => (await stack.sandbox.ledger(s.clientOrderId)).entries.length > 0,
        `the charge of ${s.clientOrderId} in the sandbox ledger`,
      );
      expect((await stack.sandbox.ledger(s.clientOrderId)).totals).toEqual({ charged: 2500 });
    }

    // The budget's use by priority class, as /metrics shows it: the flood's class only, every
    // query counted once as admitted or held (a redelivered query may count again), and exactly
    // the admitted payments' first queries admitted.
    const admissions = await register
      .getSingleMetric('gateway_adapter_status_admissions_total')
      ?.get();
    const count = (outcome: string): number =>
      (admissions?.values ?? [])
        .filter((v) => v.labels.priority === 'urgent' && v.labels.outcome === outcome)
        .reduce((sum, v) => sum + v.value, 0);
    expect((admissions?.values ?? []).map((v) => v.labels.priority)).not.toContain('routine');
    expect(count('admitted')).toBeGreaterThanOrEqual(STATUS_BURST);
    expect(count('admitted') + count('held')).toBeGreaterThanOrEqual(statuses.length);
    // Each status query's log line names its class, held ones included (issue #38).
    const handled = stack.adapter.logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((l) => l.msg === 'gateway request handled' && l.operation === 'status');
    expect(handled.length).toBeGreaterThanOrEqual(statuses.length);
    expect(handled.filter((l) => l.result === 'not-sent').map((l) => l.priority)).toEqual(
      handled.filter((l) => l.result === 'not-sent').map(() => 'urgent'),
    );
  });
});

describe('status budget: the waiting room (issue #38, time to truth)', () => {
  let stack: AdapterStack;

  beforeAll(async () => {
    stack = await startAdapterStack({
      database: 'gateway_adapter_room',
      keys,
      endpoints: [
        {
          // Two status queries a second, one at once; status queries may wait up to 1 s.
          limits: {
            ratePerSecond: 100,
            burst: 100,
            maxWaitMs: 2_000,
            statusRatePerSecond: 2,
            statusBurst: 1,
            moneyReservedTokens: 0,
            statusMinIntervalMs: 1_000,
          },
        },
      ],
    });
  }, 120_000);

  afterAll(() => stack?.stop());

  it('two payments asked at once with one token: the second waits for the next token in the adapter and is sent, not answered not-sent', async () => {
    const asked = [status(randomUUID()), status(randomUUID())];
    await produceRequests(asked);
    const results = await Promise.all(
      asked.map(async (request) => {
        const [first] = await resultsFor(stack.collector, request.requestId);
        if (!first) throw new Error(`no result for ${request.requestId}`);
        return first.value.result;
      }),
    );
    // Before the room the second was answered not-sent ('status budget spent') at once, and the
    // token that came half a second later was lost unless a query happened to come then.
    expect(results.map((r) => r.kind)).not.toContain('not-sent');
  });
});
