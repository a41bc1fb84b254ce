import fc from 'fast-check';
import { GatewayStatus, type GatewayStatusReport } from '@payments/contracts';
import { cardPaymentExpectation } from '../../flows/card-payment/domain/reconciliation';
import type { PaymentState } from '../../flows/card-payment/domain/state';
import type { PayoutState } from '../../flows/payout/domain/model';
import { payoutExpectation } from '../../flows/payout/domain/reconciliation';
import type { TransferState } from '../../flows/transfer/domain/model';
import { transferExpectation } from '../../flows/transfer/domain/reconciliation';
import { payoutModule } from '../../flows/payout/module';
import * as payouts from '../../../test/kits/payout.kit';
import type { FlowReconciliation } from './flow-reconciliation';
import {
  anotherOrderVerdict,
  type CheckTime,
  type Expectation,
  check,
  gatewayChargesOf,
  type GatewayAnswer,
  latestAskedBySerial,
  type HistoryEvent,
  looksForAnotherOrder,
  type OperationEvents,
  operationsOf,
  sagaChecks,
  scheduledWindow,
  verdict,
} from './reconciliation';

const NOW = new Date('2026-11-26T12:00:00Z');
const AT: CheckTime = { now: NOW, unknownAlertMs: 3_600_000 };
const USD = (minor: number) => ({ minor, currency: 'USD' });

/** The card-payment vocabulary as the flow gives it (a subset: enough for these cases). */
const CARD: Record<string, string[]> = {
  sale: ['sale', 'rebill'],
  preauth: ['preauth'],
  capture: ['capture'],
  void: ['void'],
  reversal: ['void', 'return'],
};
const cardNamed = (t: string | undefined) => (t === undefined ? undefined : (CARD[t] ?? []));
const PAYOUT: Record<string, string[]> = {
  'payout-check': ['payout-check'],
  payout: ['payout-pay', 'payout', 'payout-v4', 'payout-form'],
};
const payoutNamed = (t: string | undefined) => (t === undefined ? undefined : (PAYOUT[t] ?? []));

function payment(fields: Record<string, unknown>): PaymentState {
  return {
    version: 3,
    paymentId: '6f1c1a43-7b8f-4a57-9d7c-2d7a3b0c8e11',
    kind: 'sale',
    merchant: { endpointId: '1113' },
    currency: 'USD',
    clientOrderId: 'order-1',
    gatewayOrderId: '90001',
    authorized: 2500,
    captured: 0,
    returned: 0,
    holdReleased: false,
    holdExpired: false,
    ...fields,
  } as unknown as PaymentState;
}

function payout(fields: Record<string, unknown>): PayoutState {
  return {
    version: 4,
    mode: 'two-step',
    payoutId: '0d3f8a7e-9c0b-4f11-8a57-1b2c3d4e5f60',
    merchant: { endpointId: '1113' },
    amount: USD(7000),
    clientOrderId: 'payout-1',
    gatewayOrderId: '90002',
    ...fields,
  } as unknown as PayoutState;
}

const report = (
  status: GatewayStatusReport['status'],
  transactionType?: string,
  amount?: { minor: number; currency: string },
): GatewayAnswer => ({
  kind: 'report',
  report: {
    status,
    ...(transactionType === undefined ? {} : { transactionType }),
    ...(amount === undefined ? {} : { amount }),
  },
});

function expected(found: ReturnType<typeof cardPaymentExpectation>): Expectation {
  if (found.kind !== 'check') throw new Error(`expected a check, got skip ${found.reason}`);
  return found.expectation;
}

