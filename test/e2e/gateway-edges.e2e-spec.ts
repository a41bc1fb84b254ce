import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { type PaymentEvent, TOPICS } from '@payments/contracts';
import { PaymentStack, SANDBOX_MERCHANT, SECOND_MERCHANT } from '../../scripts/stack/payment-stack';
import { type E2eStack, startE2eStack } from '../support/e2e-stack';

/**
 * Two edges of the gateway on one stack: its default reply format, and the adapter's limit of
 * calls in flight per endpoint.
 *
 * The gateway's default reply format end to end. The seed says replies come either as JSON (when
 * asked with `Accept: application/vnd.pay+json`) or form-encoded (`name=value` + 0x0A joined by
 * `&`, refusals as HTTP 200 with `type=validation-error|error`). Here every endpoint of the adapter
 * is set to `replyFormat: form` (no JSON Accept) and the sandbox answers such requests the
 * gateway's default way (SANDBOX_ACCEPT_MODE=form). Every kind of reply crosses the stack: the
 * synchronous reply of a money operation and of its follow-ups, a status reply (the sale's reply
 * lost), the "no such order" refusal of a status query (the sale never arrived: sent once more),
 * an error reply (503, type=error), card-reference and card-info replies, and a hosted form's
 * redirect reply completed by a scripted payer. Outcomes are checked against the sandbox ledger.
 *
 * The per-endpoint concurrency limit: the second merchant's endpoint may have two calls in flight
 * (its credentials' `limits.maxConcurrent`); with its sales held at the gateway, the gateway never
 * sees more than two at once.
 */
const FINAL = ['approved', 'declined', 'failed', 'authorized'];
const NEVER_RECEIVED_SECONDS = 3;
/** Calls the second merchant's endpoint may have in flight at once. */
const SLOW_ENDPOINT_SLOTS = 2;

let stack: PaymentStack;
let e2e: E2eStack;
let workDir: string;

/** Events of a payment, each once (delivery is at least once), in arrival order. */
const eventsOf = (paymentId: string): PaymentEvent[] => stack.events.distinctEventsOf(paymentId);

const typesOf = (paymentId: string) => eventsOf(paymentId).map((e) => e.type);

const finalOf = (paymentId: string) => stack.events.finalOf(paymentId, 90_000, FINAL);

const movements = (clientOrderId: string) => stack.controls.movements(clientOrderId);

const base = () => ({
  commandId: randomUUID(),
  merchant: { endpointId: SANDBOX_MERCHANT.plainEndpoint },
  occurredAt: new Date().toISOString(),
});

beforeAll(async () => {
  workDir = path.join(process.cwd(), '.run', `form-replies-${randomUUID().slice(0, 8)}`);
  e2e = await startE2eStack('form', {
    workDir,
    replyFormat: 'form',
    // Sales queued for a slot wait up to 30 s rather than the default 2 s.
    endpointLimits: {
      [SECOND_MERCHANT.endpoint]: { maxConcurrent: SLOW_ENDPOINT_SLOTS, maxWaitMs: 30_000 },
    },
    env: {
      orchestrator: {
        NEVER_RECEIVED_RESEND_SECONDS: String(NEVER_RECEIVED_SECONDS),
        // The sandbox refuses a reused client_orderid (its default mode), declared here: a sale
        // with no trace (a 503 before processing; a request the killed adapter never sent) is
        // sent once more (the default sends none; status-scheduling.e2e).
        GATEWAY_REFUSES_REUSED_ORDER_ID_ENDPOINTS: `${SANDBOX_MERCHANT.plainEndpoint},${SECOND_MERCHANT.endpoint}`,
      },
      // The injected faults below would open the endpoint breaker (its own suite's subject).
      'gateway-adapter': { GATEWAY_BREAKER_FAILURES: '1000' },
    },
  });
  stack = e2e.stack;
}, 240_000);

afterAll(() => e2e?.stop());

