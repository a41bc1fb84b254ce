/**
 * The gateway-adapter against the real broker, a test PostgreSQL database and the gateway
 * sandbox over real HTTP: results, status reports, unknown outcomes after faults, at most one
 * send per request attempt, the circuit breaker, boot-time refusal of bad credentials, and no
 * secrets or card numbers in logs or results.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type GatewayRequest,
  type GatewayResult,
  type GatewayStatusRequest,
  parseTraceparent,
  TOPICS,
} from '@payments/contracts';
import { metricValue, produceRaw, readMessages } from '../../../test/support/kafka';
import { withClient } from '../../../test/support/postgres';
import {
  type AdapterStack,
  type CollectedResult,
  produceRequests,
  results,
  resultsFor,
  saleRequest,
  sealingKeys,
  startAdapterStack,
} from '../../../test/support/adapter-harness';
import { SANDBOX_MERCHANT } from '../../../test/support/adapter-sandbox';
import { ADAPTER_REASONS } from '../src/domain/classify';
import { resultEventId } from '../src/domain/result-id';
import { loadAdapterSecrets } from '../src/secrets/credentials';

jest.setTimeout(120_000);

const PAN = '4444555566661111';
const DEAD_ENDPOINT = '1199';
const DEAD_ENDPOINT_COOLDOWN_MS = 600_000;
/** A sandbox endpoint (USD, no 3DS gate) this adapter calls one request at a time. */
const ONE_SLOT_ENDPOINT = '1118';
/** An endpoint this adapter has no credentials for (another replica may). */
const FOREIGN_ENDPOINT = '1198';
const keys = sealingKeys();

/**
 * A port nothing listens on: TCP port 1 (tcpmux), never bound on these machines. A port taken
 * and released at setup could be handed to another suite's process meanwhile (a sandbox of a
 * stack on another worker answered once, and the breaker never opened).
 */
const REFUSING_PORT = 1;

function adapterSale(cvv: string, over: Partial<GatewayRequest> = {}): GatewayRequest {
  return saleRequest(keys.publicPem, 'adp', over, cvv);
}

function statusRequest(sale: GatewayRequest, gatewayOrderId?: string): GatewayStatusRequest {
  return {
    operation: 'status',
    requestId: randomUUID(),
    paymentId: sale.paymentId,
    merchant: sale.merchant,
    clientOrderId: sale.clientOrderId,
    attempt: 1,
    requestedAt: new Date().toISOString(),
    subjectRequestId: sale.requestId,
    subjectOperation: 'sale',
    ...(gatewayOrderId ? { gatewayOrderId } : {}),
  };
}