describe('reconciliation: what a saga reported', () => {
  it('an approved sale expects the sale approved with its amount', () => {
    expect(expected(cardPaymentExpectation(payment({ status: 'approved' }), AT))).toEqual({
      status: 'approved',
      operation: 'sale',
      outcome: 'approved',
      amount: USD(2500),
      clientOrderId: 'order-1',
      gatewayOrderId: '90001',
    });
  });

  it('follow-ups expect their own operation; a decline expects the sale not approved', () => {
    const op = (status: string) =>
      expected(cardPaymentExpectation(payment({ status }), AT)).operation;
    expect(op('captured')).toBe('capture');
    expect(op('voided')).toBe('void');
    expect(op('partially-returned')).toBe('return');
    expect(op('authorized')).toBe('preauth');
    expect(expected(cardPaymentExpectation(payment({ status: 'declined' }), AT))).toMatchObject({
      operation: 'sale',
      outcome: 'not-approved',
    });
  });

  it('skips what is still moving, and unknown outcomes younger than the alert age', () => {
    const inFlight = (stage: string, unknownSince?: string) =>
      cardPaymentExpectation(
        payment({
          status: 'approved',
          inFlight: { operation: 'return', amount: USD(100), stage, unknownSince },
        }),
        AT,
      );
    expect(inFlight('processing')).toEqual({ kind: 'skip', reason: 'in-flight' });
    expect(inFlight('outcome-unknown', '2026-11-26T11:30:00Z')).toEqual({
      kind: 'skip',
      reason: 'unknown-under-an-hour',
    });
    expect(expected(inFlight('outcome-unknown', '2026-11-26T10:59:59Z'))).toMatchObject({
      operation: 'return',
      outcome: 'unknown',
    });
    expect(cardPaymentExpectation(payment({ status: 'initial' }), AT)).toEqual({
      kind: 'skip',
      reason: 'never-sent',
    });
  });

  it('payouts: paid expects the pay; rejected or expired nothing paid, the check may stand', () => {
    expect(expected(payoutExpectation(payout({ status: 'paid' }), AT))).toMatchObject({
      operation: 'payout-pay',
      outcome: 'approved',
      amount: USD(7000),
    });
    expect(
      expected(payoutExpectation(payout({ status: 'paid', mode: 'one-step' }), AT)).operation,
    ).toBe('payout');
    for (const status of ['rejected', 'expired', 'declined']) {
      expect(expected(payoutExpectation(payout({ status }), AT))).toMatchObject({
        outcome: 'not-approved',
        benign: ['payout-check'],
      });
    }
    expect(payoutExpectation(payout({ status: 'registered' }), AT)).toEqual({
      kind: 'skip',
      reason: 'in-flight',
    });
  });
});

describe('reconciliation: the verdict on the gateway answer', () => {
  const approvedSale = expected(cardPaymentExpectation(payment({ status: 'approved' }), AT));
  const declinedSale = expected(cardPaymentExpectation(payment({ status: 'declined' }), AT));
  const captured = expected(cardPaymentExpectation(payment({ status: 'captured' }), AT));

  it('agreeing answers match', () => {
    expect(verdict(approvedSale, report('approved', 'sale', USD(2500)), cardNamed)).toBe('match');
    expect(verdict(declinedSale, report('declined', 'sale'), cardNamed)).toBe('match');
    expect(
      verdict(declinedSale, { kind: 'rejected', code: '404', orderUnknown: true }, cardNamed),
    ).toBe('match');
    // No transaction type: the reply is about the operation the query named.
    expect(verdict(approvedSale, report('approved'), cardNamed)).toBe('match');
  });

  it('charged but reported declined, and reported charged but not', () => {
    expect(verdict(declinedSale, report('approved', 'sale'), cardNamed)).toBe(
      'charged-but-reported-declined',
    );
    expect(verdict(approvedSale, report('declined', 'sale'), cardNamed)).toBe(
      'reported-charged-but-not',
    );
    expect(verdict(approvedSale, report('filtered', 'sale'), cardNamed)).toBe(
      'reported-charged-but-not',
    );
    expect(
      verdict(approvedSale, { kind: 'rejected', code: '404', orderUnknown: true }, cardNamed),
    ).toBe('no-trace-at-gateway');
  });

  it('a refused status query says nothing unless it says there is no such order: unanswered', () => {
    // 403 (authentication), the adapter's unknown endpoint, an injected refusal: inconclusive.
    for (const code of ['403', 'unknown-endpoint', '1'])
      for (const expectation of [approvedSale, declinedSale, captured])
        expect(verdict(expectation, { kind: 'rejected', code }, cardNamed)).toBe('unanswered');
    expect(anotherOrderVerdict(approvedSale, { kind: 'rejected', code: '403' }, cardNamed)).toBe(
      'unanswered',
    );
  });

  it('another amount, or an approved operation we never recorded', () => {
    expect(verdict(approvedSale, report('approved', 'sale', USD(2600)), cardNamed)).toBe(
      'amount-differs',
    );
    expect(
      verdict(
        approvedSale,
        report('approved', 'sale', { minor: 2500, currency: 'EUR' }),
        cardNamed,
      ),
    ).toBe('amount-differs');
    expect(verdict(approvedSale, report('approved', 'reversal'), cardNamed)).toBe(
      'operation-differs',
    );
  });

  it('a declined operation we did not record moved nothing: no mismatch', () => {
    expect(verdict(captured, report('declined', 'reversal'), cardNamed)).toBe('match');
  });

  it('a processing order is not final; no answer at all is unresolved; old unknowns are findings', () => {
    expect(verdict(approvedSale, report('processing', 'sale'), cardNamed)).toBe('not-final');
    expect(verdict(approvedSale, { kind: 'none' }, cardNamed)).toBe('unresolved');
    const unknown: Expectation = { ...approvedSale, outcome: 'unknown' };
    expect(verdict(unknown, report('approved', 'sale'), cardNamed)).toBe('unknown-over-an-hour');
  });

  it('payouts: a standing check is benign after a rejection; a payout paid anyway is not', () => {
    const rejected = expected(payoutExpectation(payout({ status: 'rejected' }), AT));
    expect(verdict(rejected, report('approved', 'payout-check'), payoutNamed)).toBe('match');
    expect(verdict(rejected, report('approved', 'payout'), payoutNamed)).toBe(
      'charged-but-reported-declined',
    );
    const paid = expected(payoutExpectation(payout({ status: 'paid' }), AT));
    expect(verdict(paid, report('approved', 'payout', USD(7000)), payoutNamed)).toBe('match');
    expect(verdict(paid, report('approved', 'payout-check'), payoutNamed)).toBe(
      'operation-differs',
    );
    expect(verdict(paid, report('declined', 'payout'), payoutNamed)).toBe(
      'reported-charged-but-not',
    );
  });

  it('property: a gateway answer that is not approved never says money moved we did not report', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<GatewayStatusReport['status']>('declined', 'error', 'filtered'),
        fc.constantFrom('sale', 'reversal', 'capture', 'void', 'other', undefined),
        fc.constantFrom(approvedSale, declinedSale, captured),
        (status, type, expectation) => {
          const found = verdict(expectation, report(status, type), cardNamed);
          expect(['match', 'reported-charged-but-not']).toContain(found);
          if (expectation.outcome === 'not-approved') expect(found).toBe('match');
        },
      ),
    );
  });
});

