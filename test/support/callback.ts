/**
 * Test data for callback-ingest: gateway callbacks and browser returns signed exactly as the
 * gateway signs them (facts §6: control = sha1(status + orderid + merchant_order + key)),
 * computed here independently of libs/payment-gateway so a bug there cannot hide.
 */
import { createHash, randomUUID } from 'node:crypto';

export const TEST_CONTROL_KEY = 'B17F59B4-A7DC-41B4-8FF9-37D986B43D20';
export const TEST_ENDPOINT_ID = '1111';

export function gatewayControl(
  status: string,
  orderid: string,
  merchantOrder: string,
  key: string = TEST_CONTROL_KEY,
): string {
  return createHash('sha1')
    .update(status + orderid + merchantOrder + key, 'utf8')
    .digest('hex');
}

export interface CallbackFixture {
  readonly paymentId: string;
  readonly orderid: string;
  readonly params: Record<string, string>;
}

/** A complete server callback as the sandbox sends it (facts §6 parameters). */
export function signedCallback(
  overrides: Partial<Record<string, string>> = {},
  key: string = TEST_CONTROL_KEY,
): CallbackFixture {
  const paymentId = overrides.merchant_order ?? randomUUID();
  const orderid = overrides.orderid ?? String(100_000 + Math.floor(Math.random() * 899_999));
  const status = overrides.status ?? 'approved';
  const params: Record<string, string> = {
    status,
    merchant_order: paymentId,
    client_orderid: paymentId,
    orderid,
    type: 'sale',
    amount: '10.42',
    currency: 'USD',
    'approval-code': '242424',
    'last-four-digits': '1111',
    bin: '411111',
    'card-type': 'VISA',
    name: 'Test Payer',
    email: 'payer@example.com',
    descriptor: 'sandbox',
  };
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) params[k] = v;
  params.control = overrides.control ?? gatewayControl(status, orderid, paymentId, key);
  return { paymentId, orderid, params };
}

/** The POST back to redirect_url (facts §5): status, orderid, merchant_order, control. */
export function signedReturn(
  overrides: Partial<Record<string, string>> = {},
  key: string = TEST_CONTROL_KEY,
): CallbackFixture {
  const paymentId = overrides.merchant_order ?? randomUUID();
  const orderid = overrides.orderid ?? String(100_000 + Math.floor(Math.random() * 899_999));
  const status = overrides.status ?? 'approved';
  const params: Record<string, string> = {
    status,
    orderid,
    merchant_order: paymentId,
    client_orderid: paymentId,
  };
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) params[k] = v;
  params.control = overrides.control ?? gatewayControl(status, orderid, paymentId, key);
  return { paymentId, orderid, params };
}

export function formEncode(params: Readonly<Record<string, string>>): string {
  return new URLSearchParams(params).toString();
}

/** A manual clock for the hint limiter. */
export class ManualClock {
  constructor(private ms: number = Date.UTC(2025, 0, 31, 12, 0, 0)) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}
