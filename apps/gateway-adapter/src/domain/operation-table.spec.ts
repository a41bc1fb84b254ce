import {
  GatewayOperation,
  GatewayRequest,
  SubjectOperation,
  type GatewayFollowUpRequest,
  type GatewaySaleRequest,
} from '@payments/contracts';
import { OPERATIONS, createPaymentGatewayClient } from '@payments/payment-gateway';
import {
  callbackUrl,
  cardPaymentCall,
  DEFAULT_VOID_COMMENT,
  followUpCall,
  isMutating,
  OPERATION_TABLE,
  planCall,
} from './operation-table';

const sale: GatewaySaleRequest = {
  operation: 'sale',
  requestId: '00000000-0000-4000-8000-000000000001',
  paymentId: '00000000-0000-4000-8000-000000000002',
  merchant: { endpointId: '1113' },
  clientOrderId: 'ord-1',
  attempt: 1,
  requestedAt: '2025-03-01T10:00:00.000Z',
  amount: { minor: 1042, currency: 'USD' },
  orderDescription: 'Order 1',
  customer: { email: 'jane@example.com', ipAddress: '203.0.113.7', phone: '+15550100' },
  billingAddress: { address1: '1 Main St', city: 'Springfield', zipCode: '12345', country: 'US' },
  redirectUrl: 'https://shop.example/return',
  sealedCard: 'v1..a.b.c.d',
};
const card = {
  number: '4444555566661111',
  expiryMonth: 3,
  expiryYear: 2031,
  cvv: '123',
  holderName: 'JANE DOE',
};

// prepare() signs without sending: it proves the fields are what the catalogue accepts.
const client = createPaymentGatewayClient({
  baseUrl: 'http://127.0.0.1:1/paynet',
  endpoint: { endpointId: '1113' },
  login: 'merchant',
  controlKey: 'control-key-for-unit-tests',
});

describe('operation fields', () => {
  it('sale: amount in minor units formatted by the client, callback URL per endpoint', () => {
    const call = cardPaymentCall(sale, card, callbackUrl('https://cb.example/', '1113'));
    expect(call.id).toBe('v2/sale');
    const prepared = client.prepare(call.id, call.fields);
    expect(prepared.url.pathname).toBe('/paynet/api/v2/sale/1113');
    expect(prepared.fields).toMatchObject({
      amount: '10.42',
      currency: 'USD',
      expire_month: '03',
      expire_year: '2031',
      server_callback_url: 'https://cb.example/callbacks/gateway/1113',
      redirect_url: 'https://shop.example/return',
      zip_code: '12345',
    });
    expect(Object.keys(prepared.fields)).not.toContain('state');
  });

  it('preauth uses the preauth operation; a missing phone is refused by the client', () => {
    const call = cardPaymentCall(
      { ...sale, operation: 'preauth', customer: { ...sale.customer, phone: undefined } },
      card,
      'https://cb.example/callbacks/gateway/1113',
    );
    expect(call.id).toBe('v2/preauth');
    expect(() => client.prepare(call.id, call.fields as never)).toThrow(/phone is required/);
  });

  it('follow-ups reference the gateway order; void always carries a comment and no amount', () => {
    const base: GatewayFollowUpRequest = {
      ...sale,
      operation: 'capture',
      gatewayOrderId: '900001',
      amount: { minor: 500, currency: 'USD' },
    } as unknown as GatewayFollowUpRequest;
    const capture = followUpCall(base);
    expect(capture).toEqual({
      id: 'v2/capture',
      fields: { client_orderid: 'ord-1', orderid: '900001', amount: 500, currency: 'USD' },
    });
    const voidCall = followUpCall({ ...base, operation: 'void' });
    expect(voidCall).toEqual({
      id: 'v2/void',
      fields: { client_orderid: 'ord-1', orderid: '900001', comment: DEFAULT_VOID_COMMENT },
    });
    expect(followUpCall({ ...base, operation: 'return', amount: undefined }).fields).toEqual({
      client_orderid: 'ord-1',
      orderid: '900001',
    });
    expect(Object.keys(OPERATIONS)).toContain('v2/void');
  });

  it('only status skips the ledger', () => {
    expect(isMutating(sale)).toBe(true);
    expect(
      isMutating({ ...sale, operation: 'status' } as unknown as Parameters<typeof isMutating>[0]),
    ).toBe(false);
  });
});

