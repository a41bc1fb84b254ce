import type { PaymentEvent, SaleCommand } from '@payments/contracts';
import { PaymentStack, SANDBOX_MERCHANT, SECOND_MERCHANT } from '../../scripts/stack/payment-stack';
import type { FaultRule } from '../../scripts/stack/sandbox-controls';
import { type E2eStack, startE2eStack } from '../support/e2e-stack';

/**
 * Issue #38 end to end: the safe resend default (item 5) and the one status-query scheduler under
 * a small status budget (item 1), the four apps as processes on the real broker and PostgreSQL.
 *
 *  - By default no endpoint is taken to refuse a reused client_orderid: an opening operation with
 *    no trace is never sent again, so a gateway that charges a reused id again (the sandbox's
 *    `charge-again` mode) charges once. SECOND_MERCHANT's endpoint is declared to refuse it
 *    (GATEWAY_REFUSES_REUSED_ORDER_ID_ENDPOINTS; the sandbox's `refuse` mode): sent once more.
 *  - The plain endpoint's status budget is two queries per second: a crowd of 200 payments the
 *    gateway leaves processing asks for far more, and the 20 payments whose replies were lost
 *    (urgent) are still asked and reported within the bound, each charged once.
 */
const NEVER_RECEIVED_SECONDS = 3;
/** The adapter gives up on a gateway answer after this long (the outcome is then unknown). */
const RESPONSE_TIMEOUT_MS = 4_000;
/** The plain endpoint's status budget: two queries a second, four at once. */
const STATUS_RATE = 2;
const STATUS_BURST = 4;
/** Payments left processing, and ordinary ones whose replies are lost (the 200/20). */
const LEFT_PROCESSING = 200;
const LOST_REPLIES = 20;
/**
 * From a lost reply to the payment reported: the first urgent poll (3 s); the lost replies, all
 * urgent at once, served in the order they were held at the status rate less the background
 * share (LOST_REPLIES / (0.75 × STATUS_RATE) s); the answer's trip — with 20 s of room for a
 * loaded 2-core machine. Without the classes and the line, 220 payments polled every 3-5 s
 * share two queries a second: about two minutes each.
 */
const URGENT_BOUND_MS = 3_000 + (LOST_REPLIES / (0.75 * STATUS_RATE)) * 1_000 + 20_000;

let e2e: E2eStack;
let stack: PaymentStack;

const eventsOf = (paymentId: string): PaymentEvent[] => stack.events.distinctEventsOf(paymentId);
const typesOf = (paymentId: string) => eventsOf(paymentId).map((e) => e.type);

async function charges(clientOrderId: string): Promise<number[]> {
  const ledger = await stack.controls.ledger(clientOrderId);
  return ledger.entries.filter((e) => e.movement === 'charged').map((e) => e.amountMinor);
}

/** A sale sent with these sandbox faults on its own order (client order id = payment id). */
async function saleWith(
  options: { amountMinor: number; endpointId?: string },
  ...faults: Array<Omit<FaultRule, 'clientOrderId'>>
): Promise<SaleCommand> {
  const sale = stack.sale({ cvv: '123', ...options });
  for (const fault of faults)
    await stack.controls.addFault({ clientOrderId: sale.paymentId, ...fault });
  await stack.send(sale);
  return sale;
}

beforeAll(async () => {
  e2e = await startE2eStack('sched', {
    endpointLimits: {
      [SANDBOX_MERCHANT.plainEndpoint]: {
        statusRatePerSecond: STATUS_RATE,
        statusBurst: STATUS_BURST,
      },
    },
    env: {
      orchestrator: {
        NEVER_RECEIVED_RESEND_SECONDS: String(NEVER_RECEIVED_SECONDS),
        GATEWAY_REFUSES_REUSED_ORDER_ID_ENDPOINTS: SECOND_MERCHANT.endpoint,
      },
      'gateway-adapter': {
        GATEWAY_RESPONSE_TIMEOUT_MS: String(RESPONSE_TIMEOUT_MS),
        // The injected faults below would open the endpoint breaker (its own suite's subject).
        GATEWAY_BREAKER_FAILURES: '1000',
      },
    },
  });
  stack = e2e.stack;
}, 240_000);

afterAll(async () => {
  await e2e?.stop();
});

