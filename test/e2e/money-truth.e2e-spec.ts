import type { PaymentEvent } from '@payments/contracts';
import { PaymentStack, SANDBOX_MERCHANT } from '../../scripts/stack/payment-stack';
import { oneStepPayout } from '../../scripts/stack/payout-commands';
import { controlFor } from '../support/callback-control';
import { type E2eStack, startE2eStack } from '../support/e2e-stack';

/**
 * Truth about money end to end (issues #9 item 1, #10 items 1 and 2): the four apps as processes
 * on the real broker and PostgreSQL. A follow-up is moved only by a gateway answer about that very
 * operation — never by a browser return or a genuine control replayed as a typed callback while it
 * is in flight — and an operation the gateway never received is sent once more after the safe
 * window (NEVER_RECEIVED_RESEND_SECONDS, 3 s here) and charged once, on an endpoint declared to
 * refuse a reused client_orderid (GATEWAY_REFUSES_REUSED_ORDER_ID_ENDPOINTS).
 */
const NEVER_RECEIVED_SECONDS = 3;
/** The adapter gives up on a gateway answer after this long (the outcome is then unknown). */
const RESPONSE_TIMEOUT_MS = 4_000;

let stack: PaymentStack;
let e2e: E2eStack;

/** Events of a payment, each once (delivery is at least once), in arrival order. */
const eventsOf = (paymentId: string): PaymentEvent[] => stack.events.distinctEventsOf(paymentId);
/** An authorized preauth and the gateway's order id of it. */
async function authorizedPreauth(
  amountMinor: number,
): Promise<{ paymentId: string; orderId: string }> {
  const preauth = stack.preauth({ cvv: '123', amountMinor });
  await stack.send(preauth);
  await stack.events.waitForType(preauth.paymentId, ['authorized']);
  const accepted = eventsOf(preauth.paymentId).find((e) => e.type === 'accepted-by-gateway');
  if (accepted?.type !== 'accepted-by-gateway' || accepted.gatewayOrderId === undefined)
    throw new Error('no gateway order id for the preauth');
  return { paymentId: preauth.paymentId, orderId: accepted.gatewayOrderId };
}

beforeAll(async () => {
  e2e = await startE2eStack('truth', {
    env: {
      orchestrator: {
        NEVER_RECEIVED_RESEND_SECONDS: String(NEVER_RECEIVED_SECONDS),
        // The sandbox refuses a reused client_orderid (its default mode), and these tests say so:
        // a sale with no trace is sent once more (the default sends none; status-scheduling.e2e).
        GATEWAY_REFUSES_REUSED_ORDER_ID_ENDPOINTS: SANDBOX_MERCHANT.plainEndpoint,
      },
      'gateway-adapter': {
        GATEWAY_RESPONSE_TIMEOUT_MS: String(RESPONSE_TIMEOUT_MS),
        // The injected faults below would open the endpoint breaker (its own suite's subject).
        GATEWAY_BREAKER_FAILURES: '1000',
      },
    },
  });
  stack = e2e.stack;
});

afterAll(() => e2e?.stop());