/** The card-payment flow's event names (reconciled-flows.ts gives the same). */
const CARD_EVENTS: OperationEvents = {
  requested: 'operation-requested',
  accepted: 'accepted-by-gateway',
  succeeded: ['approved', 'authorized', 'account-verified', 'captured', 'voided', 'returned'],
  declined: ['declined'],
  failed: ['failed'],
  opensOrder: (operation) =>
    ['sale', 'preauth', 'rebill', 'account-verification'].includes(operation),
};

/** A run over the hour before NOW, of a saga created in it. */
const SCOPE = {
  from: new Date('2026-11-26T11:00:00Z'),
  to: NOW,
  createdInWindow: true,
} as const;

const R = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
const requested = (n: number, operation: string, minor: number): HistoryEvent => ({
  type: 'operation-requested',
  requestId: R(n),
  operation,
  amount: USD(minor),
});
const accepted = (n: number, serialNumber?: string): HistoryEvent => ({
  type: 'accepted-by-gateway',
  requestId: R(n),
  ...(serialNumber === undefined ? {} : { serialNumber }),
});
const settled = (n: number, type: string, reason?: string): HistoryEvent => ({
  type,
  requestId: R(n),
  ...(reason === undefined ? {} : { reason }),
});

/** A sale of 100.00, a return of 30.00 and one of 20.00, each with its serial. */
const SALE_AND_TWO_RETURNS: HistoryEvent[] = [
  requested(1, 'sale', 10_000),
  accepted(1, 'sn-1'),
  settled(1, 'approved'),
  requested(2, 'return', 3_000),
  accepted(2, 'sn-2'),
  settled(2, 'returned'),
  requested(3, 'return', 2_000),
  accepted(3),
  accepted(3, 'sn-3'),
  settled(3, 'returned'),
];