describe('operation table', () => {
  it('has a row per contract operation; the ledger flag is the catalogue operation’s', () => {
    const rows = GatewayOperation.options.map((operation) => {
      const row = OPERATION_TABLE[operation];
      return { operation, mutating: row.mutating, catalogue: OPERATIONS[row.catalogue].mutating };
    });
    expect(rows.map((r) => r.mutating)).toEqual(rows.map((r) => r.catalogue));
    expect(rows.filter((r) => r.mutating).map((r) => r.operation)).toEqual(
      SubjectOperation.options,
    );
  });

  it('rows that send a card are exactly those whose catalogue operation requires a card number, or takes one the contract request carries sealed', () => {
    // payout-check's card is optional in the catalogue (a bank account may be the destination);
    // our contract's payout-check always carries the sealed destination card.
    const carriesSealedCard = (operation: GatewayOperation) =>
      GatewayRequest.options.some(
        (schema) =>
          'sealedCard' in schema.shape && schema.shape.operation.safeParse(operation).success,
      );
    const needsCard = (operation: GatewayOperation) => {
      const fields: Record<string, { required: boolean; sensitive?: string }> =
        OPERATIONS[OPERATION_TABLE[operation].catalogue].fields;
      const pan = Object.values(fields).find((f) => f.sensitive === 'pan');
      return pan !== undefined && (pan.required || carriesSealedCard(operation));
    };
    expect(GatewayOperation.options.map((o) => OPERATION_TABLE[o].needs === 'sealed-card')).toEqual(
      GatewayOperation.options.map(needsCard),
    );
  });
});

describe('card references and rebill', () => {
  const ids = {
    requestId: '00000000-0000-4000-8000-000000000011',
    paymentId: '00000000-0000-4000-8000-000000000012',
    merchant: { endpointId: '1113' },
    clientOrderId: '00000000-0000-4000-8000-000000000012',
    attempt: 1,
    requestedAt: '2025-03-01T10:00:00.000Z',
  };
  const plan = (request: GatewayRequest) => {
    const p = planCall(request);
    if (p.needs !== 'nothing') throw new Error('no card data expected');
    return p;
  };

  it('rebill: make-rebill with the reference, minor units formatted by the client, the callback URL; no card data', () => {
    const p = plan({
      operation: 'rebill',
      ...ids,
      cardRefId: '10901',
      amount: { minor: 1500, currency: 'USD' },
      orderDescription: 'Monthly plan',
    });
    expect(p.mutating).toBe(true);
    const call = p.call({ serverCallbackUrl: callbackUrl('https://cb.example', '1113') });
    expect(call.id).toBe('v2/make-rebill');
    const prepared = client.prepare(call.id, call.fields);
    expect(prepared.url.pathname).toBe('/paynet/api/v2/make-rebill/1113');
    expect(prepared.fields).toMatchObject({
      client_orderid: ids.clientOrderId,
      cardrefid: '10901',
      amount: '15.00',
      currency: 'USD',
      order_desc: 'Monthly plan',
      server_callback_url: 'https://cb.example/callbacks/gateway/1113',
    });
    expect(Object.keys(prepared.fields)).not.toContain('cvv2');
  });

  it('create-card-ref: v2 (control) by default, v4 (RSA-SHA256) where the endpoint is set to it', () => {
    const p = plan({ operation: 'create-card-ref', ...ids, gatewayOrderId: '900001' });
    const v2 = p.call({});
    expect(v2).toEqual({
      id: 'v2/create-card-ref',
      fields: { client_orderid: ids.clientOrderId, orderid: '900001' },
    });
    expect(client.prepare(v2.id, v2.fields).url.pathname).toBe(
      '/paynet/api/v2/create-card-ref/1113',
    );
    expect(p.call({ cardRefApi: 'v4' }).id).toBe('v4/create-card-ref');
  });

  it('get-card-info: read-only (no ledger), the reference only', () => {
    const p = plan({ operation: 'get-card-info', ...ids, cardRefId: '10901' });
    expect(p.mutating).toBe(false);
    expect(p.call({})).toEqual({ id: 'v2/get-card-info', fields: { cardrefid: '10901' } });
  });
});

