import { GatewayCallback, StatusCheckHint } from '@payments/contracts';
import {
  gatewayControl,
  signedCallback,
  signedReturn,
  TEST_CONTROL_KEY,
} from '../../../../test/support/callback';
import { decide, type IngestDecision, type IngestInput } from './decide';

const receivedAt = '2025-01-31T12:00:00.000Z';

function input(params: Record<string, string>, over: Partial<IngestInput> = {}): IngestInput {
  return {
    endpointId: '1111',
    source: 'server-callback',
    params,
    controlKey: TEST_CONTROL_KEY,
    receivedAt,
    ...over,
  };
}

function rejected(d: IngestDecision): Extract<IngestDecision, { kind: 'reject' }> {
  if (d.kind !== 'reject') throw new Error(`expected a rejection, got ${d.kind}`);
  return d;
}

describe('decide', () => {
  it('publishes a verified callback with the amount in minor units and the card summary', () => {
    const { paymentId, orderid, params } = signedCallback();
    const d = decide(input(params));
    expect(d.kind).toBe('publish');
    if (d.kind !== 'publish') return;
    expect(GatewayCallback.parse(d.message)).toEqual(d.message);
    expect(d.message).toMatchObject({
      kind: 'callback',
      paymentId,
      clientOrderId: paymentId,
      source: 'server-callback',
      receivedAt,
      report: {
        status: 'approved',
        gatewayOrderId: orderid,
        amount: { minor: 1042, currency: 'USD' },
        transactionType: 'sale',
        approvalCode: '242424',
        card: { bin: '411111', lastFour: '1111', brand: 'VISA' },
      },
    });
    expect(d.message.notificationId).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    ['JPY', '500', 500],
    ['KWD', '1.234', 1234],
    ['USD', '0.05', 5],
    ['EUR', '10.500', 1050],
  ])('converts %s %s to %d minor units by the exponent', (currency, amount, minor) => {
    const d = decide(input(signedCallback({ currency, amount }).params));
    expect(d.kind === 'publish' && d.message.report.amount).toEqual({ minor, currency });
  });

  it('gives the same callback the same notification id, and a different one another id', () => {
    const a = signedCallback();
    const first = decide(input(a.params));
    const again = decide(input({ ...a.params }, { receivedAt: '2025-02-01T00:00:00.000Z' }));
    const declined = decide(
      input(signedCallback({ ...a.params, status: 'declined', control: undefined }).params),
    );
    expect(first.kind === 'publish' && again.kind === 'publish').toBe(true);
    if (first.kind !== 'publish' || again.kind !== 'publish' || declined.kind !== 'publish') return;
    expect(again.message.notificationId).toBe(first.message.notificationId);
    expect(declined.message.notificationId).not.toBe(first.message.notificationId);
    // The browser return of the same transaction is another notification.
    const ret = decide(input(a.params, { source: 'browser-return' }));
    expect(ret.kind === 'publish' && ret.message.notificationId).not.toBe(
      first.message.notificationId,
    );
  });

  it('refuses a forged control (403 class) and offers a checksum-mismatch hint', () => {
    const { paymentId, params } = signedCallback();
    const d = rejected(
      decide(
        input({
          ...params,
          control: gatewayControl(
            'approved',
            params.orderid ?? '',
            paymentId,
            'another-key-0000000',
          ),
        }),
      ),
    );
    expect(d.code).toBe('checksum-mismatch');
    expect(d.paymentId).toBe(paymentId);
    expect(StatusCheckHint.parse(d.hint)).toMatchObject({
      paymentId,
      reason: 'checksum-mismatch',
      receivedAt,
    });
  });

  it('verifies against the key of the endpoint, not any key', () => {
    const { params } = signedCallback();
    expect(rejected(decide(input(params, { controlKey: 'a-different-key-123456' }))).code).toBe(
      'checksum-mismatch',
    );
  });

  it('refuses a callback whose verified fields were changed', () => {
    for (const field of ['status', 'orderid'] as const) {
      const { params } = signedCallback();
      const edited = { ...params, [field]: field === 'status' ? 'declined' : '999' };
      expect(rejected(decide(input(edited))).code).toBe('checksum-mismatch');
    }
  });

  it.each([
    ['wrong length', 'abc123'],
    ['non-hex', 'z'.repeat(40)],
    ['too long', 'a'.repeat(41)],
  ])('treats a %s control as a mismatch', (_, control) => {
    const { params } = signedCallback();
    expect(rejected(decide(input({ ...params, control }))).code).toBe('checksum-mismatch');
  });

  it('accepts an upper-case hex control (same digest)', () => {
    const { params } = signedCallback();
    expect(decide(input({ ...params, control: (params.control ?? '').toUpperCase() })).kind).toBe(
      'publish',
    );
  });

  it('refuses a missing or empty control (400 class) with an incomplete hint', () => {
    const { paymentId, params } = signedCallback();
    const { control: _c, ...without } = params;
    for (const p of [without, { ...params, control: '' }]) {
      const d = rejected(decide(input(p)));
      expect(d.code).toBe('missing-control');
      expect(d.hint).toMatchObject({ paymentId, reason: 'incomplete' });
    }
  });

  it('hints "browser-return" for a return without control (e.g. a 3-D Secure hand-back)', () => {
    const { paymentId, params } = signedReturn();
    const { control: _c, ...without } = params;
    expect(rejected(decide(input(without, { source: 'browser-return' }))).hint).toMatchObject({
      paymentId,
      reason: 'browser-return',
    });
  });

  it('refuses missing status or orderid as malformed', () => {
    const { params } = signedCallback();
    const { status: _s, ...noStatus } = params;
    expect(rejected(decide(input(noStatus))).code).toBe('malformed-callback');
    const { orderid: _o, ...noOrder } = params;
    expect(rejected(decide(input(noOrder))).message).toContain('orderid');
  });

  it('refuses a verified callback whose merchant_order is not a payment id, without a hint', () => {
    const { params } = signedCallback({ merchant_order: 'ORDER-42', client_orderid: 'ORDER-42' });
    const d = rejected(decide(input(params)));
    expect(d.code).toBe('unknown-merchant-order');
    expect(d.hint).toBeUndefined();
    expect(d.paymentId).toBeUndefined();
  });

  it("names the schedule's saga for a registered schedule's charge (<schedule id>-<n>)", () => {
    const scheduleId = '0f8c4a52-3b7e-4c1d-9a2e-5d6f7a8b9c0d';
    const ref = `${scheduleId}-3`;
    const { params } = signedCallback({ merchant_order: ref, client_orderid: ref });
    const d = decide(input(params));
    expect(d.kind === 'publish' && d.message).toMatchObject({
      paymentId: scheduleId,
      clientOrderId: ref,
    });
  });

  it.each([
    ['a zero charge number', '-0'],
    ['a charge number with 7 digits', '-1234567'],
    ['a non-numeric suffix', '-x'],
  ])('refuses a merchant_order of a UUID with %s as unknown', (_what, suffix) => {
    const ref = `0f8c4a52-3b7e-4c1d-9a2e-5d6f7a8b9c0d${suffix}`;
    const { params } = signedCallback({ merchant_order: ref, client_orderid: ref });
    expect(rejected(decide(input(params))).code).toBe('unknown-merchant-order');
  });

  it('gives no hint when the forged callback names no UUID', () => {
    const { params } = signedCallback({
      merchant_order: 'x',
      client_orderid: 'x',
      control: 'f'.repeat(40),
    });
    expect(rejected(decide(input(params))).hint).toBeUndefined();
  });

  it('refuses merchant_order and client_orderid that differ', () => {
    const { params } = signedCallback();
    expect(rejected(decide(input({ ...params, client_orderid: crypto.randomUUID() }))).code).toBe(
      'malformed-callback',
    );
  });

  it('refuses a verified callback with an unreadable amount or currency, with a hint', () => {
    for (const over of [
      { amount: '10.4.2' },
      { amount: '-1' },
      { amount: '1e3' },
      { currency: 'XXX' },
      { amount: '10.421' },
    ]) {
      const d = rejected(decide(input(signedCallback(over).params)));
      expect(d.code).toBe('malformed-callback');
      expect(d.hint?.reason).toBe('incomplete');
    }
  });

  it('publishes the status of an amount that comes without a currency, the amount kept as unreadable', () => {
    const { params } = signedCallback();
    const { currency: _c, ...noCurrency } = params;
    const d = decide(input(noCurrency));
    expect(d.kind).toBe('publish');
    expect(d.kind === 'publish' && d.message.report.amount).toBeUndefined();
    // Never "no amount": the orchestrator must not read it as an approval at its own amount.
    expect(d.kind === 'publish' && d.message.report.unreadableAmount).toEqual({
      amount: params.amount,
    });
  });

  it('uses client_orderid when merchant_order is absent (same value, same control)', () => {
    const { paymentId, params } = signedCallback();
    const { merchant_order: _m, ...rest } = params;
    const d = decide(input(rest));
    expect(d.kind === 'publish' && d.message.paymentId).toBe(paymentId);
  });

  it('publishes a verified browser return (no amount) as source browser-return', () => {
    const { paymentId, orderid, params } = signedReturn({ status: 'declined' });
    const d = decide(input(params, { source: 'browser-return' }));
    expect(d.kind === 'publish' && d.message).toMatchObject({
      source: 'browser-return',
      paymentId,
      report: { status: 'declined', gatewayOrderId: orderid },
    });
  });

  it('normalises unknown statuses to "unknown" but verifies the raw one', () => {
    const d = decide(input(signedCallback({ status: 'Approved-ish' }).params));
    expect(d.kind === 'publish' && d.message.report.status).toBe('unknown');
  });

  it('truncates a long error message and drops card fields of the wrong shape', () => {
    const d = decide(
      input(
        signedCallback({
          status: 'declined',
          error_message: 'x'.repeat(3000),
          bin: '4111111111111111',
          'last-four-digits': '11',
        }).params,
      ),
    );
    expect(d.kind).toBe('publish');
    if (d.kind !== 'publish') return;
    expect(d.message.report.errorMessage).toHaveLength(1024);
    expect(d.message.report.card).toEqual({ brand: 'VISA' });
  });

  it('refuses a gateway order id beyond the contract (128) as malformed', () => {
    const d = rejected(decide(input(signedCallback({ orderid: '9'.repeat(129) }).params)));
    expect(d.code).toBe('malformed-callback');
  });
});
