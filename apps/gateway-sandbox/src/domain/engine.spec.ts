import { VirtualClock } from './clock';
import {
  CallbackDelivery,
  DEFAULT_SETTINGS,
  EngineRequest,
  SandboxEngine,
  addPeriod,
} from './engine';
import { Ledger } from './ledger';
import { MerchantRegistry, merchantsFileSchema } from './merchants';
import { OPERATIONS, routePath } from './operations';
import { decideByCvv, forcedResult, isFinal } from './outcomes';

/** The engine without HTTP or Nest: given a state, when a request arrives, then replies and money. */
function setup(delayMs = 0, endpointSetUp: Record<string, unknown> = {}) {
  const registry = new MerchantRegistry(
    merchantsFileSchema.parse({
      merchants: [
        {
          login: 'm',
          controlKey: 'control-key-1',
          processingDelayMs: delayMs,
          endpoints: [{ id: 7, currency: 'USD', ...endpointSetUp }],
        },
      ],
    }),
  );
  let wall = Date.UTC(2030, 0, 31, 12);
  const clock = new VirtualClock(() => wall);
  const ledger = new Ledger();
  const callbacks: CallbackDelivery[] = [];
  const engine = new SandboxEngine(
    registry,
    clock,
    ledger,
    { enqueue: (d) => callbacks.push(d) },
    {
      ...DEFAULT_SETTINGS,
      requireCustomerFields: false,
    },
  );
  const endpoint = registry.endpoint(7);
  if (!endpoint) throw new Error('endpoint');
  const request = (op: EngineRequest['op'], fields: Record<string, string>): EngineRequest => ({
    op,
    endpoint,
    endpointRef: '7',
    fields: new Map(Object.entries(fields)),
    baseUrl: 'http://sandbox.test',
  });
  const sale = (id: string, cvv = '123', amount = '5.00', op: EngineRequest['op'] = 'SALE') =>
    engine.execute(
      request(op, {
        client_orderid: id,
        amount,
        currency: 'USD',
        email: 'a@b.c',
        credit_card_number: '4444444444444448',
        card_printed_name: 'X',
        expire_month: '12',
        expire_year: '2099',
        cvv2: cvv,
        server_callback_url: 'http://merchant.test/cb',
      }),
    );
  const status = (id: string) =>
    engine.execute(request('STATUS', { login: 'm', client_orderid: id })).body;
  return {
    engine,
    clock,
    ledger,
    callbacks,
    request,
    sale,
    status,
    tick: (ms: number) => (wall += ms),
  };
}