describe('reconciliation: a saga operation by operation', () => {
  const order = { status: 'partially-returned', clientOrderId: 'order-1', gatewayOrderId: '90001' };
  const latest = cardPaymentExpectation(
    payment({ status: 'partially-returned', captured: 10_000, returned: 5_000 }),
    AT,
  );

  it('reads each request from the history: operation, serial, outcome; amounts of the opening one only', () => {
    expect(operationsOf(SALE_AND_TWO_RETURNS, CARD_EVENTS)).toEqual([
      {
        key: R(1),
        requestId: R(1),
        operation: 'sale',
        outcome: 'approved',
        serial: 'sn-1',
        amount: USD(10_000),
        reachedGateway: true,
      },
      {
        key: R(2),
        requestId: R(2),
        operation: 'return',
        outcome: 'approved',
        serial: 'sn-2',
        reachedGateway: true,
      },
      {
        key: R(3),
        requestId: R(3),
        operation: 'return',
        outcome: 'approved',
        serial: 'sn-3',
        reachedGateway: true,
      },
    ]);
  });

  it('one request check per settled operation with a serial; no latest-operation check then', () => {
    const checks = sagaChecks(
      order,
      operationsOf(SALE_AND_TWO_RETURNS, CARD_EVENTS),
      latest,
      SCOPE,
    );
    expect(checks.map((c) => [c.subject, c.expectation.serial, c.expectation.operation])).toEqual([
      [`request:${R(1)}`, 'sn-1', 'sale'],
      [`request:${R(2)}`, 'sn-2', 'return'],
      [`request:${R(3)}`, 'sn-3', 'return'],
    ]);
    expect(checks[1]?.expectation).toEqual({
      status: 'partially-returned',
      operation: 'return',
      outcome: 'approved',
      basis: 'request',
      requestId: R(2),
      serial: 'sn-2',
      clientOrderId: 'order-1',
      gatewayOrderId: '90001',
    });
  });

  it('a return the gateway says it declined is a mismatch on that return, whatever the latest says', () => {
    const [, first] = sagaChecks(
      order,
      operationsOf(SALE_AND_TWO_RETURNS, CARD_EVENTS),
      latest,
      SCOPE,
    );
    if (first === undefined) throw new Error('no check of the first return');
    const about = (
      status: GatewayStatusReport['status'],
      requestSerial: string,
    ): GatewayAnswer => ({
      kind: 'report',
      report: { status, transactionType: 'reversal', requestSerial, amount: USD(10_000) },
    });
    expect(verdict(first.expectation, about('declined', 'sn-2'), cardNamed)).toBe(
      'reported-charged-but-not',
    );
    // The order's amount in a reply about a follow-up is the initial one: never compared.
    expect(verdict(first.expectation, about('approved', 'sn-2'), cardNamed)).toBe('match');
    // An answer about another request says nothing about this one.
    expect(verdict(first.expectation, about('approved', 'sn-3'), cardNamed)).toBe('unresolved');
  });

  it('an operation without a serial falls back to the latest-operation check, stated as such', () => {
    const history = [requested(1, 'sale', 10_000), accepted(1), settled(1, 'approved')];
    const checks = sagaChecks(
      { ...order, status: 'approved' },
      operationsOf(history, CARD_EVENTS),
      cardPaymentExpectation(payment({ status: 'approved' }), AT),
      SCOPE,
    );
    expect(checks).toEqual([
      {
        subject: 'order',
        expectation: expect.objectContaining({
          operation: 'sale',
          basis: 'latest-operation',
        }) as Expectation,
      },
    ]);
    expect(checks[0]?.expectation.serial).toBeUndefined();
  });

  it('a request the gateway never took (not sent, refused) is not asked about', () => {
    const history = [
      ...SALE_AND_TWO_RETURNS.slice(0, 3),
      requested(2, 'return', 3_000),
      settled(2, 'failed', 'rejected'),
    ];
    const checks = sagaChecks(order, operationsOf(history, CARD_EVENTS), latest, SCOPE);
    expect(checks.map((c) => c.subject)).toEqual([`request:${R(1)}`]);
  });

  it('an outcome unknown for over an hour keeps its check beside the settled operations', () => {
    const unknown = cardPaymentExpectation(
      payment({
        status: 'approved',
        inFlight: {
          operation: 'return',
          amount: USD(100),
          stage: 'outcome-unknown',
          unknownSince: '2026-11-26T10:00:00Z',
        },
      }),
      AT,
    );
    const history = SALE_AND_TWO_RETURNS.slice(0, 3);
    const checks = sagaChecks(order, operationsOf(history, CARD_EVENTS), unknown, SCOPE);
    expect(checks.map((c) => [c.subject, c.expectation.outcome])).toEqual([
      [`request:${R(1)}`, 'approved'],
      ['order', 'unknown'],
    ]);
  });

  it('a sale settled by its callback (no serial), then a return asked by serial: no order check about the return again', () => {
    const history = [
      requested(1, 'sale', 10_000),
      settled(1, 'approved'),
      requested(2, 'return', 3_000),
      accepted(2, 'sn-2'),
      settled(2, 'returned'),
    ];
    const returned = cardPaymentExpectation(
      payment({ status: 'partially-returned', captured: 10_000, returned: 3_000 }),
      AT,
    );
    const ops = operationsOf(history, CARD_EVENTS);
    const checks = sagaChecks(order, ops, returned, SCOPE);
    // The order's latest request is the return: the order check would ask the gateway about the
    // very request its own check names by serial. (The sale, no longer the order's latest
    // request, cannot be asked about without its serial: test/chaos.md, "The sales that stay
    // unconfirmed".)
    expect(checks.map((c) => [c.subject, c.expectation.operation])).toEqual([
      [`request:${R(2)}`, 'return'],
    ]);
    expect(latestAskedBySerial(ops, expected(returned))).toBe(true);
    // The same return without its serial: the order check is the one question about it.
    const unserialed = operationsOf(
      history.filter((e) => e.type !== 'accepted-by-gateway'),
      CARD_EVENTS,
    );
    expect(sagaChecks(order, unserialed, returned, SCOPE).map((c) => c.subject)).toEqual(['order']);
    // A state that reports another operation than the last one asked by serial keeps it too.
    const declinedCapture = [
      requested(1, 'preauth', 10_000),
      settled(1, 'authorized'),
      requested(2, 'capture', 10_000),
      accepted(2, 'sn-2'),
      settled(2, 'declined'),
    ];
    const authorized = cardPaymentExpectation(payment({ status: 'authorized' }), AT);
    expect(
      sagaChecks(order, operationsOf(declinedCapture, CARD_EVENTS), authorized, SCOPE).map(
        (c) => c.subject,
      ),
    ).toEqual([`request:${R(2)}`, 'order']);
  });

  it('property: the plan asks about every operation of the window it can name, each once, each against its own expectation', () => {
    const inWindow = '2026-11-26T11:30:00Z';
    const before = '2026-11-25T11:30:00Z';
    const op = fc.record({
      operation: fc.constantFrom('sale', 'preauth', 'capture', 'void', 'return'),
      serial: fc.boolean(),
      outcome: fc.constantFrom('approved', 'declined', 'never-taken'),
      inWindow: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 1, maxLength: 6 }),
        // The state's latest: what the last request the gateway took reported, another
        // operation (a declined capture leaves a preauth authorized), or an outcome unknown.
        fc.constantFrom('mirrors-last', 'other', 'unknown'),
        (ops, reading) => {
          const at = (e: HistoryEvent, i: number) => ({
            ...e,
            occurredAt: ops[i]?.inWindow === true ? inWindow : before,
          });
          const history = ops.flatMap((o, i) => [
            at(requested(i + 1, o.operation, 1_000), i),
            ...(o.serial && o.outcome !== 'never-taken' ? [at(accepted(i + 1, `sn-${i}`), i)] : []),
            at(
              o.outcome === 'approved'
                ? settled(i + 1, 'approved')
                : o.outcome === 'declined'
                  ? settled(i + 1, 'declined')
                  : settled(i + 1, 'failed', 'not-sent'),
              i,
            ),
          ]);
          const all = operationsOf(history, CARD_EVENTS);
          const taken = all.filter((o) => o.reachedGateway);
          const last = taken.at(-1);
          const base = { status: 'settled', clientOrderId: 'order-1', gatewayOrderId: '90001' };
          const latest: Expectation =
            reading === 'unknown'
              ? { ...base, operation: 'return', outcome: 'unknown', requestId: R(9) }
              : reading === 'mirrors-last' && last !== undefined
                ? { ...base, operation: last.operation, outcome: last.outcome }
                : { ...base, operation: 'account-verification', outcome: 'approved' };
          const checks = sagaChecks(order, all, check(latest), {
            ...SCOPE,
            createdInWindow: false,
          });
          const subjects = checks.map((c) => c.subject);
          // Each question once.
          expect(new Set(subjects).size).toBe(subjects.length);
          const orderCheck = checks.find((c) => c.subject === 'order');
          for (const o of taken.filter((t) => ops[Number(t.key.slice(-1)) - 1]?.inWindow)) {
            if (o.serial !== undefined) {
              // Asked by its serial, judged against what the saga reported of it.
              expect(checks).toContainEqual({
                subject: `request:${o.key}`,
                expectation: expect.objectContaining({
                  basis: 'request',
                  serial: o.serial,
                  operation: o.operation,
                  outcome: o.outcome,
                }) as Expectation,
              });
            } else if (o === last && reading === 'mirrors-last') {
              // The order's latest request: the order check asks about it, as the saga reports it.
              expect(orderCheck?.expectation).toMatchObject({
                basis: 'latest-operation',
                operation: o.operation,
                outcome: o.outcome,
              });
            } else {
              // No serial and not the latest (or the state reports another operation): the
              // order check, if planned, is about the latest, never judged as this operation.
              expect(checks.some((c) => c.expectation.requestId === o.requestId)).toBe(false);
            }
          }
          // Never a second question about the request a request check names by serial.
          if (reading === 'mirrors-last' && last?.serial !== undefined)
            expect(orderCheck).toBeUndefined();
          // An outcome unknown for over an hour is always asked about.
          if (reading === 'unknown') expect(orderCheck?.expectation.outcome).toBe('unknown');
          // The order check is judged against the state's latest, nothing else.
          if (orderCheck !== undefined)
            expect(orderCheck.expectation).toEqual({ ...latest, basis: 'latest-operation' });
        },
      ),
    );
  });

  it('a run checks the operations its window holds: a return days after its sale, in its own window', () => {
    const at = (event: HistoryEvent, occurredAt: string): HistoryEvent => ({
      ...event,
      occurredAt,
    });
    const history = [
      at(requested(1, 'sale', 10_000), '2026-11-20T09:00:00Z'),
      at(accepted(1, 'sn-1'), '2026-11-20T09:00:01Z'),
      at(settled(1, 'approved'), '2026-11-20T09:00:02Z'),
      at(requested(2, 'return', 3_000), '2026-11-26T11:10:00Z'),
      at(accepted(2, 'sn-2'), '2026-11-26T11:10:01Z'),
      at(settled(2, 'returned'), '2026-11-26T11:10:02Z'),
    ];
    const ops = operationsOf(history, CARD_EVENTS);
    // The window of the return, the sale made days before: the return only, nothing from state.
    const later = { ...SCOPE, createdInWindow: false };
    expect(sagaChecks(order, ops, latest, later).map((c) => c.subject)).toEqual([
      `request:${R(2)}`,
    ]);
    // The window of the sale: the sale only (the return was not made yet when it ran).
    const first = {
      from: new Date('2026-11-20T09:00:00Z'),
      to: new Date('2026-11-20T10:00:00Z'),
      createdInWindow: true,
    };
    expect(sagaChecks(order, ops, latest, first).map((c) => c.subject)).toEqual([
      `request:${R(1)}`,
    ]);
    // A window with none of its operations: nothing.
    const none = { from: new Date('2026-11-21T00:00:00Z'), to: new Date('2026-11-22T00:00:00Z') };
    expect(sagaChecks(order, ops, latest, { ...none, createdInWindow: false })).toEqual([]);
  });

  it('transfers: transferred expects the transfer approved with its amount', () => {
    const transfer = {
      status: 'transferred',
      version: 3,
      transferId: R(9),
      merchant: { endpointId: '1113' },
      amount: USD(5_000),
      clientOrderId: R(9),
      gatewayOrderId: '90003',
    } as TransferState;
    const found = transferExpectation(transfer, AT);
    expect(found).toEqual({
      kind: 'check',
      expectation: {
        status: 'transferred',
        operation: 'transfer',
        outcome: 'approved',
        amount: USD(5_000),
        clientOrderId: R(9),
        gatewayOrderId: '90003',
      },
    });
  });

  it("a registered schedule's charges: each on its own order, with its amount", () => {
    const charges = gatewayChargesOf([
      {
        type: 'gateway-cycle-charged',
        gatewayOrderId: '700',
        clientOrderId: 'sched-1',
        amount: USD(990),
      },
      { type: 'gateway-cycle-declined', gatewayOrderId: '701', clientOrderId: 'sched-2' },
      { type: 'gateway-charge-reported', gatewayOrderId: '702', clientOrderId: 'sched-3' },
    ]);
    const checks = sagaChecks(
      { status: 'registered', clientOrderId: 'sched' },
      charges,
      undefined,
      SCOPE,
    );
    expect(checks).toEqual([
      {
        subject: 'charge:700',
        expectation: {
          status: 'registered',
          operation: 'sale',
          outcome: 'approved',
          amount: USD(990),
          basis: 'latest-operation',
          clientOrderId: 'sched-1',
          gatewayOrderId: '700',
        },
      },
      {
        subject: 'charge:701',
        expectation: {
          status: 'registered',
          operation: 'sale',
          outcome: 'not-approved',
          basis: 'latest-operation',
          clientOrderId: 'sched-2',
          gatewayOrderId: '701',
        },
      },
    ]);
  });
});