async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('gateway-adapter with broker, PostgreSQL and sandbox', () => {
  let stack: AdapterStack;
  const published: CollectedResult[] = [];

  async function run(request: GatewayRequest, count = 1): Promise<CollectedResult[]> {
    await produceRequests([request]);
    const got = await resultsFor(stack.collector, request.requestId, count);
    published.push(...got);
    return got;
  }

  /**
   * A status query as the orchestrator asks it: one answered not-sent (the endpoint's status
   * budget holds polls back, e.g. right after a burst of money operations on a loaded machine) is
   * asked again at its retryAt, a few times at most.
   */
  async function askStatus(sale: GatewayRequest): Promise<CollectedResult | undefined> {
    for (let asked = 1; ; asked++) {
      const [answer] = await run(statusRequest(sale));
      const result = answer?.value.result;
      if (result?.kind !== 'not-sent' || asked === 5) return answer;
      const wait = Date.parse(result.retryAt ?? '') - Date.now();
      await new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(wait, 100), 5_000)));
    }
  }

  async function finalOrder(orderId: string): Promise<void> {
    await until(
      () => stack.sandbox.order(orderId),
      (o) => o.status !== 'processing',
      `order ${orderId} final in the sandbox`,
    );
  }

  beforeAll(async () => {
    const endpoints = [
      { endpointId: SANDBOX_MERCHANT.endpointId },
      { endpointId: ONE_SLOT_ENDPOINT, limits: { maxConcurrent: 1, maxWaitMs: 60_000 } },
      {
        endpointId: DEAD_ENDPOINT,
        baseUrl: `http://127.0.0.1:${REFUSING_PORT}/paynet`,
        limits: { breakerFailures: 2, breakerCooldownMs: DEAD_ENDPOINT_COOLDOWN_MS },
      },
    ];
    stack = await startAdapterStack({
      database: 'gateway_adapter',
      keys,
      // Every entry can sign v4 operations with the sandbox merchant's RSA key.
      endpoints: endpoints.map((endpoint) => ({
        ...endpoint,
        rsaPrivateKeyFile: SANDBOX_MERCHANT.rsaPrivateKeyFile,
      })),
    });
  }, 120_000);

  afterAll(() => stack?.stop());

  it('is ready (broker and database) and live (consumer)', async () => {
    const ready = await fetch(`${stack.adapter.url}/health/ready`);
    const body = (await ready.json()) as { status: string; info: Record<string, unknown> };
    expect(ready.status).toBe(200);
    expect(Object.keys(body.info)).toEqual(expect.arrayContaining(['kafka', 'database']));
    const live = (await (await fetch(`${stack.adapter.url}/health/live`)).json()) as {
      info: Record<string, unknown>;
    };
    expect(Object.keys(live.info)).toContain('kafka-consumer:gateway-adapter');
  });

  it('sale with CVV 123 → accepted with the gateway order id; status → approved report', async () => {
    const sale = adapterSale('123');
    const [result] = await run(sale);
    expect(result?.value).toMatchObject({
      requestId: sale.requestId,
      paymentId: sale.paymentId,
      operation: 'sale',
      attempt: 1,
      result: { kind: 'accepted', gatewayOrderId: expect.stringMatching(/^\d+$/) },
    });
    expect(result?.key).toBe(sale.paymentId);
    expect(result?.headers).toMatchObject({
      ce_id: resultEventId(sale.requestId, 1),
      ce_subject: sale.paymentId,
      ce_type: 'com.example.payments.gateway.result.sale.v1',
      ce_source: '/payments/gateway-adapter',
    });
    const gatewayOrderId =
      result?.value.result.kind === 'accepted' ? (result.value.result.gatewayOrderId ?? '') : '';
    await finalOrder(gatewayOrderId);

    const status = statusRequest(sale, gatewayOrderId);
    const [report] = await run(status);
    expect(report?.value).toMatchObject({
      operation: 'status',
      subjectRequestId: sale.requestId,
      result: {
        kind: 'accepted',
        report: {
          status: 'approved',
          gatewayOrderId,
          amount: { minor: 1042, currency: 'USD' },
          card: { lastFour: '1111' },
        },
      },
    });
    const ledger = await stack.sandbox.ledger(sale.clientOrderId);
    expect(ledger.totals).toEqual({ charged: 1042 });
  });

  it('continues the request trace in the result headers', async () => {
    const sale = adapterSale('123');
    const { traceparents } = await produceRequests([sale]);
    const [result] = await resultsFor(stack.collector, sale.requestId);
    const incoming = parseTraceparent(traceparents[0] ?? '');
    const outgoing = parseTraceparent(result?.headers.traceparent ?? '');
    expect(outgoing?.traceId).toBe(incoming?.traceId);
    expect(outgoing?.parentId).not.toBe(incoming?.parentId);
  });

  it('a declined CVV → accepted, then status declined (never approved)', async () => {
    const sale = adapterSale('116');
    const [result] = await run(sale);
    expect(result?.value.result.kind).toBe('accepted');
    const orderId =
      result?.value.result.kind === 'accepted' ? (result.value.result.gatewayOrderId ?? '') : '';
    await finalOrder(orderId);
    const report = await askStatus(sale);
    expect(report?.value.result).toMatchObject({
      kind: 'accepted',
      report: { status: 'declined', errorCode: '116' },
    });
    expect((await stack.sandbox.ledger(sale.clientOrderId)).entries).toEqual([]);
  });

  it.each([
    ['a 500 after processing', 500, /^server-error/],
    ['a dropped connection after processing', 'drop' as const, /^connection-lost/],
  ])('%s → unknown; the sandbox charged exactly once', async (_name, failAfter, reason) => {
    const sale = adapterSale('123');
    await stack.sandbox.addFault({
      clientOrderId: sale.clientOrderId,
      operation: 'SALE',
      failAfter,
    });
    const [result] = await run(sale);
    expect(result?.value.result).toMatchObject({
      kind: 'unknown',
      reason: expect.stringMatching(reason),
    });
    const ledger = await until(
      () => stack.sandbox.ledger(sale.clientOrderId),
      (l) => l.entries.length > 0,
      'the charge in the sandbox ledger',
    );
    expect(ledger.totals).toEqual({ charged: 1042 });
    expect(ledger.entries).toHaveLength(1);
  });

  it('the same request delivered twice → one gateway call; the second result is unknown', async () => {
    const sale = adapterSale('123');
    // A rule with no effect but a countdown: it counts the requests the sandbox receives.
    const counter = await stack.sandbox.addFault({
      clientOrderId: sale.clientOrderId,
      latencyMs: 0,
      times: 100,
    });
    await produceRequests([sale]);
    const [first] = await resultsFor(stack.collector, sale.requestId, 1);
    await produceRequests([sale]);
    const both = await resultsFor(stack.collector, sale.requestId, 2);
    published.push(...both);
    expect(first?.value.result.kind).toBe('accepted');
    expect(both[1]?.value.result).toEqual({
      kind: 'unknown',
      reason: ADAPTER_REASONS.mayHaveBeenSent,
    });
    // Same ce_id for both: a consumer that saw the first drops the second.
    expect(both[1]?.headers.ce_id).toBe(both[0]?.headers.ce_id);
    expect(await stack.sandbox.faultRemaining(counter.id)).toBe(99);
    const rows = await withClient(
      stack.db.url,
      async (client) =>
        (
          await client.query(
            'SELECT attempt, operation FROM adapter_sent_requests WHERE request_id = $1',
            [sale.requestId],
          )
        ).rows,
    );
    expect(rows).toEqual([{ attempt: 1, operation: 'sale' }]);
  });

  it('sends the one resend flagged afterNoTrace past an earlier attempt in the ledger, and that resend only once', async () => {
    const sale = adapterSale('123');
    // The first attempt fails before the sandbox processes it: unknown, and in the ledger.
    await stack.sandbox.addFault({ clientOrderId: sale.clientOrderId, failBefore: 503, times: 1 });
    const counter = await stack.sandbox.addFault({
      clientOrderId: sale.clientOrderId,
      latencyMs: 0,
      times: 100,
    });
    await produceRequests([sale]);
    const [first] = await resultsFor(stack.collector, sale.requestId, 1);
    expect(first?.value.result.kind).toBe('unknown');
    // A plain resend (no flag) is refused by the ledger: the first may have reached the gateway.
    await produceRequests([{ ...sale, attempt: 6 }]);
    const [, plain] = await resultsFor(stack.collector, sale.requestId, 2);
    expect(plain?.value.result).toEqual({
      kind: 'unknown',
      reason: ADAPTER_REASONS.mayHaveBeenSent,
    });
    // The orchestrator's resend after the gateway showed no trace: sent, approved.
    const resend = { ...sale, attempt: 7, afterNoTrace: true as const };
    await produceRequests([resend]);
    const [, , sent] = await resultsFor(stack.collector, sale.requestId, 3);
    expect(sent?.value.result.kind).toBe('accepted');
    // Its redelivery is refused like any other, once the resend's hand-off is released (a
    // redelivery while it is still handed off is left to it: no answer of its own).
    await until(
      () =>
        withClient(stack.db.url, async (client) =>
          client
            .query('SELECT 1 FROM adapter_request_handoffs WHERE request_id = $1', [sale.requestId])
            .then((r) => r.rowCount ?? 0),
        ),
      (n) => n === 0,
      "the resend's hand-off released",
    );
    await produceRequests([resend]);
    const all = await resultsFor(stack.collector, sale.requestId, 4);
    published.push(...all);
    expect(all[3]?.value.result).toEqual({
      kind: 'unknown',
      reason: ADAPTER_REASONS.mayHaveBeenSent,
    });
    // Past the first attempt (answered by the 503 rule) exactly one request reached the sandbox:
    // the flagged resend (the counter rule matches from the second request on).
    expect(await stack.sandbox.faultRemaining(counter.id)).toBe(99);
  });

  it('fencing: a sale whose hand-off the sweep answered while it waited for its slot is never sent', async () => {
    const onSlot = { merchant: { endpointId: ONE_SLOT_ENDPOINT } };
    const slow = adapterSale('123', onSlot);
    const stalled = adapterSale('123', onSlot);
    // The endpoint's one slot held by a slow sale: the next one waits for it, as a stalled
    // owner would, past its lease.
    // (8 s: the test must remove the waiting sale's hand-off while the slot is still held; 3 s
    // was once not enough on a loaded machine.)
    // The slow sale is produced first and the stalled one only once the slow one is at the
    // sandbox (holding the slot): produced together they may land on different partitions and be
    // consumed in either order, and a stalled sale that took the slot first ran at once.
    const holding = await stack.sandbox.addFault({
      clientOrderId: slow.clientOrderId,
      latencyMs: 8_000,
      times: 100,
    });
    const counter = await stack.sandbox.addFault({
      clientOrderId: stalled.clientOrderId,
      latencyMs: 0,
      times: 100,
    });
    await produceRequests([slow]);
    await until(
      () => stack.sandbox.faultRemaining(holding.id),
      (n) => n === 99,
      'the slow sale at the sandbox',
    );
    await produceRequests([stalled]);
    const handoffRows = () =>
      withClient(stack.db.url, async (client) =>
        client
          .query('SELECT 1 FROM adapter_request_handoffs WHERE request_id = $1', [
            stalled.requestId,
          ])
          .then((r) => r.rowCount ?? 0),
      );
    await until(handoffRows, (n) => n === 1, 'the waiting sale handed off');
    // Meanwhile its lease ran out and another replica's sweep answered it unknown and removed
    // its row (the orchestrator may then send its deliberate resend).
    await withClient(stack.db.url, (client) =>
      client.query('DELETE FROM adapter_request_handoffs WHERE request_id = $1', [
        stalled.requestId,
      ]),
    );
    // A status query of the same payment runs after it in its lane: once it is answered, the
    // stalled sale has run to its end.
    const [slowAnswer] = await resultsFor(stack.collector, slow.requestId, 1);
    expect(slowAnswer?.value.result.kind).toBe('accepted');
    await run({ ...statusRequest(stalled), merchant: stalled.merchant });
    expect(results(stack.collector).filter((r) => r.value.requestId === stalled.requestId)).toEqual(
      [],
    );
    expect(await stack.sandbox.faultRemaining(counter.id)).toBe(100);
    // Its claim stays: the sweep told the orchestrator it may have been sent.
    const claimed = await withClient(stack.db.url, async (client) =>
      client
        .query('SELECT attempt FROM adapter_sent_requests WHERE request_id = $1', [
          stalled.requestId,
        ])
        .then((r) => r.rows),
    );
    expect(claimed).toEqual([{ attempt: 1 }]);
  });

  it('a redelivered attempt already handed off is not answered "unknown endpoint" by a replica without its credentials', async () => {
    const foreign = adapterSale('123', { merchant: { endpointId: FOREIGN_ENDPOINT } });
    // Another replica, which has the endpoint, handed this attempt off and runs it.
    await withClient(stack.db.url, (client) =>
      client.query(
        `INSERT INTO adapter_request_handoffs
           (request_id, attempt, payment_id, operation, endpoint_id, owner, lease_until)
         VALUES ($1, 1, $2, 'sale', $3, 'another-replica', now() + interval '1 hour')`,
        [foreign.requestId, foreign.paymentId, FOREIGN_ENDPOINT],
      ),
    );
    const next = adapterSale('123', {
      merchant: { endpointId: FOREIGN_ENDPOINT },
      paymentId: foreign.paymentId,
      requestId: randomUUID(),
    });
    await produceRequests([foreign, next]);
    // The next request of the payment (same partition, after it) is answered: the redelivery
    // was taken before it, and said nothing.
    const [answered] = await resultsFor(stack.collector, next.requestId, 1);
    expect(answered?.value.result).toMatchObject({ kind: 'rejected', code: 'unknown-endpoint' });
    expect(results(stack.collector).filter((r) => r.value.requestId === foreign.requestId)).toEqual(
      [],
    );
    await withClient(stack.db.url, (client) =>
      client.query('DELETE FROM adapter_request_handoffs WHERE request_id = $1', [
        foreign.requestId,
      ]),
    );
  });

  it('opens the breaker after repeated transport failures and then answers not-sent without a call', async () => {
    const requests = [1, 2, 3].map(() =>
      adapterSale('123', { merchant: { endpointId: DEAD_ENDPOINT } }),
    );
    const outcomes: CollectedResult[] = [];
    // The breaker opens while the second request is handled: not before it was produced.
    let secondProducedAt = 0;
    for (const [index, request] of requests.entries()) {
      if (index === 1) secondProducedAt = Date.now();
      outcomes.push(...(await run(request)));
    }
    const thirdAnsweredAt = Date.now();
    // The gateway's own refusal (connect refused) carries no retryAt; our breaker's does.
    expect(outcomes.map((o) => o.value.result)).toEqual([
      { kind: 'not-sent', reason: 'connection-refused' },
      { kind: 'not-sent', reason: 'connection-refused' },
      { kind: 'not-sent', reason: ADAPTER_REASONS.circuitOpen, retryAt: expect.any(String) },
    ]);
    // retryAt is when the breaker half-opens: opened at or after the second request was
    // produced and before the third was answered, plus the cool-down.
    const refused = outcomes[2]?.value.result;
    const retryAt = Date.parse(refused?.kind === 'not-sent' ? (refused.retryAt ?? '') : '');
    expect(retryAt).toBeGreaterThanOrEqual(secondProducedAt + DEAD_ENDPOINT_COOLDOWN_MS);
    expect(retryAt).toBeLessThanOrEqual(thirdAnsweredAt + DEAD_ENDPOINT_COOLDOWN_MS);
    expect(
      await metricValue('gateway_adapter_calls_total', {
        endpoint: `endpoint ${DEAD_ENDPOINT}`,
        outcome: 'not-sent',
      }),
    ).toBe(2);
    expect(
      await metricValue('gateway_adapter_breaker_state', { endpoint: `endpoint ${DEAD_ENDPOINT}` }),
    ).toBe(2);
    // A status query is not refused by the open breaker (it moves no money; issue #38): the
    // adapter calls the gateway (here: connect refused), and its failure leaves the breaker open
    // for the same cool-down.
    const [first] = requests;
    if (!first) throw new Error('no request');
    let status: GatewayResult | undefined;
    for (let asked = 1; asked <= 5; asked++) {
      // Asked again only while the adapter's limits other than the breaker hold it (the status
      // budget: the sales above took tokens of the endpoint's rate).
      status = (await run({ ...statusRequest(first), priority: 'urgent' }))[0]?.value;
      const result = status?.result;
      if (result?.kind !== 'not-sent' || result.retryAt === undefined) break;
      if (result.reason === ADAPTER_REASONS.circuitOpen) break;
      await sleep(Math.min(Math.max(Date.parse(result.retryAt ?? '') - Date.now(), 100), 5_000));
    }
    expect(status?.result).toEqual({ kind: 'not-sent', reason: 'connection-refused' });
    expect(
      await metricValue('gateway_adapter_calls_total', {
        endpoint: `endpoint ${DEAD_ENDPOINT}`,
        operation: 'v2/status',
        outcome: 'not-sent',
      }),
    ).toBe(1);
    expect(
      await metricValue('gateway_adapter_breaker_state', { endpoint: `endpoint ${DEAD_ENDPOINT}` }),
    ).toBe(2);
    // not-sent released its ledger rows; the one our breaker refused left none (a claim taken
    // with its hand-off is released before the answer).
    const rows = await withClient(
      stack.db.url,
      async (client) =>
        (
          await client.query(
            'SELECT request_id FROM adapter_sent_requests WHERE request_id = ANY($1)',
            [requests.map((r) => r.requestId)],
          )
        ).rows,
    );
    expect(rows).toEqual([]);
  });

  it('dead-letters a request that does not match the contract', async () => {
    const key = randomUUID();
    await produceRaw(TOPICS.gatewayRequests, [
      { key, value: JSON.stringify({ operation: 'sale', requestId: key }) },
    ]);
    const dlq = await readMessages(`${TOPICS.gatewayRequests}.dlq`, 1);
    expect(dlq.some((m) => m.key?.toString() === key)).toBe(true);
  });

  it('keeps card numbers, CVV, keys and control keys out of logs and results', () => {
    const logs = stack.adapter.logs.join('');
    expect(stack.adapter.logs.some((l) => l.includes('gateway request handled'))).toBe(true);
    const everything = [logs, ...published.map((p) => p.raw + JSON.stringify(p.headers))].join(
      '\n',
    );
    expect(published.length).toBeGreaterThanOrEqual(8);
    expect(everything).not.toContain(PAN);
    expect(everything).not.toContain(SANDBOX_MERCHANT.controlKey);
    expect(everything).not.toContain('PRIVATE KEY');
    expect(everything).not.toMatch(/cvv2?["=:]+\s*"?\d{3}/i);
    expect(everything).not.toContain(keys.privatePem.split('\n')[1] ?? 'unreachable');
  });
});

