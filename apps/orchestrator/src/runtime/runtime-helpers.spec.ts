import { fromKafkaHeaders, type GatewayRequest, type PaymentEvent } from '@payments/contracts';
import { saleCommand } from '@payments/contracts/testing';
import { initialState, type PaymentState } from '../flows/card-payment/domain';
import { resendStillWanted } from '../flows/card-payment/domain';
import { rejectionEvent } from '../flows/card-payment/card-payment.flow';
import { policyFromConfig } from '../flows/card-payment/policy';
import { eventRow, gatewayRequestRow, relayBackoffMs } from './outbox/outbox-rows';
import { groupByTopic } from './outbox/outbox-relay';
import {
  hintAllowed,
  invalidCommandFingerprint,
  readEndpointId,
  timerRetryDelayMs,
} from './runtime-rules';
import type { Flow, RuntimeEffect } from './flow';
import { planWrites } from './write-plan';
import type { KeepSooner } from '../domain/decision';
import { lastPerTimer } from '../persistence/timer.repository';

const PAYMENT = '0f8b8c1e-4d4a-4c4e-9a53-6f1f0c2d3e4a';
const COMMAND = '00000000-0000-4000-8000-000000000001';
const ROW = '00000000-0000-4000-8000-0000000000aa';
const FIRST = '00000000-0000-4000-8000-0000000000bb';
const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

const event: PaymentEvent = {
  type: 'approved',
  paymentId: PAYMENT,
  commandId: COMMAND,
  version: 3,
  occurredAt: '2025-03-01T10:00:00.000Z',
  requestId: '00000000-0000-4000-8000-000000000002',
  amount: { minor: 10_000, currency: 'EUR' },
};

