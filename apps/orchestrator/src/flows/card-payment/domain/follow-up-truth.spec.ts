/**
 * Truth about money (DESIGN.md): only a gateway answer about that very operation
 * moves a payment. A payer's browser return, a callback naming no operation, and any callback
 * about a capture, void or return (whose checksum binds neither the operation nor the amount, so a
 * genuine control can be replayed) only prompt a status query; a status reply about another
 * operation of the order (the preauth, the sale) resolves nothing.
 */
import type { GatewayCallback } from '@payments/contracts';
import {
  captureCommand,
  returnCommand,
  saleCommand,
  voidCommand,
} from '@payments/contracts/testing';
import * as payments from '../../../../test/kits/card-payment.kit';
import { callbackInput } from '../gateway-vocabulary';
import type { PaymentInput } from './inputs';
import type { PaymentState } from './state';

/** The payer's browser coming back through the return URL (control valid for the order). */
const browserReturn =
  (status: GatewayCallback['report']['status']) =>
  (state: PaymentState): PaymentInput =>
    callbackInput({
      kind: 'callback',
      notificationId: `browser-${status}`,
      paymentId: state.status === 'initial' ? '' : state.paymentId,
      clientOrderId: state.status === 'initial' ? '' : state.clientOrderId,
      source: 'browser-return',
      report: { status, gatewayOrderId: 'gw-777' },
      receivedAt: payments.T0,
    });

const statusQueryNow = [
  { type: 'schedule-timer', timer: { kind: 'status-poll', attempt: 1 }, at: payments.T0 },
] as const;

describe('follow-ups are moved only by an answer about that very operation', () => {
  const inFlight = {
    capture: () =>
      payments.authorized().and(payments.command(captureCommand())).and(payments.acceptedResult()),
    void: () =>
      payments.authorized().and(payments.command(voidCommand())).and(payments.acceptedResult()),
    return: () =>
      payments
        .approvedSale()
        .and(payments.command(returnCommand({ amount: { minor: 3_000, currency: 'EUR' } })))
        .and(payments.acceptedResult()),
  };

  for (const [operation, start] of Object.entries(inFlight)) {
    for (const status of ['approved', 'declined'] as const) {
      it(`${operation} in flight + a browser return saying ${status} → no change, a status query`, () => {
        const s = start()
          .when(browserReturn(status))
          .thenIgnored('HINT_ONLY')
          .thenEffects([...statusQueryNow]);
        expect(s.after.inFlight?.operation).toBe(operation);
      });
    }

    it(`${operation} in flight + a callback naming no operation → no change, a status query`, () => {
      start()
        .when(payments.callback('approved', { transactionType: undefined }))
        .thenIgnored('HINT_ONLY')
        .thenEffects([...statusQueryNow]);
    });

    it(`${operation} in flight + a genuine control replayed as a typed server callback → no change`, () => {
      const type = operation === 'return' ? 'reversal' : operation;
      const s = start()
        .when(payments.callback('approved', { transactionType: type }))
        .thenIgnored('HINT_ONLY')
        .thenEffects([...statusQueryNow]);
      expect(s.after.inFlight?.operation).toBe(operation);
    });
  }

  it('a status reply describing the preauth resolves no capture or void; the matched one does', () => {
    const capture = inFlight.capture();
    capture
      .when(payments.statusReply({ status: 'approved', transactionType: 'preauth' }))
      .thenIgnored('NOT_ABOUT_THIS_OPERATION');
    capture
      .when(payments.statusReply({ status: 'approved' }))
      .thenIgnored('NOT_ABOUT_THIS_OPERATION');
    // Of the capture's type but not naming its request: a second capture of the order could say
    // the same, so it decides nothing.
    capture
      .when(payments.statusReply({ status: 'declined', transactionType: 'capture' }))
      .thenIgnored('NOT_ABOUT_THIS_OPERATION');
    capture
      .when(payments.answer('declined'))
      .then([{ type: 'declined', operation: 'capture' }])
      .thenState({ status: 'authorized', captured: 0 });
    inFlight
      .void()
      .when(payments.statusReply({ status: 'approved', transactionType: 'preauth' }))
      .thenIgnored('NOT_ABOUT_THIS_OPERATION');
  });

  it('an unknown capture is not resolved by the order status describing the preauth', () => {
    payments
      .authorized()
      .and(payments.command(captureCommand()))
      .and(payments.result({ kind: 'unknown', reason: 'reply lost' }))
      .when(payments.statusReply({ status: 'approved', transactionType: 'preauth' }))
      // No captured: within the safe window it is only evidence that the capture never arrived.
      .thenIgnored('NO_NEWS')
      .thenEffects([]);
  });

  it('a server callback naming another orderid than the payment order is ignored', () => {
    payments
      .givenInputs(payments.command(saleCommand()), payments.acceptedResult('gw-777'))
      .when(payments.callback('declined', { gatewayOrderId: '999999' }))
      .thenIgnored('UNKNOWN_ORDER');
    payments
      .givenInputs(payments.command(saleCommand()), payments.acceptedResult('gw-777'))
      .when(payments.callback('declined'))
      .then([{ type: 'declined' }]);
  });

  it('a browser return never finalises the sale itself either', () => {
    payments
      .givenInputs(payments.command(saleCommand()), payments.acceptedResult())
      .when(browserReturn('approved'))
      .thenIgnored('HINT_ONLY')
      .thenEffects([...statusQueryNow]);
  });
});