describe('the resend default (issue #38 item 5)', () => {
  it('charge-again gateway, endpoint not declared: a sale slower than the window is never sent again; unknown with the no-trace alert, then approved on its callback, charged once', async () => {
    await stack.controls.changeSettings({ reusedClientOrderId: 'charge-again' });
    try {
      // The sale reaches the gateway 12 s late: the adapter gave up (unknown), the gateway shows
      // no order past the window. A repeat would arrive as late, and be charged as a new order.
      const sale = await saleWith(
        { amountMinor: 3_100 },
        { operation: 'SALE', latencyMs: 12_000, times: 2 },
      );
      await stack.events.waitFor(
        sale.paymentId,
        (e) => e.type === 'outcome-unknown' && e.alert,
        60_000,
      );
      const final = await stack.events.waitForType(
        sale.paymentId,
        ['approved', 'declined', 'failed'],
        90_000,
      );
      expect({ final: final.event, all: eventsOf(sale.paymentId) }).toMatchObject({
        final: { type: 'approved', amount: { minor: 3_100 } },
      });
      expect(
        eventsOf(sale.paymentId).find((e) => e.type === 'outcome-unknown' && e.alert),
      ).toMatchObject({ concern: 'no-trace' });
      expect(typesOf(sale.paymentId)).not.toContain('operation-resent');
      expect(await charges(sale.paymentId)).toEqual([3_100]);
    } finally {
      await stack.controls.changeSettings({ reusedClientOrderId: 'refuse' });
    }
  });

  it('refusing gateway, endpoint declared: a sale the gateway never got is sent once more after the window, charged once', async () => {
    const sale = await saleWith(
      { amountMinor: 3_200, endpointId: SECOND_MERCHANT.endpoint },
      { operation: 'SALE', failBefore: 503, times: 1 },
    );
    const final = await stack.events.waitForType(
      sale.paymentId,
      ['approved', 'declined', 'failed'],
      90_000,
    );
    expect({ final: final.event, all: eventsOf(sale.paymentId) }).toMatchObject({
      final: { type: 'approved', amount: { minor: 3_200 } },
    });
    expect(typesOf(sale.paymentId)).toEqual([
      'operation-requested',
      'outcome-unknown',
      'operation-resent',
      'accepted-by-gateway',
      'approved',
    ]);
    expect(await charges(sale.paymentId)).toEqual([3_200]);
  });
});

describe('status queries under a small budget (issue #38 item 1)', () => {
  it(`${LEFT_PROCESSING} payments left processing do not keep ${LOST_REPLIES} lost replies from the truth: each reported within the bound, charged once`, async () => {
    // The crowd: sales the gateway keeps processing for longer than the test, all polled. One
    // fault rule for the endpoint's next LEFT_PROCESSING sales, and the sales in one batch.
    await stack.controls.addFault({
      endpoint: SANDBOX_MERCHANT.plainEndpoint,
      operation: 'SALE',
      processingDelayMs: 30 * 60_000,
      times: LEFT_PROCESSING,
    });
    const left = Array.from({ length: LEFT_PROCESSING }, (_, i) =>
      stack.sale({ cvv: '123', amountMinor: 1_000 + i }),
    );
    await stack.send(...left);
    await Promise.all(
      left.map((s) => stack.events.waitForType(s.paymentId, ['accepted-by-gateway'], 240_000)),
    );
    // Ordinary sales: charged, the answer lost (503 after processing) and the callback lost too,
    // so only a status query can report them.
    const ordinary = await Promise.all(
      Array.from({ length: LOST_REPLIES }, (_, i) =>
        saleWith(
          { amountMinor: 2_000 + i },
          { operation: 'SALE', failAfter: 503, times: 1 },
          { callbacks: 'drop' },
        ),
      ),
    );
    const late: Array<{ paymentId: string; waitedMs: number }> = [];
    for (const sale of ordinary) {
      const unknown = await stack.events.waitForType(sale.paymentId, ['outcome-unknown'], 60_000);
      const final = await stack.events.waitForType(
        sale.paymentId,
        ['approved', 'declined', 'failed'],
        180_000,
      );
      expect({ final: final.event, all: eventsOf(sale.paymentId) }).toMatchObject({
        final: { type: 'approved', amount: { minor: sale.amount.minor } },
      });
      expect(await charges(sale.paymentId)).toEqual([sale.amount.minor]);
      // Within the bound, on the orchestrator's own clock (its events' times).
      const waitedMs = Date.parse(final.event.occurredAt) - Date.parse(unknown.event.occurredAt);
      if (waitedMs > URGENT_BOUND_MS) late.push({ paymentId: sale.paymentId, waitedMs });
    }
    expect(late).toEqual([]);
    // The crowd is still there, still processing: nothing of theirs was charged or reported.
    for (const sale of [...left.slice(0, 3), ...left.slice(-3)]) {
      expect(typesOf(sale.paymentId)).not.toContain('approved');
      expect(await charges(sale.paymentId)).toEqual([]);
    }
  }, 420_000);
});