describe('SandboxEngine', () => {
  it('keeps a sale processing until the configured delay has passed on the clock', () => {
    const t = setup(5000);
    const r = t.sale('a');
    expect(r.kind).toBe('ok');
    expect(t.status('a').status).toBe('processing');
    t.clock.advance(4999);
    expect(t.status('a').status).toBe('processing');
    t.clock.advance(1);
    expect(t.status('a').status).toBe('approved');
    expect(t.ledger.totals()).toEqual({ charged: 500 });
    expect(t.callbacks).toHaveLength(1);
    expect(t.callbacks[0]?.params).toMatchObject({
      status: 'approved',
      amount: '5.00',
      type: 'sale',
    });
  });

  it("a request's own processing delay (test controls: a payment left processing) replaces the endpoint's", () => {
    const t = setup(1000);
    const r = t.engine.execute({
      ...t.request('SALE', {
        client_orderid: 'held',
        amount: '5.00',
        currency: 'USD',
        email: 'a@b.c',
        credit_card_number: '4444444444444448',
        card_printed_name: 'X',
        expire_month: '12',
        expire_year: '2099',
        cvv2: '123',
        server_callback_url: 'http://merchant.test/cb',
      }),
      processingDelayMs: 600_000,
    });
    expect(r.kind).toBe('ok');
    t.clock.advance(599_999);
    expect(t.status('held').status).toBe('processing');
    expect(t.ledger.totals()).toEqual({});
    t.clock.advance(1);
    expect(t.status('held').status).toBe('approved');
  });

  it('the background tick alone finishes due work (no poll needed)', () => {
    const t = setup(1000);
    t.sale('b');
    t.tick(1000);
    t.engine.settle();
    expect(t.callbacks).toHaveLength(1);
  });

  it('answers a repeated request with the first reply and refuses a changed one', () => {
    const t = setup();
    const first = t.sale('c');
    expect(t.sale('c')).toEqual(first);
    const changed = t.sale('c', '123', '6.00');
    expect(changed.kind).toBe('refused');
    expect(t.ledger.totals()).toEqual({ charged: 500 });
  });

  it('override rewrites a final status silently: no ledger movement, no callback', () => {
    const t = setup();
    const orderId = String(t.sale('ov').body['paynet-order-id']);
    expect(t.status('ov').status).toBe('approved');
    const callbacks = t.callbacks.length;
    expect(t.engine.override(orderId, forcedResult('declined'))).toBe(true);
    expect(t.status('ov').status).toBe('declined');
    expect(t.ledger.totals()).toEqual({ charged: 500 });
    expect(t.callbacks).toHaveLength(callbacks);
    expect(t.engine.override('no-such-order', forcedResult('approved'))).toBe(false);
  });

  it('chargeAgain plants a second approved order under the client order id: charged, no callback', () => {
    const t = setup();
    const orderId = String(t.sale('twice').body['paynet-order-id']);
    const callbacks = t.callbacks.length;
    const second = t.engine.chargeAgain(orderId);
    expect(second).toBeDefined();
    expect(second).not.toBe(orderId);
    expect(t.engine.ordersOf('twice')).toEqual([orderId, second]);
    // The lookup by client order id alone answers about the latest order; ours is unchanged.
    expect(t.status('twice')).toMatchObject({
      status: 'approved',
      'paynet-order-id': second,
      'transaction-type': 'sale',
    });
    expect(t.engine.describeOrder(orderId)).toMatchObject({ status: 'approved' });
    expect(t.ledger.totals()).toEqual({ charged: 1000 });
    expect(t.ledger.list({ clientOrderId: 'twice' }).map((e) => e.orderId)).toEqual([
      orderId,
      second,
    ]);
    expect(t.callbacks).toHaveLength(callbacks);
    expect(t.engine.chargeAgain('no-such-order')).toBeUndefined();
  });

  it('gives the sale reply a numeric paynet-order-id and the preauth reply a string', () => {
    const t = setup();
    expect(typeof t.sale('d').body['paynet-order-id']).toBe('number');
    expect(typeof t.sale('e', '123', '5.00', 'PREAUTH').body['paynet-order-id']).toBe('string');
  });

  it('a pending 3-D Secure challenge blocks the sale; the wrong password declines it', () => {
    const t = setup();
    t.sale('f', '321');
    const pending = t.status('f');
    expect(pending.status).toBe('processing');
    const token = String(pending['redirect-to']).split('/').pop() ?? '';
    t.clock.advance(599_999);
    expect(t.status('f').status).toBe('processing');
    const page = t.engine.acsSubmit(token, new Map([['password', 'nope']]));
    expect(page.kind).toBe('html');
    expect(t.status('f')).toMatchObject({
      status: 'declined',
      'verified-3d-status': 'NOT_AUTHENTICATED',
    });
    expect(t.ledger.list()).toEqual([]);
  });

  it('a 3-D Secure challenge the payer abandons is declined after 10 minutes, with a callback', () => {
    const t = setup();
    t.sale('g', '321');
    const token = String(t.status('g')['redirect-to']).split('/').pop() ?? '';
    t.clock.advance(599_999);
    expect(t.status('g').status).toBe('processing');
    t.clock.advance(1);
    expect(t.status('g')).toMatchObject({
      status: 'declined',
      'error-message': '3-D Secure not completed in time',
      'verified-3d-status': 'UNKNOWN',
    });
    expect(t.callbacks.map((c) => c.params.status)).toEqual(['declined']);
    expect(t.engine.acsPage(token)).toMatchObject({ status: 409 });
    expect(t.ledger.list()).toEqual([]);
  });

  it('a recurring plan charges once per period, month ends clamp', () => {
    expect(new Date(addPeriod(Date.UTC(2030, 0, 31), 'month', 1)).toISOString()).toBe(
      '2030-02-28T00:00:00.000Z',
    );
    expect(addPeriod(0, 'week', 2)).toBe(14 * 86_400_000);
  });
});