describe('reconciliation: paid twice (the lookup by our client order id)', () => {
  const approvedSale = expected(cardPaymentExpectation(payment({ status: 'approved' }), AT));
  const declinedSale = expected(cardPaymentExpectation(payment({ status: 'declined' }), AT));
  const authorized = expected(cardPaymentExpectation(payment({ status: 'authorized' }), AT));
  const captured = expected(cardPaymentExpectation(payment({ status: 'captured' }), AT));
  const voided = expected(cardPaymentExpectation(payment({ status: 'voided' }), AT));
  const paid = expected(payoutExpectation(payout({ status: 'paid' }), AT));
  /** A status reply about the order `orderId` (ours is 90001, the payout's 90002). */
  const about = (
    orderId: string | undefined,
    status: GatewayStatusReport['status'],
    transactionType?: string,
  ): GatewayAnswer => ({
    kind: 'report',
    report: {
      status,
      ...(orderId === undefined ? {} : { gatewayOrderId: orderId }),
      ...(transactionType === undefined ? {} : { transactionType }),
    },
  });

  it('is asked only once the gateway confirmed our order charged or paid out, and we know its id', () => {
    expect(looksForAnotherOrder(approvedSale, 'match')).toBe(true);
    expect(looksForAnotherOrder(captured, 'match')).toBe(true);
    expect(looksForAnotherOrder(paid, 'match')).toBe(true);
    // Our order not confirmed as we said: that is the finding already.
    expect(looksForAnotherOrder(approvedSale, 'amount-differs')).toBe(false);
    expect(looksForAnotherOrder(approvedSale, 'reported-charged-but-not')).toBe(false);
    expect(looksForAnotherOrder(approvedSale, 'unresolved')).toBe(false);
    // Nothing charged on our order: a second order would be a first charge, not a second.
    expect(looksForAnotherOrder(declinedSale, 'match')).toBe(false);
    expect(looksForAnotherOrder(voided, 'match')).toBe(false);
    // A hold is no payment (captured, it is).
    expect(looksForAnotherOrder(authorized, 'match')).toBe(false);
    const { gatewayOrderId: _unknownId, ...withoutOrderId } = approvedSale;
    expect(looksForAnotherOrder(withoutOrderId, 'match')).toBe(false);
  });

  it('another order under our client order id, approved for money: paid twice', () => {
    expect(anotherOrderVerdict(approvedSale, about('90777', 'approved', 'sale'), cardNamed)).toBe(
      'paid-twice',
    );
    expect(anotherOrderVerdict(captured, about('90777', 'approved', 'capture'), cardNamed)).toBe(
      'paid-twice',
    );
    expect(anotherOrderVerdict(paid, about('90778', 'approved', 'payout'), payoutNamed)).toBe(
      'paid-twice',
    );
  });

  it('our own order, no order named, a refusal, or another order that moved no money: no finding', () => {
    expect(anotherOrderVerdict(approvedSale, about('90001', 'approved', 'sale'), cardNamed)).toBe(
      'match',
    );
    expect(anotherOrderVerdict(approvedSale, about(undefined, 'approved', 'sale'), cardNamed)).toBe(
      'match',
    );
    expect(
      anotherOrderVerdict(
        approvedSale,
        { kind: 'rejected', code: '2', orderUnknown: true },
        cardNamed,
      ),
    ).toBe('match');
    for (const status of ['declined', 'error', 'filtered'] as const) {
      expect(anotherOrderVerdict(approvedSale, about('90777', status, 'sale'), cardNamed)).toBe(
        'match',
      );
    }
    expect(anotherOrderVerdict(approvedSale, about('90777', 'approved', 'void'), cardNamed)).toBe(
      'match',
    );
    expect(anotherOrderVerdict(approvedSale, about('90777', 'approved'), cardNamed)).toBe('match');
    expect(anotherOrderVerdict(paid, about('90778', 'approved', 'payout-check'), payoutNamed)).toBe(
      'match',
    );
  });

  it('another order still processing is asked again; no answer at all is unresolved', () => {
    expect(anotherOrderVerdict(approvedSale, about('90777', 'processing', 'sale'), cardNamed)).toBe(
      'not-final',
    );
    expect(anotherOrderVerdict(approvedSale, { kind: 'none' }, cardNamed)).toBe('unresolved');
  });

  it('property: paid twice only on a reply naming an order other than ours, approved', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(approvedSale, captured, declinedSale),
        fc.constantFrom('90001', '90777', undefined),
        fc.constantFrom(...GatewayStatus.options),
        fc.constantFrom('sale', 'reversal', 'capture', 'void', 'other', undefined),
        (expectation, orderId, status, type) => {
          const found = anotherOrderVerdict(expectation, about(orderId, status, type), cardNamed);
          if (found === 'paid-twice') {
            expect(orderId).toBeDefined();
            expect(orderId).not.toBe(expectation.gatewayOrderId);
            expect(status).toBe('approved');
          }
          if (orderId === undefined || orderId === expectation.gatewayOrderId) {
            expect(found).toBe('match');
          }
        },
      ),
    );
  });
});

