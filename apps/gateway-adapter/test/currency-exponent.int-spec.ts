/**
 * A per-endpoint currency exponent, adapter → sandbox over real HTTP, on the real broker and a
 * test PostgreSQL database: sandbox endpoint 1117 (sandbox.merchants.json) expects JPY with two
 * decimals (`amountExponent: 2`), and the adapter's credentials entry for it says the same
 * (`currencyExponents: { JPY: 2 }`), so a 1,500 yen sale goes out as "1500.00" with the control
 * over 150000, is approved, and the status report and the sandbox ledger carry ISO minor units.
 */
import { randomUUID } from 'node:crypto';
import { type GatewayRequest } from '@payments/contracts';
import {
  type AdapterStack,
  produceRequests,
  resultsFor,
  saleRequest,
  sealingKeys,
  startAdapterStack,
} from '../../../test/support/adapter-harness';

jest.setTimeout(120_000);

const JPY_TWO_DECIMALS = '1117';
const keys = sealingKeys();

function jpySale(endpointId: string, minor: number): GatewayRequest {
  return saleRequest(keys.publicPem, 'exp', {
    merchant: { endpointId },
    amount: { minor, currency: 'JPY' },
    orderDescription: 'Exponent test order',
    billingAddress: { address1: '1 Main St', city: 'Tokyo', zipCode: '100-0001', country: 'JP' },
  });
}

function statusOf(sale: GatewayRequest, gatewayOrderId: string): GatewayRequest {
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
    gatewayOrderId,
  };
}

describe('gateway-adapter → sandbox with a per-endpoint currency exponent', () => {
  let stack: AdapterStack;

  beforeAll(async () => {
    stack = await startAdapterStack({
      database: 'gateway_adapter_exponent',
      keys,
      // The sandbox merchant's login and control key, on its endpoint 1117 alone.
      endpoints: [{ endpointId: JPY_TWO_DECIMALS, currencyExponents: { JPY: 2 } }],
    });
  }, 120_000);

  afterAll(() => stack?.stop());

  it('a 1,500 yen sale is accepted, approved, reported and charged as 1,500 yen', async () => {
    const sale = jpySale(JPY_TWO_DECIMALS, 1500);
    await produceRequests([sale]);
    const [result] = await resultsFor(stack.collector, sale.requestId);
    expect(result?.value.result).toMatchObject({ kind: 'accepted' });
    const orderId =
      result?.value.result.kind === 'accepted' ? (result.value.result.gatewayOrderId ?? '') : '';
    expect(orderId).toMatch(/^\d+$/);

    const deadline = Date.now() + 30_000;
    let report: unknown;
    for (;;) {
      const status = statusOf(sale, orderId);
      await produceRequests([status]);
      const [r] = await resultsFor(stack.collector, status.requestId);
      report = r?.value.result;
      if (Date.now() > deadline) break;
      // A status query for this payment sent moments ago is held back: ask again at retryAt.
      if (r?.value.result.kind === 'not-sent' && r.value.result.retryAt !== undefined) {
        const waitMs = Date.parse(r.value.result.retryAt) - Date.now();
        await new Promise((done) => setTimeout(done, Math.max(0, waitMs)));
        continue;
      }
      const s = (report as { report?: { status?: string } }).report?.status;
      if (s !== 'processing') break;
      await new Promise((done) => setTimeout(done, 200));
    }
    expect(report).toMatchObject({
      kind: 'accepted',
      report: { status: 'approved', amount: { minor: 1500, currency: 'JPY' } },
    });
    expect((await stack.sandbox.ledger(sale.clientOrderId)).totals).toEqual({ charged: 1500 });
  });
});