describe('outcomes and routing', () => {
  it('maps the CVV table, with 3DS cards depending on the gate and the payer', () => {
    const gate = { threeDSGate: true, payerPresent: true };
    expect(decideByCvv('321', gate)).toEqual({ kind: 'challenge' });
    expect(decideByCvv('321', { ...gate, threeDSGate: false })).toMatchObject({
      result: { status: 'declined' },
    });
    expect(decideByCvv('321', { ...gate, payerPresent: false })).toMatchObject({
      result: { status: 'approved' },
    });
    expect(decideByCvv('217', gate)).toMatchObject({ result: { status: 'unknown' } });
    expect(isFinal('unknown')).toBe(false);
    expect(isFinal('filtered')).toBe(true);
  });

  it.each([
    ['sale', {}, 'charged'],
    ['preauth', { paymentForm: 'preauth' }, 'authorized'],
  ] as const)(
    'payment-form performs what the endpoint is set up for (%s): status and callback name it',
    (transaction, setUp, movement) => {
      const t = setup(0, { threeDSecure: false, ...setUp });
      const form = t.engine.execute(
        t.request('PAYMENTFORM', {
          client_orderid: 'universal',
          amount: '12.50',
          currency: 'USD',
          email: 'a@b.c',
          redirect_url: 'http://merchant.test/return',
          server_callback_url: 'http://merchant.test/cb',
        }),
      );
      const url = String((form.body as Record<string, unknown>)['redirect-url']);
      const token = url.slice(url.lastIndexOf('/') + 1);
      t.engine.hostedSubmit(
        token,
        new Map(
          Object.entries({
            credit_card_number: '4444444444444448',
            card_printed_name: 'X',
            expire_month: '12',
            expire_year: '2099',
            cvv2: '123',
          }),
        ),
      );
      expect(t.status('universal')).toMatchObject({
        status: 'approved',
        'transaction-type': transaction,
      });
      expect(t.callbacks.map((c) => c.params.type)).toEqual([transaction]);
      expect(t.ledger.list({ clientOrderId: 'universal' })).toMatchObject([
        { movement, amountMinor: 1_250 },
      ]);
    },
  );

  it('routes all 27 operations with and without prefix and group', () => {
    expect(OPERATIONS).toHaveLength(27);
    for (const op of OPERATIONS) {
      expect(routePath(`/api/${op.path}/12`)).toMatchObject({
        operation: op,
        id: '12',
        group: false,
        prefix: '',
      });
      expect(routePath(`/paynet/api/${op.path}/group/34`)).toMatchObject({
        operation: op,
        id: '34',
        group: true,
        prefix: '/paynet',
      });
    }
    expect(routePath('/api/v2/unknown/1')).toBeUndefined();
    expect(routePath('/api/v2/sale')).toBeUndefined();
    expect(routePath('/api/v2/sale//1')).toBeUndefined();
  });
});