describe('reconciliation: scheduled windows', () => {
  it('the last whole interval that ended at least the settle time ago, aligned to the epoch', () => {
    const w = scheduledWindow(new Date('2026-11-26T12:10:00Z'), 3_600_000, 900_000);
    expect(w).toEqual({
      from: new Date('2026-11-26T10:00:00Z'),
      to: new Date('2026-11-26T11:00:00Z'),
    });
    const later = scheduledWindow(new Date('2026-11-26T12:15:00Z'), 3_600_000, 900_000);
    expect(later.from).toEqual(new Date('2026-11-26T11:00:00Z'));
  });

  it('property: consecutive windows tile time without gaps or overlaps', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
        fc.integer({ min: 1_000, max: 86_400_000 }),
        fc.integer({ min: 0, max: 3_600_000 }),
        (t, interval, settle) => {
          const w = scheduledWindow(new Date(t), interval, settle);
          expect(w.to.getTime() - w.from.getTime()).toBe(interval);
          expect(w.to.getTime()).toBeLessThanOrEqual(t - settle);
          expect(w.to.getTime()).toBeGreaterThan(t - settle - interval);
          const next = scheduledWindow(new Date(t + interval), interval, settle);
          expect(next.from).toEqual(w.to);
        },
      ),
    );
  });
});