describe('a capture in flight', () => {
  it('is not captured by the preauth genuine control replayed as a type=capture callback; the gateway decline stands', async () => {
    const { paymentId, orderId } = await authorizedPreauth(5_000);
    // The gateway will decline this capture, and answers it slowly: it is in flight meanwhile.
    await stack.controls.addFault({
      clientOrderId: paymentId,
      operation: 'CAPTURE',
      latencyMs: 2_500,
      outcome: 'declined',
      times: 1,
    });
    await stack.send(stack.capture(paymentId, 5_000));
    await stack.events.waitFor(
      paymentId,
      (e) => e.type === 'operation-requested' && e.operation === 'capture',
      30_000,
    );
    // The preauth's approval control is valid for any approved callback on this order.
    const replay = new URLSearchParams({
      status: 'approved',
      orderid: orderId,
      merchant_order: paymentId,
      client_orderid: paymentId,
      type: 'capture',
      amount: '50.00',
      currency: 'USD',
      control: controlFor('approved', orderId, paymentId, SANDBOX_MERCHANT.controlKey),
    });
    const response = await fetch(
      `${stack.urls['callback-ingest']}/callbacks/gateway/${SANDBOX_MERCHANT.plainEndpoint}?${replay.toString()}`,
    );
    expect(response.status).toBe(200); // the checksum is genuine: verified, published, a hint
    // A browser return saying approved, too, while the capture is still in flight.
    const back = new URLSearchParams({
      status: 'approved',
      orderid: orderId,
      merchant_order: paymentId,
      control: controlFor('approved', orderId, paymentId, SANDBOX_MERCHANT.controlKey),
    });
    await fetch(`${stack.urls['callback-ingest']}/return/${SANDBOX_MERCHANT.plainEndpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: back.toString(),
      redirect: 'manual',
    });
    const final = await stack.events.waitFor(
      paymentId,
      (e) => e.type === 'declined' || e.type === 'captured',
      60_000,
    );
    expect(final.event).toMatchObject({ type: 'declined', operation: 'capture' });
    expect(stack.events.typesOf(paymentId)).not.toContain('captured');
    expect(await stack.controls.amounts(paymentId, 'captured')).toEqual([]);
    const view = await stack.payment(paymentId);
    expect(view.body).toMatchObject({ status: 'authorized', amounts: { captured: 0 } });
  });
});

describe('an operation the gateway never received', () => {
  it('a sale answered 503 before processing is unknown, sent once more after the window, charged once', async () => {
    const sale = await stack.saleWith(4_400, { operation: 'SALE', failBefore: 503, times: 1 });
    const final = await stack.events.finalOf(sale.paymentId);
    // The whole stream in the failure message when it is not approved.
    expect({ final, all: eventsOf(sale.paymentId) }).toMatchObject({
      final: { type: 'approved' },
    });
    expect(stack.events.typesOf(sale.paymentId)).toEqual([
      'operation-requested',
      'outcome-unknown',
      'operation-resent',
      'accepted-by-gateway',
      'approved',
    ]);
    expect(await stack.controls.amounts(sale.paymentId, 'charged')).toEqual([4_400]);
  });

  it('a capture answered 503 before processing is not resolved by the preauth status; resent once, captured once', async () => {
    const { paymentId } = await authorizedPreauth(6_000);
    await stack.controls.addFault({
      clientOrderId: paymentId,
      operation: 'CAPTURE',
      failBefore: 503,
      times: 1,
    });
    await stack.send(stack.capture(paymentId, 6_000));
    const final = await stack.events.waitFor(
      paymentId,
      (e) => ['captured', 'declined', 'failed'].includes(e.type),
      90_000,
    );
    expect({ final: final.event, all: eventsOf(paymentId) }).toMatchObject({
      final: { type: 'captured', amount: { minor: 6_000 } },
    });
    const types = stack.events.typesOf(paymentId);
    expect(types.slice(types.indexOf('authorized') + 1)).toEqual([
      'operation-requested',
      'outcome-unknown',
      'operation-resent',
      'accepted-by-gateway',
      'captured',
    ]);
    expect(await stack.controls.amounts(paymentId, 'captured')).toEqual([6_000]);
  });
});

describe('an answer about an earlier request of the order', () => {
  it('a second return answered 503 before processing is never settled by the status of the first; it stays unknown with the alert, the ledger refunds 3,000 only', async () => {
    const sale = await stack.saleWith(10_000);
    await stack.events.waitForType(sale.paymentId, ['approved']);
    await stack.send(stack.return(sale.paymentId, 3_000));
    await stack.events.waitFor(
      sale.paymentId,
      (e) => e.type === 'returned' && e.amount.minor === 3_000,
      30_000,
    );
    // The gateway never gets the second return: the order's latest request stays the first.
    await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      operation: 'RETURN',
      failBefore: 503,
      times: 1,
    });
    await stack.send(stack.return(sale.paymentId, 2_000));
    const settled = await stack.events.waitFor(
      sale.paymentId,
      (e) =>
        (e.type === 'returned' && e.amount.minor === 2_000) ||
        (e.type === 'outcome-unknown' && e.operation === 'return' && e.alert),
      60_000,
    );
    expect({ settled: settled.event, all: eventsOf(sale.paymentId) }).toMatchObject({
      settled: { type: 'outcome-unknown', alert: true, concern: 'no-trace' },
    });
    // A second return cannot be refused as a duplicate: never sent again, never refunded twice.
    expect(stack.events.typesOf(sale.paymentId)).not.toContain('operation-resent');
    expect(await stack.controls.amounts(sale.paymentId, 'refunded')).toEqual([3_000]);
    const view = await stack.payment(sale.paymentId);
    expect(view.body).toMatchObject({ amounts: { returned: 3_000 } });
  });
});

describe('a gateway that is only slow', () => {
  /**
   * Longer than the adapter waits, than the window, and than a repeat and its own window take
   * (≈ 20 s): the orchestrator sees no trace of the sale twice before the gateway charges it.
   */
  const SLOW_MS = 30_000;

  it('a sale whose request and its one repeat arrive after the adapter gave up is charged once and reported approved, never failed', async () => {
    // Both the send and its repeat are slow to arrive (longer than the adapter waits, and than
    // the window): the gateway has no order while the orchestrator asks, then charges.
    const sale = await stack.saleWith(5_100, { operation: 'SALE', latencyMs: SLOW_MS, times: 2 });
    const final = await stack.events.finalOf(sale.paymentId);
    expect({ final, all: eventsOf(sale.paymentId) }).toMatchObject({
      final: { type: 'approved', amount: { minor: 5_100 } },
    });
    expect(stack.events.typesOf(sale.paymentId)).not.toContain('failed');
    // The repeat (if one went out) reaches the gateway SLOW_MS after it was sent, under the same
    // client_orderid: wait for that moment, then the ledger shows one charge.
    const resent = eventsOf(sale.paymentId).find((e) => e.type === 'operation-resent');
    if (resent !== undefined) {
      const arrives = Date.parse(resent.occurredAt) + SLOW_MS + 2_000;
      await new Promise((r) => setTimeout(r, Math.max(0, arrives - Date.now())));
    }
    expect(await stack.controls.amounts(sale.paymentId, 'charged')).toEqual([5_100]);
  });

  it('a status query refused with 403 is no evidence that the gateway never got the sale: nothing is sent again, the sale settles on the first status answer', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 5_200 });
    // Charged, the answer lost; then the status queries refused (403) for a while.
    await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      operation: 'SALE',
      failAfter: 503,
      times: 1,
    });
    // Its callback lost too: only a status answer can settle it.
    await stack.controls.addFault({ clientOrderId: sale.paymentId, callbacks: 'drop' });
    const refusals = await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      operation: 'STATUS',
      failBefore: 403,
      times: 4,
    });
    await stack.send(sale);
    const final = await stack.events.finalOf(sale.paymentId);
    const left = (await stack.controls.faults()).find((f) => f.id === refusals.id);
    expect(left?.remaining ?? 0).toBe(0); // every refusal was served before the answer
    expect({ final, all: eventsOf(sale.paymentId) }).toMatchObject({
      final: { type: 'approved', amount: { minor: 5_200 } },
    });
    expect(stack.events.typesOf(sale.paymentId)).not.toContain('operation-resent');
    expect(await stack.controls.amounts(sale.paymentId, 'charged')).toEqual([5_200]);
  });
});

describe('the gateway processes another amount than was asked for', () => {
  it('a sale charged 1.00 where 60.00 was asked is never reported approved: unknown with the amount-mismatch alert, the gateway amount in it', async () => {
    const sale = await stack.saleWith(6_000, {
      operation: 'SALE',
      processedAmountMinor: 100,
      times: 1,
    });
    const alerted = await stack.events.waitFor(
      sale.paymentId,
      (e) => e.type === 'approved' || (e.type === 'outcome-unknown' && e.alert),
      60_000,
    );
    expect({ alerted: alerted.event, all: eventsOf(sale.paymentId) }).toMatchObject({
      alerted: {
        type: 'outcome-unknown',
        concern: 'amount-mismatch',
        reportedAmount: { minor: 100, currency: 'USD' },
      },
    });
    expect(stack.events.typesOf(sale.paymentId)).not.toContain('approved');
    // What really moved is what the alert names.
    expect(await stack.controls.amounts(sale.paymentId, 'charged')).toEqual([100]);
  });

  it('a one-step payout of 70.00 the gateway pays as 1.00 is never reported paid-out 70.00', async () => {
    const payout = oneStepPayout({ amountMinor: 7_000 });
    await stack.controls.addFault({
      clientOrderId: payout.payoutId,
      operation: 'PAYOUT',
      processedAmountMinor: 100,
      times: 1,
    });
    await stack.sendRaw(payout);
    const alerted = await stack.events.waitForPayout(
      payout.payoutId,
      ['paid-out', 'payout-declined', 'payout-failed', 'payout-outcome-unknown'],
      60_000,
    );
    const all = stack.events.payoutEventsOf(payout.payoutId).map((r) => r.event);
    expect({ alerted: alerted.event, all }).toMatchObject({
      alerted: {
        type: 'payout-outcome-unknown',
        alert: true,
        concern: 'amount-mismatch',
        reportedAmount: { minor: 100, currency: 'USD' },
      },
    });
    expect(all.map((e) => e.type)).not.toContain('paid-out');
    const ledger = await stack.controls.ledger(payout.payoutId);
    expect(ledger.entries.map((e) => `${e.movement} ${e.amountMinor}`)).toEqual(['paid-out 100']);
  });
});