describe('one-step payout rows', () => {
  const payout = (operation: 'payout' | 'payout-v4') => ({
    operation,
    requestId: sale.requestId,
    paymentId: sale.paymentId,
    merchant: sale.merchant,
    clientOrderId: 'payout-1',
    attempt: 1,
    requestedAt: sale.requestedAt,
    amount: { minor: 2_500, currency: 'USD' },
    sealedCard: sale.sealedCard,
    purpose: 'settlement',
  });

  it.each([
    ['payout', 'v2/payout', 'client_orderid'],
    ['payout-v4', 'v4/payout', 'client-order-id'],
  ] as const)(
    '%s is %s with the opened card, the order id named %s, no CVV',
    (operation, id, orderField) => {
      const plan = planCall(payout(operation));
      if (plan.needs !== 'sealed-card') throw new Error('a payout sends the destination card');
      expect(plan.mutating).toBe(true);
      const call = plan.call([card], 'https://cb.example/callbacks/gateway/1113');
      expect(call.id).toBe(id);
      expect(call.fields).toMatchObject({
        [orderField]: 'payout-1',
        amount: 2_500,
        currency: 'USD',
        credit_card_number: card.number,
        purpose: 'settlement',
        server_callback_url: 'https://cb.example/callbacks/gateway/1113',
      });
      expect(call.fields).not.toHaveProperty('cvv2');
    },
  );
});

describe('payout-form row', () => {
  it('sends no card but the endpoint callback URL, so the gateway reports the final status', () => {
    const plan = planCall({
      operation: 'payout-form',
      requestId: sale.requestId,
      paymentId: sale.paymentId,
      merchant: sale.merchant,
      clientOrderId: 'payout-form-1',
      attempt: 1,
      requestedAt: sale.requestedAt,
      amount: { minor: 2_700, currency: 'USD' },
      redirectUrl: 'https://shop.example/payee/return',
      orderDescription: 'Payout to a seller',
      purpose: 'settlement',
    });
    if (plan.needs !== 'callback-url') throw new Error('a payout form needs the callback URL');
    expect(plan.mutating).toBe(true);
    const call = plan.call(callbackUrl('https://cb.example', '1113'));
    expect(call.id).toBe('v2/payout-form');
    expect(call.fields).toEqual({
      client_orderid: 'payout-form-1',
      amount: 2_700,
      currency: 'USD',
      redirect_url: 'https://shop.example/payee/return',
      order_desc: 'Payout to a seller',
      purpose: 'settlement',
      server_callback_url: 'https://cb.example/callbacks/gateway/1113',
    });
  });
});

describe('transfer rows', () => {
  const destination = { ...card, number: '4111111111111111', cvv: undefined };
  const request = (operation: 'transfer' | 'transfer-by-ref') => ({
    operation,
    requestId: sale.requestId,
    paymentId: sale.paymentId,
    merchant: sale.merchant,
    clientOrderId: 'transfer-1',
    attempt: 1,
    requestedAt: sale.requestedAt,
    amount: { minor: 1_900, currency: 'USD' },
    ...(operation === 'transfer' ? { sealedCard: 'v1.source' } : {}),
    sealedDestinationCard: 'v1.destination',
  });

  it('v4 transfer opens the source card, then the destination card, each into its own fields', () => {
    const plan = planCall(request('transfer'));
    if (plan.needs !== 'sealed-card') throw new Error('a transfer sends cards');
    expect(plan.sealedCards).toEqual(['v1.source', 'v1.destination']);
    const call = plan.call([card, destination], 'https://cb.example/callbacks/gateway/1113');
    expect(call.id).toBe('v4/transfer');
    expect(call.fields).toMatchObject({
      client_orderid: 'transfer-1',
      amount: 1_900,
      currency: 'USD',
      credit_card_number: card.number,
      cvv2: card.cvv,
      'destination-card-no': '4111111111111111',
    });
    expect(() => plan.call([card], 'https://cb.example/')).toThrow(/takes 2 opened card/);
  });

  it('v4 transfer-by-ref sends the spec fields: client-order-id, amount, currency, destination-card-no', () => {
    const plan = planCall(request('transfer-by-ref'));
    if (plan.needs !== 'sealed-card') throw new Error('a transfer sends cards');
    expect(plan.sealedCards).toEqual(['v1.destination']);
    const call = plan.call([destination], 'https://cb.example/');
    expect(call).toEqual({
      id: 'v4/transfer-by-ref',
      fields: {
        'client-order-id': 'transfer-1',
        amount: 1_900,
        currency: 'USD',
        'destination-card-no': '4111111111111111',
      },
    });
  });
});