describe('a one-step payout settled without its serial: its order check is about its day’s line', () => {
  // The close report's line names the operation as the payout's `payout-requested` did (its
  // journal line); the line finds its order check only when the check names it the same way
  // (day-tie-out.service.ts `checkOf`). The gateway names all one-step payouts `payout`: that is
  // read through the flow's vocabulary by the verdict, never written into the expectation.
  it.each(['payout', 'payout-v4', 'payout-form'] as const)(
    '%s: the order check names the operation as the history does, and the gateway’s `payout` matches it',
    (type) => {
      const open = (id: string) =>
        type === 'payout-form'
          ? payouts.payoutForm(id, 4_200)
          : payouts.oneStepPayout(id, 4_200, type);
      const { world, id } = payouts.opened(open);
      world.apply(id, (s) => payouts.sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-7' }));
      world.apply(id, (s) =>
        payouts.statusReply(s, { status: 'approved', gatewayOrderId: 'G-7' }, [type]),
      );
      expect(world.types(id)).toContain('paid-out');
      // Settled as by a callback: no accepted-by-gateway, so no serial.
      const history = world
        .events(id)
        .filter((e) => e.type !== 'payout-accepted-by-gateway') as HistoryEvent[];
      const flow = payoutModule.reconciliation as FlowReconciliation;
      const state = world.state(id);
      const operations = flow.operations(history);
      expect(operations).toEqual([
        expect.objectContaining({ operation: type, outcome: 'approved', reachedGateway: true }),
      ]);
      expect(operations[0]?.serial).toBeUndefined();
      const latest = flow.latest?.(state, AT);
      // The run of the day it was paid (the kit's T0).
      const day = Date.parse(`${payouts.T0.slice(0, 10)}T00:00:00Z`);
      const scope = { from: new Date(day), to: new Date(day + 86_400_000), createdInWindow: true };
      const checks = sagaChecks(flow.order(state), operations, latest, scope);
      expect(checks).toEqual([
        {
          subject: 'order',
          expectation: expect.objectContaining({
            operation: type,
            outcome: 'approved',
            basis: 'latest-operation',
          }),
        },
      ]);
      const [check] = checks;
      if (check === undefined) throw new Error('no order check');
      expect(
        verdict(
          check.expectation,
          report('approved', 'payout', { minor: 4_200, currency: 'EUR' }),
          flow.named,
        ),
      ).toBe('match');
      // …and the gateway saying it declined that payout is a mismatch, not another operation's.
      expect(verdict(check.expectation, report('declined', 'payout'), flow.named)).toBe(
        'reported-charged-but-not',
      );
    },
  );
});