describe('eventRow', () => {
  it('keys by payment id and carries CloudEvents headers with the given ce_id and the input trace', () => {
    const row = eventRow(
      event.paymentId,
      event,
      { rowId: ROW, ceId: FIRST },
      { traceparent: PARENT },
    );
    expect(row).toMatchObject({
      id: ROW,
      topic: 'payments.events.v1',
      key: PAYMENT,
      aggregateId: PAYMENT,
      payload: event,
    });
    const parsed = fromKafkaHeaders(row.headers);
    expect(parsed).toEqual({
      ok: true,
      envelope: expect.objectContaining({
        id: FIRST,
        type: 'com.example.payments.payment.approved.v1',
        source: '/payments/orchestrator',
        subject: PAYMENT,
        time: event.occurredAt,
      }),
    });
    // Same trace, new span.
    expect(row.headers.traceparent.split('-')[1]).toBe(PARENT.split('-')[1]);
    expect(row.headers.traceparent).not.toBe(PARENT);
  });

  it('starts a trace when the input had none', () => {
    const row = eventRow(event.paymentId, event, { rowId: ROW, ceId: ROW }, {});
    expect(row.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
  });
});

/** A status query about the payment's sale, as request `requestId`. */
const statusRequest = (requestId: string) =>
  ({
    operation: 'status',
    requestId,
    paymentId: PAYMENT,
    merchant: { endpointId: '1234' },
    clientOrderId: PAYMENT,
    attempt: 1,
    requestedAt: '2025-03-01T10:00:00.000Z',
    subjectRequestId: '00000000-0000-4000-8000-000000000002',
    subjectOperation: 'sale',
  }) satisfies GatewayRequest;

describe('gatewayRequestRow', () => {
  it('goes to the requests topic with the operation in ce_type and the request as value', () => {
    const request = statusRequest('00000000-0000-4000-8000-000000000003');
    const row = gatewayRequestRow(request, ROW, '2025-03-01T10:00:01.000Z', {});
    expect(row).toMatchObject({
      topic: 'payments.gateway.requests.v1',
      key: PAYMENT,
      payload: request,
    });
    expect(row.headers).toMatchObject({
      ce_id: ROW,
      ce_type: 'com.example.payments.gateway.request.status.v1',
      ce_subject: PAYMENT,
      ce_time: '2025-03-01T10:00:01.000Z',
    });
  });
});

describe('planWrites: a request held for its budget reservation', () => {
  const request = statusRequest('00000000-0000-4000-8000-000000000004');
  const plan = (effects: RuntimeEffect[]) =>
    planWrites({
      sagaId: PAYMENT,
      // No events: the flow's evolve and projection are not consulted.
      flow: { name: 'test' } as Flow,
      state: {},
      version: 1,
      events: [],
      effects,
      meta: {},
      now: new Date('2025-03-01T10:00:01.000Z'),
      ids: { next: () => ROW },
    });

  it('held: stored for later, no outbox row; published later as stored (its own attempt)', () => {
    const held = plan([{ type: 'send-gateway-request', request, held: true }]);
    expect(held.gatewayRequests).toEqual([request]);
    expect(held.outbox).toEqual([]);
    const sent = plan([{ type: 'send-gateway-request', request }]);
    expect(sent.outbox).toHaveLength(1);
    const published = plan([{ type: 'publish-held-request', requestId: request.requestId }]);
    expect(published.resends).toEqual([{ requestId: request.requestId }]);
    expect(published.outbox).toEqual([]);
  });
});

describe('rejectionEvent', () => {
  it('builds a command-rejected event and names an unknown command type', () => {
    expect(
      rejectionEvent({
        paymentId: PAYMENT,
        commandId: COMMAND,
        commandType: undefined,
        version: 4,
        now: '2025-03-01T10:00:00.000Z',
        reason: 'SCHEMA_INVALID',
        message: 'x'.repeat(2000),
      }),
    ).toEqual({
      type: 'command-rejected',
      paymentId: PAYMENT,
      commandId: COMMAND,
      version: 4,
      occurredAt: '2025-03-01T10:00:00.000Z',
      commandType: 'unknown',
      reason: 'SCHEMA_INVALID',
      message: 'x'.repeat(1024),
    });
  });
});

describe('invalidCommandFingerprint', () => {
  const raw = { ...saleCommand({ commandId: COMMAND }), amount: { minor: -1, currency: 'EUR' } };

  it('is stable across key order, occurredAt and re-sealing, and differs with the body', () => {
    const reordered = Object.fromEntries(Object.entries(raw).reverse());
    expect(invalidCommandFingerprint(reordered)).toBe(invalidCommandFingerprint(raw));
    expect(
      invalidCommandFingerprint({
        ...raw,
        occurredAt: '2030-01-01T00:00:00.000Z',
        sealedCard: 'v1.other',
      }),
    ).toBe(invalidCommandFingerprint(raw));
    expect(invalidCommandFingerprint({ ...raw, amount: { minor: -2, currency: 'EUR' } })).not.toBe(
      invalidCommandFingerprint(raw),
    );
    expect(invalidCommandFingerprint(raw)).toMatch(/^invalid:sha256:[0-9a-f]{64}$/);
  });

  it('keeps no trace of clear card data', () => {
    const withPan = { ...raw, card: { pan: '4111111111111111' } };
    expect(invalidCommandFingerprint(withPan)).not.toContain('4111');
    expect(invalidCommandFingerprint(null)).toMatch(/^invalid:sha256:/);
  });
});

describe('small helpers', () => {
  it('reads the endpoint id of an unvalidated command only when it is a short string', () => {
    expect(readEndpointId({ merchant: { endpointId: '77' } })).toBe('77');
    expect(readEndpointId({ merchant: { endpointId: 77 } })).toBe('');
    expect(readEndpointId({ merchant: { endpointId: 'x'.repeat(65) } })).toBe('');
    expect(readEndpointId('nope')).toBe('');
  });

  it('allows one hint-driven refresh per interval', () => {
    const now = new Date('2025-03-01T10:01:00.000Z');
    expect(hintAllowed(null, now, 60_000)).toBe(true);
    expect(hintAllowed(new Date('2025-03-01T10:00:00.001Z'), now, 60_000)).toBe(false);
    expect(hintAllowed(new Date('2025-03-01T10:00:00.000Z'), now, 60_000)).toBe(true);
  });

  it('resends only the request still in flight with no answer yet', () => {
    const requestId = '00000000-0000-4000-8000-000000000002';
    const inFlight = (stage: 'requested' | 'processing'): PaymentState => ({
      ...initialState,
      paymentId: PAYMENT,
      kind: 'sale',
      merchant: { endpointId: '1' },
      currency: 'EUR',
      clientOrderId: PAYMENT,
      status: stage,
      inFlight: {
        operation: 'sale',
        requestId,
        commandId: COMMAND,
        amount: { minor: 1, currency: 'EUR' },
        stage,
        requestedAt: '2025-03-01T10:00:00.000Z',
        alerted: false,
      },
    });
    expect(resendStillWanted(inFlight('requested'), requestId)).toBe(true);
    // Sent once more after no trace, still unknown: the repeat is still wanted.
    const resent = inFlight('requested');
    expect(
      resendStillWanted(
        {
          ...resent,
          status: 'outcome-unknown',
          inFlight: { ...resent.inFlight!, stage: 'outcome-unknown', resent: true },
        } as PaymentState,
        requestId,
      ),
    ).toBe(true);
    expect(resendStillWanted(inFlight('processing'), requestId)).toBe(false);
    expect(resendStillWanted(inFlight('requested'), COMMAND)).toBe(false);
    expect(resendStillWanted(initialState, requestId)).toBe(false);
  });

  it("keeps a decision's timer changes one per timer (kind and scope), as applied one by one", () => {
    const at = (s: number) => new Date(Date.UTC(2025, 2, 1, 10, 0, s));
    const set = (kind: string, scope: string | undefined, s: number) =>
      ({
        op: 'set',
        kind,
        ...(scope === undefined ? {} : { scope }),
        at: at(s),
        payload: { requestId: scope },
      }) as const;
    // Two requests' resends of one saga both stand; the later set of one replaces its earlier.
    expect(
      lastPerTimer([
        set('gateway-resend', 'a', 5),
        set('gateway-resend', 'b', 3),
        set('gateway-resend', 'a', 9),
      ]),
    ).toEqual([set('gateway-resend', 'b', 3), set('gateway-resend', 'a', 9)]);
    // A cancel of the whole kind drops the sets before it, not those after it.
    expect(
      lastPerTimer([
        set('status-poll', 'a', 1),
        { op: 'cancel', kind: 'status-poll' },
        set('status-poll', 'b', 2),
        set('hold-expiry', undefined, 4),
      ]),
    ).toEqual([
      { op: 'cancel', kind: 'status-poll' },
      set('status-poll', 'b', 2),
      set('hold-expiry', undefined, 4),
    ]);
    // An advance moves the set of its own request only; after a cancel of the kind, nothing.
    expect(
      lastPerTimer([
        set('gateway-resend', 'a', 9),
        set('gateway-resend', 'b', 9),
        { op: 'advance', kind: 'gateway-resend', at: at(1), requestId: 'b' },
      ]),
    ).toEqual([set('gateway-resend', 'a', 9), set('gateway-resend', 'b', 1)]);
    expect(
      lastPerTimer([
        { op: 'cancel', kind: 'gateway-resend' },
        { op: 'advance', kind: 'gateway-resend', at: at(1), requestId: 'b' },
      ]),
    ).toEqual([{ op: 'cancel', kind: 'gateway-resend' }]);
  });

  it('a keep-sooner set (the first poll after a send result) gives way to a set of its timer due no later, replaces a later one, and after a cancel is a plain set', () => {
    const at = (s: number) => new Date(Date.UTC(2025, 2, 1, 10, 0, s));
    const set = (scope: string, s: number, keepSooner?: KeepSooner, hinted = false) =>
      ({
        op: 'set',
        kind: 'status-poll',
        scope,
        at: at(s),
        payload: { requestId: scope, s, ...(hinted ? { hinted: true } : {}) },
        ...(keepSooner === undefined ? {} : { keepSooner }),
      }) as const;
    // A hint's poll due now, then the result's first poll due later: the hint's stays.
    expect(lastPerTimer([set('a', 0), set('a', 3, 'any')])).toEqual([set('a', 0)]);
    // Due sooner than the set before it: it replaces it, as a plain set (the set replaced the
    // stored timer); after a keep-sooner set it stays keep-sooner (the stored timer still counts).
    expect(lastPerTimer([set('a', 5), set('a', 3, 'any')])).toEqual([set('a', 3)]);
    expect(lastPerTimer([set('a', 5, 'any'), set('a', 3, 'any')])).toEqual([set('a', 3, 'any')]);
    // Alone it stays keep-sooner (the stored timer decides); after a cancel, a plain set.
    expect(lastPerTimer([set('a', 3, 'any')])).toEqual([set('a', 3, 'any')]);
    expect(
      lastPerTimer([{ op: 'cancel', kind: 'status-poll', scope: 'a' }, set('a', 3, 'any')]),
    ).toEqual([set('a', 3)]);
    expect(lastPerTimer([{ op: 'cancel', kind: 'status-poll' }, set('a', 3, 'any')])).toEqual([
      { op: 'cancel', kind: 'status-poll' },
      set('a', 3),
    ]);
    // A plain set after it replaces it whatever their times.
    expect(lastPerTimer([set('a', 3, 'any'), set('a', 9)])).toEqual([set('a', 9)]);
    // Keeping only a hinted one (a held query's re-ask): a hint's poll due sooner stays; a
    // cadence poll due sooner does not (the re-ask at retryAt replaces it, as planned).
    expect(lastPerTimer([set('a', 0, undefined, true), set('a', 20, 'hinted')])).toEqual([
      set('a', 0, undefined, true),
    ]);
    expect(lastPerTimer([set('a', 4), set('a', 20, 'hinted')])).toEqual([set('a', 20)]);
  });

  it('backs off failed timers and relay rounds, bounded', () => {
    expect([0, 1, 2, 3].map(timerRetryDelayMs)).toEqual([1000, 2000, 4000, 8000]);
    expect(timerRetryDelayMs(50)).toBe(300_000);
    expect([1, 2, 3].map((n) => relayBackoffMs(n, 30_000))).toEqual([200, 400, 800]);
    expect(relayBackoffMs(40, 30_000)).toBe(30_000);
  });

  it('groups outbox rows by topic, keeping the order of each topic rows', () => {
    const rows = ['e', 'e', 'r', 'e', 'r', 'r'].map((topic, i) => ({ topic, i }));
    expect(groupByTopic(rows).map(([topic, group]) => [topic, group.map((r) => r.i)])).toEqual([
      ['e', [0, 1, 3]],
      ['r', [2, 4, 5]],
    ]);
  });

  it('builds the decider policy from the configuration', () => {
    const base = {
      holdExpiryAction: 'report' as const,
      holdExpirySeconds: 5,
      unknownAlertSeconds: 3600,
      maxSendAttempts: 4,
      neverReceivedSeconds: 60,
      gatewayRefusesReusedOrderId: [],
      ownLimitWaitSeconds: 600,
      resultDeadlineSeconds: 120,
      statusHintIntervalSeconds: 60,
    };
    expect(policyFromConfig(base)).toEqual({
      maxSendAttempts: 4,
      unknownAlertAfterMs: 3_600_000,
      holdExpiry: { afterMs: 5000, action: 'report' },
    });
    expect(policyFromConfig({ ...base, holdExpirySeconds: 0 })).not.toHaveProperty('holdExpiry');
  });
});