describe('form-encoded gateway replies, end to end', () => {
  it('the stack runs on them: every endpoint asks without the JSON Accept, the sandbox answers form-encoded', async () => {
    const credentials = JSON.parse(
      readFileSync(path.join(workDir, 'gateway-credentials.json'), 'utf8'),
    ) as { endpoints: Array<{ replyFormat?: string }> };
    expect(credentials.endpoints.length).toBeGreaterThan(0);
    expect(credentials.endpoints.every((e) => e.replyFormat === 'form')).toBe(true);
    // What the sandbox answers a request without the JSON Accept: the default format (a refusal
    // of an unsigned status query, HTTP 200 with type=validation-error).
    const response = await fetch(
      `${stack.urls['gateway-sandbox']}/paynet/api/v2/status/${SANDBOX_MERCHANT.plainEndpoint}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'login=sandbox-merchant&client_orderid=x&orderid=1&control=0',
      },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await response.text()).toMatch(/^type=validation-error\n&/);
  });

  it('a sale: the synchronous reply, then approved; charged once', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 2_500 });
    await stack.send(sale);
    expect(await finalOf(sale.paymentId)).toMatchObject({
      type: 'approved',
      amount: { minor: 2_500, currency: 'USD' },
    });
    const accepted = eventsOf(sale.paymentId).find((e) => e.type === 'accepted-by-gateway');
    expect(accepted).toMatchObject({
      serialNumber: expect.any(String),
      gatewayOrderId: expect.any(String),
    });
    expect(await movements(sale.paymentId)).toEqual(['charged 2500']);
  });

  it('a declined sale: declined, nothing charged', async () => {
    const sale = stack.sale({ cvv: '116', amountMinor: 2_600 });
    await stack.send(sale);
    expect(await finalOf(sale.paymentId)).toMatchObject({ type: 'declined' });
    expect(await movements(sale.paymentId)).toEqual([]);
  });

  it('preauth → partial capture → partial return: each follow-up settled by its own reply', async () => {
    const preauth = stack.preauth({ cvv: '123', amountMinor: 8_000 });
    await stack.send(preauth);
    expect(await finalOf(preauth.paymentId)).toMatchObject({ type: 'authorized' });
    await stack.send(stack.capture(preauth.paymentId, 5_000));
    await stack.events.waitForType(preauth.paymentId, ['captured'], 60_000);
    await stack.send(stack.return(preauth.paymentId, 2_000));
    const returned = await stack.events.waitForType(preauth.paymentId, ['returned'], 60_000);
    expect(returned.event).toMatchObject({ amount: { minor: 2_000, currency: 'USD' } });
    expect(await movements(preauth.paymentId)).toEqual([
      'authorized 8000',
      'captured 5000',
      'released 3000',
      'refunded 2000',
    ]);
  });

  it('a sale whose reply is lost is settled by the status reply, charged once', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 2_700 });
    await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      operation: 'SALE',
      failAfter: 'drop',
      times: 1,
    });
    await stack.controls.addFault({ clientOrderId: sale.paymentId, callbacks: 'drop' });
    await stack.send(sale);
    expect(await finalOf(sale.paymentId)).toMatchObject({ type: 'approved' });
    expect(typesOf(sale.paymentId)).toEqual([
      'operation-requested',
      'outcome-unknown',
      'accepted-by-gateway',
      'approved',
    ]);
    expect(await movements(sale.paymentId)).toEqual(['charged 2700']);
  });

  it('a sale answered 503 (type=error) before processing: the status query is refused as "no such order" (HTTP 200, type=validation-error), the sale is sent once more, charged once', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 2_800 });
    await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      operation: 'SALE',
      failBefore: 503,
      times: 1,
    });
    await stack.send(sale);
    const final = await finalOf(sale.paymentId);
    expect({ final, all: eventsOf(sale.paymentId) }).toMatchObject({ final: { type: 'approved' } });
    expect(typesOf(sale.paymentId)).toEqual([
      'operation-requested',
      'outcome-unknown',
      'operation-resent',
      'accepted-by-gateway',
      'approved',
    ]);
    expect(await movements(sale.paymentId)).toEqual(['charged 2800']);
  });

  it('create-card-ref and get-card-info: the reference and the card summary read from form replies', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 1_000 });
    await stack.send(sale);
    expect(await finalOf(sale.paymentId)).toMatchObject({ type: 'approved' });
    await stack.sendRaw({ type: 'create-card-ref', ...base(), paymentId: sale.paymentId });
    const created = (
      await stack.events.waitForType(
        sale.paymentId,
        ['card-ref-created', 'card-reference-failed'],
        60_000,
      )
    ).event;
    expect(created).toMatchObject({
      type: 'card-ref-created',
      cardRef: { refId: expect.stringMatching(/\S/) },
      card: { bin: '444444', lastFour: '4448' },
    });
    await stack.sendRaw({ type: 'get-card-info', ...base(), paymentId: sale.paymentId });
    const info = (
      await stack.events.waitForType(
        sale.paymentId,
        ['card-info-reported', 'card-reference-failed'],
        60_000,
      )
    ).event;
    expect(info).toMatchObject({
      type: 'card-info-reported',
      card: { bin: '444444', lastFour: '4448' },
    });
  });

  it('a hosted sale form: the redirect reply names the page, a scripted payer completes it, approved, charged once', async () => {
    const form = stack.hostedForm('sale-form', { amountMinor: 3_100 });
    await stack.send(form);
    const action = (
      await stack.events.waitFor(
        form.paymentId,
        (e) => e.type === 'action-required' && e.action.kind === 'redirect',
        60_000,
      )
    ).event;
    if (action.type !== 'action-required' || action.action.kind !== 'redirect')
      throw new Error(`expected a redirect action, got ${JSON.stringify(action)}`);
    expect(action.action.url).toContain('/hpp/');
    const page = await fetch(action.action.url);
    expect(page.status).toBe(200);
    const hidden = Object.fromEntries(
      [...(await page.text()).matchAll(/<input[^>]*type="hidden"[^>]*>/g)].flatMap(([tag]) => {
        const name = /name="([^"]+)"/.exec(tag)?.[1];
        const value = /value="([^"]*)"/.exec(tag)?.[1] ?? '';
        return name === undefined ? [] : [[name, value]];
      }),
    );
    const submitted = await fetch(action.action.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        ...hidden,
        credit_card_number: '4444444444444448',
        card_printed_name: 'FORM PAYER',
        expire_month: '12',
        expire_year: '2099',
        cvv2: '123',
      }).toString(),
      redirect: 'manual',
    });
    expect(submitted.status).toBeLessThan(500);
    expect(await finalOf(form.paymentId)).toMatchObject({
      type: 'approved',
      amount: { minor: 3_100, currency: 'USD' },
    });
    expect(await movements(form.paymentId)).toEqual(['charged 3100']);
  });
});

describe('the per-endpoint concurrency limit', () => {
  it('a slow endpoint holds at most its limit of calls in flight at the gateway; every sale is charged once', async () => {
    const slow = Array.from({ length: 6 }, () =>
      stack.sale({ cvv: '123', amountMinor: 1_500, endpointId: SECOND_MERCHANT.endpoint }),
    );
    // The gateway takes 4 s to read each of the slow endpoint's sales; they queue at the adapter.
    for (const sale of slow) {
      await stack.controls.addFault({
        clientOrderId: sale.paymentId,
        operation: 'SALE',
        latencyMs: 4_000,
      });
    }
    await stack.controls.resetConcurrency();
    await stack.send(...slow);
    for (const sale of slow)
      expect(await finalOf(sale.paymentId)).toMatchObject({ type: 'approved' });
    const seen = await stack.controls.concurrency();
    // The gateway never had more than the limit of the slow endpoint's calls at once, and it had
    // exactly that many: the limit, not a lack of work, held them.
    expect(seen[SECOND_MERCHANT.endpoint]?.peak).toBe(SLOW_ENDPOINT_SLOTS);
    for (const sale of slow) expect(await movements(sale.paymentId)).toEqual(['charged 1500']);
  });

  /** Resolves once the sandbox shows at least `calls` of the slow endpoint's calls at once. */
  async function slowEndpointBusy(calls: number): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const seen = await stack.controls.concurrency();
      if ((seen[SECOND_MERCHANT.endpoint]?.inFlight ?? 0) >= calls) return;
      if (Date.now() > deadline)
        throw new Error(`slow endpoint never busy: ${JSON.stringify(seen)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * Payment ids whose gateway requests share one partition of the requests topic (keyed by the
   * saga id, the producers' default partitioner): the worst case for a consumer that works on a
   * partition one message at a time.
   */
  async function idsOnOnePartition(count: number): Promise<string[]> {
    const admin = new Kafka({
      brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
      logLevel: logLevel.NOTHING,
    }).admin();
    await admin.connect();
    const { topics } = await admin.fetchTopicMetadata({ topics: [TOPICS.gatewayRequests] });
    await admin.disconnect();
    const partitionMetadata = topics[0]?.partitions ?? [];
    const partitionOf = Partitioners.DefaultPartitioner();
    const of = (key: string) =>
      partitionOf({
        topic: TOPICS.gatewayRequests,
        partitionMetadata,
        message: { key, value: '' },
      });
    const first = randomUUID();
    const ids = [first];
    while (ids.length < count) {
      const id = randomUUID();
      if (of(id) === of(first)) ids.push(id);
    }
    return ids;
  }

  /** Six sales to the slow endpoint, each held `ms` by the gateway: three waves of two. */
  async function slowSales(fault: 'latencyMs' | 'latencyAfterMs', ms: number, ids?: string[]) {
    const slow = Array.from({ length: 6 }, (_, i) =>
      stack.sale({
        cvv: '123',
        amountMinor: 1_700,
        endpointId: SECOND_MERCHANT.endpoint,
        ...(ids?.[i] === undefined ? {} : { paymentId: ids[i] }),
      }),
    );
    for (const sale of slow) {
      await stack.controls.addFault({
        clientOrderId: sale.paymentId,
        operation: 'SALE',
        [fault]: ms,
      });
    }
    await stack.controls.resetConcurrency();
    await stack.send(...slow);
    return slow;
  }

  it('another endpoint is not held up by a slow one: its sale is approved while the slow endpoint still has sales queued', async () => {
    // Three waves of 5 s at the slow endpoint: its last sales settle ≥ 10 s after the other sale
    // is sent, far more than one ordinary sale takes even on a loaded machine. All seven sales'
    // requests share one partition.
    const [otherId, ...slowIds] = await idsOnOnePartition(7);
    const slow = await slowSales('latencyMs', 5_000, slowIds);
    await slowEndpointBusy(1);
    const other = stack.sale({ cvv: '123', amountMinor: 2_300, paymentId: otherId });
    await stack.send(other);
    expect(await finalOf(other.paymentId)).toMatchObject({ type: 'approved' });
    // An ordering, not a timing: when the other endpoint's sale was approved, some of the slow
    // endpoint's sales were not yet.
    const notYet = slow.filter((s) => !typesOf(s.paymentId).includes('approved'));
    expect(notYet.length).toBeGreaterThan(0);
    for (const sale of slow)
      expect(await finalOf(sale.paymentId)).toMatchObject({ type: 'approved' });
    for (const sale of slow) expect(await movements(sale.paymentId)).toEqual(['charged 1700']);
    expect(await movements(other.paymentId)).toEqual(['charged 2300']);
    // The slow endpoint still ran at its limit, no more.
    expect((await stack.controls.concurrency())[SECOND_MERCHANT.endpoint]?.peak).toBe(
      SLOW_ENDPOINT_SLOTS,
    );
  });

  it('the adapter killed (SIGKILL) with slow calls in flight and more queued: after a restart every sale reaches a final outcome, none charged twice, every charge reported', async () => {
    // The gateway has processed each sale (the order exists) but answers 4 s later: the adapter
    // dies while two such calls are in flight and four more wait for their slots.
    const slow = await slowSales('latencyAfterMs', 4_000);
    await slowEndpointBusy(SLOW_ENDPOINT_SLOTS);
    await stack.kill('gateway-adapter', 'SIGKILL');
    await stack.startAgain('gateway-adapter');
    const finals = new Map<string, string>();
    for (const sale of slow) finals.set(sale.paymentId, (await finalOf(sale.paymentId)).type);
    for (const sale of slow) {
      const charged = (await movements(sale.paymentId)).filter((m) => m.startsWith('charged'));
      // Charged at most once; charged exactly when the payment was reported approved.
      expect(charged.length).toBeLessThanOrEqual(1);
      expect({ sale: sale.paymentId, final: finals.get(sale.paymentId), charged }).toEqual({
        sale: sale.paymentId,
        final: charged.length === 1 ? 'approved' : 'failed',
        charged: charged.length === 1 ? ['charged 1700'] : [],
      });
      expect(typesOf(sale.paymentId).filter((t) => FINAL.includes(t))).toHaveLength(1);
    }
    // The ones in flight at the kill were charged; nothing here should fail a sale.
    expect([...finals.values()]).toEqual(slow.map(() => 'approved'));
  });
});