describe('every request that opens an order, repeated with its client_orderid', () => {
  const card = {
    credit_card_number: '4444444444444448',
    card_printed_name: 'X',
    expire_month: '12',
    expire_year: '2099',
    cvv2: '123',
  };
  const money = { amount: '5.00', currency: 'USD' };
  const payer = { email: 'a@b.c', redirect_url: 'http://merchant.test/return' };
  const other = '5555555555554444';
  type Refs = { readonly a: string; readonly b: string };
  type Fields = Record<string, string>;

  /** A card reference made from an approved sale (the base of rebill, by-ref and eligibility). */
  function cardRef(t: ReturnType<typeof setup>, id: string): string {
    const orderId = String(t.sale(id).body['paynet-order-id']);
    const created = t.engine.execute(
      t.request('CARDREF', { login: 'm', client_orderid: id, orderid: orderId }),
    );
    return String(created.body['card-ref-id']);
  }

  // [operation, its fields, the same request changed in what makes it that request]
  it.each<[EngineRequest['op'], (refs: Refs) => Fields, ((refs: Refs) => Fields) | undefined]>([
    ['SALE', () => ({ ...money, ...payer, ...card }), () => ({ amount: '6.00' })],
    ['PREAUTH', () => ({ ...money, ...payer, ...card }), () => ({ credit_card_number: other })],
    ['ACCOUNT_VERIFICATION', () => ({ ...payer, ...card }), () => ({ credit_card_number: other })],
    ['SALEFORM', () => ({ ...money, ...payer }), () => ({ amount: '6.00' })],
    ['PREAUTHFORM', () => ({ ...money, ...payer }), () => ({ amount: '6.00' })],
    ['PAYMENTFORM', () => ({ ...money, ...payer }), () => ({ amount: '6.00' })],
    ['ACCOUNT_VERIFICATION_FORM', () => payer, undefined],
    ['PAYOUTFORM', () => ({ ...money, ...payer }), () => ({ amount: '6.00' })],
    ['REBILL', (r) => ({ ...money, cardrefid: r.a }), () => ({ amount: '6.00' })],
    [
      'PAYOUT',
      () => ({ ...money, credit_card_number: card.credit_card_number }),
      () => ({ credit_card_number: other }),
    ],
    [
      'PAYOUT_V4',
      (r) => ({ ...money, 'destination-card-ref-id': r.a }),
      () => ({ amount: '6.00' }),
    ],
    [
      'PAYOUT_V4_CHECK',
      (r) => ({ ...money, 'destination-card-ref-id': r.a }),
      (r) => ({ 'destination-card-ref-id': r.b }),
    ],
    [
      'TRANSFER_V4',
      () => ({ ...money, ...card, 'destination-card-no': other }),
      () => ({ 'destination-card-no': card.credit_card_number }),
    ],
    [
      'TRANSFER_BY_REF_V4',
      (r) => ({ ...money, 'destination-card-ref-id': r.a }),
      (r) => ({ 'destination-card-ref-id': r.b }),
    ],
    [
      'PAN_ELIGIBILITY_SEND',
      (r) => ({ 'sending-card-ref-id': r.a }),
      (r) => ({ 'sending-card-ref-id': r.b }),
    ],
  ])(
    '%s: the same again gets the first reply, one order; a changed one is refused',
    (op, fieldsOf, changedOf) => {
      const t = setup(0, { threeDSecure: false });
      const refs = { a: cardRef(t, 'ref-a'), b: cardRef(t, 'ref-b') };
      const fields = { client_orderid: 'again', ...fieldsOf(refs) };
      const first = t.engine.execute(t.request(op, fields));
      expect(first.kind).toBe('ok');
      const movements = t.ledger.list().length;
      const callbacks = t.callbacks.length;

      expect(t.engine.execute(t.request(op, fields))).toEqual(first);
      expect(t.engine.ordersOf('again')).toHaveLength(1);
      expect(t.ledger.list()).toHaveLength(movements);
      expect(t.callbacks).toHaveLength(callbacks);

      if (changedOf === undefined) return;
      const changed = t.engine.execute(t.request(op, { ...fields, ...changedOf(refs) }));
      expect(changed).toMatchObject({ kind: 'refused', body: { 'error-code': 2 } });
      expect(t.engine.ordersOf('again')).toHaveLength(1);
    },
  );
});

describe('create-recurring-payment', () => {
  it.each(['__proto__', 'fortnight'])('refuses the period %s and registers nothing', (period) => {
    const t = setup();
    const reply = t.engine.execute(
      t.request('CREATE_RP_V4', {
        client_orderid: 'plan',
        amount: '5.00',
        currency: 'USD',
        period,
        credit_card_number: '4444444444444448',
        card_printed_name: 'X',
        expire_month: '12',
        expire_year: '2099',
      }),
    );
    expect(reply).toMatchObject({
      kind: 'refused',
      body: { 'error-message': 'period must be day, week or month' },
    });
    expect(t.engine.recurringPlans()).toEqual([]);
  });
});
