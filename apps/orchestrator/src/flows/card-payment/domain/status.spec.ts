import { saleCommand, testUuid } from '@payments/contracts/testing';
import type { RefreshStatusCommand } from '@payments/contracts';
import * as payments from '../../../../test/kits/card-payment.kit';
import type { PaymentInput } from './inputs';
import type { PaymentState } from './state';

const HOUR = 3_600_000;
const sale = saleCommand();
const unknown = () =>
  payments.givenInputs(
    payments.command(sale),
    payments.result({ kind: 'unknown', reason: 'timeout after send' }),
  );
const refresh = (): RefreshStatusCommand => ({
  type: 'refresh-status',
  commandId: testUuid(),
  paymentId: sale.paymentId,
  merchant: sale.merchant,
  occurredAt: payments.at(0),
});
const poll =
  (attempt: number) =>
  (s: PaymentState): PaymentInput =>
    payments.timer({ kind: 'status-poll', requestId: s.inFlight?.requestId ?? 'x', attempt });
const alert = (s: PaymentState): PaymentInput =>
  payments.timer({ kind: 'unknown-alert', requestId: s.inFlight?.requestId ?? 'x' });

describe('outcome unknown', () => {
  it('an unknown result → outcome-unknown (no alert), polling and the one-hour alert timer', () => {
    payments
      .givenInputs(payments.command(sale))
      .when(payments.result({ kind: 'unknown', reason: 'timeout' }))
      .then([{ type: 'outcome-unknown', alert: false, since: payments.at(0), operation: 'sale' }])
      .thenEffects([
        {
          type: 'schedule-timer',
          timer: { kind: 'status-poll', attempt: 1 },
          at: payments.at(3_000),
        },
        { type: 'schedule-timer', timer: { kind: 'unknown-alert' }, at: payments.at(HOUR) },
      ])
      .thenState({ status: 'outcome-unknown' });
  });

  it('is never failed by time: polls for hours emit no outcome, only status requests', () => {
    let s = unknown();
    for (const t of [3_000, 60_000, 10 * 60_000, 2 * HOUR, 30 * HOUR]) {
      const o = s.when(poll(1), payments.at(t));
      o.thenIgnored('NO_NEWS');
      expect(o.decision.effects.map((e) => e.type)).toEqual([
        'send-gateway-request',
        'schedule-timer',
      ]);
      s = s.and(poll(1), payments.at(t));
    }
    expect(s.state.status).toBe('outcome-unknown');
  });

  it('after an hour the alert is raised once; the payment stays unknown', () => {
    unknown()
      .when(alert, payments.at(HOUR))
      .then([{ type: 'outcome-unknown', alert: true, since: payments.at(0) }])
      .thenState({ status: 'outcome-unknown' });
    unknown()
      .and(alert, payments.at(HOUR))
      .when(alert, payments.at(2 * HOUR))
      .thenIgnored('TIMER_OBSOLETE');
  });

  it('an early alert timer re-arms for the remainder', () => {
    unknown()
      .when(alert, payments.at(HOUR - 1_000))
      .thenIgnored('NO_NEWS')
      .thenEffects([{ type: 'schedule-timer', at: payments.at(HOUR) }]);
  });

  it('a status reply resolves it: processing → accepted-by-gateway, approved → approved', () => {
    unknown()
      .when(payments.statusReply({ status: 'processing', gatewayOrderId: 'gw-9' }))
      .then([{ type: 'accepted-by-gateway', gatewayOrderId: 'gw-9' }])
      .thenState({ status: 'processing', gatewayOrderId: 'gw-9' });
    unknown()
      .when(payments.statusReply({ status: 'approved', gatewayOrderId: 'gw-9' }))
      .then([{ type: 'approved', gatewayOrderId: 'gw-9' }])
      .thenState({ status: 'approved' });
  });

  it('a verified callback resolves it too', () => {
    unknown()
      .when(payments.callback('declined'))
      .then([{ type: 'declined' }]);
  });

  it('the gateway reporting status "unknown" is outcome-unknown, not declined', () => {
    payments
      .givenInputs(payments.command(sale), payments.acceptedResult())
      .when(payments.statusReply({ status: 'unknown' }))
      .then([{ type: 'outcome-unknown', alert: false }]);
  });

  it('a failed status query changes nothing', () => {
    unknown()
      .when((s) => {
        const input = payments.statusReply({ status: 'approved' })(s);
        return input.kind === 'gateway-result'
          ? {
              ...input,
              result: { ...input.result, result: { kind: 'unknown', reason: 'timeout' } },
            }
          : input;
      })
      .thenIgnored('NO_NEWS');
  });
});

describe('status polling', () => {
  it('a poll sends a status query about the operation in flight and schedules the next one', () => {
    const s = payments.givenInputs(payments.command(sale), payments.acceptedResult());
    const o = s.when(poll(4), payments.at(20_000)).thenIgnored('NO_NEWS');
    o.thenEffects([
      {
        type: 'send-gateway-request',
        request: expect.objectContaining({
          operation: 'status',
          subjectRequestId: s.state.inFlight?.requestId,
          subjectOperation: 'sale',
          gatewayOrderId: 'gw-777',
          clientOrderId: sale.paymentId,
        }),
      },
      {
        type: 'schedule-timer',
        timer: { kind: 'status-poll', attempt: 5 },
        at: payments.at(20_000 + 4_000),
      },
    ]);
  });

  it('a poll for an operation that is no longer in flight is obsolete', () => {
    payments
      .givenInputs(payments.command(sale), payments.acceptedResult(), payments.callback('approved'))
      .when(payments.timer({ kind: 'status-poll', requestId: testUuid(), attempt: 3 }))
      .thenIgnored('TIMER_OBSOLETE');
  });

  it('a status-check hint (unverified callback) asks for a poll now, changes nothing', () => {
    payments
      .givenInputs(payments.command(sale), payments.acceptedResult())
      .when({
        kind: 'status-check-hint',
        hint: {
          kind: 'status-check-hint',
          notificationId: 'h1',
          paymentId: sale.paymentId,
          reason: 'checksum-mismatch',
          receivedAt: payments.at(0),
        },
      })
      .thenIgnored('NO_NEWS')
      .thenEffects([
        { type: 'schedule-timer', timer: { kind: 'status-poll' }, at: payments.at(0) },
      ]);
  });
});

describe('refresh-status', () => {
  it('while in flight → a status query now', () => {
    const o = payments
      .givenInputs(payments.command(sale), payments.acceptedResult())
      .when(payments.command(refresh()));
    expect(o.decision.outcome).toBe('accepted');
    o.then([]).thenEffects([
      { type: 'send-gateway-request', request: expect.objectContaining({ operation: 'status' }) },
    ]);
  });

  it('with nothing in flight or no payment → rejected', () => {
    payments
      .givenInputs(payments.command(sale), payments.callback('approved'))
      .when(payments.command(refresh()))
      .thenRejected('NOTHING_TO_REFRESH');
    payments.given().when(payments.command(refresh())).thenRejected('PAYMENT_NOT_FOUND');
  });
});