describe('boot-time checks of the credentials', () => {
  it('loads the documented sandbox sample file and the test-only sealing key', () => {
    const secrets = loadAdapterSecrets({
      credentials: { file: 'apps/gateway-adapter/credentials.sandbox.json', inline: undefined },
      cardKey: {
        file: 'apps/gateway-adapter/test-keys/card-sealing-test-private.pem',
        inline: undefined,
      },
      limits: {
        maxConcurrent: 1,
        ratePerSecond: 1,
        burst: 1,
        maxWaitMs: 0,
        maxQueued: 1,
        breakerFailures: 1,
        breakerCooldownMs: 1,
        statusRatePerSecond: 1,
        statusBurst: 1,
        moneyReservedTokens: undefined,
        statusMinIntervalMs: 0,
      },
    });
    expect(secrets.endpoints.map((e) => e.id)).toEqual([
      '1111',
      '1112',
      '1113',
      '1114',
      '1115',
      '1116',
      '1117',
      '1118',
      '2111',
      '1213',
    ]);
    expect(secrets.endpoints[0]?.rsaPrivateKey?.asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  it('refuses bad credentials naming the entry and the field, never echoing a secret', () => {
    const secret = 'TOP-SECRET-CONTROL';
    const attempt = () =>
      loadAdapterSecrets({
        credentials: {
          file: undefined,
          inline: JSON.stringify({
            endpoints: [
              {
                endpointId: '1113',
                baseUrl: 'http://127.0.0.1:8080/paynet',
                login: 'm',
                controlKey: secret,
                rsaPrivateKey: 'not a key',
              },
            ],
          }),
        },
        cardKey: { file: undefined, inline: keys.privatePem },
        limits: {
          maxConcurrent: 1,
          ratePerSecond: 1,
          burst: 1,
          maxWaitMs: 0,
          maxQueued: 1,
          breakerFailures: 1,
          breakerCooldownMs: 1,
          statusRatePerSecond: 1,
          statusBurst: 1,
          moneyReservedTokens: undefined,
          statusMinIntervalMs: 0,
        },
      });
    expect(attempt).toThrow(
      'GATEWAY_CREDENTIALS entry #0 (endpoint 1113): rsaPrivateKey: RSA private key could not be read',
    );
    try {
      attempt();
    } catch (error) {
      expect((error as Error).message).not.toContain(secret);
    }
  });
});
