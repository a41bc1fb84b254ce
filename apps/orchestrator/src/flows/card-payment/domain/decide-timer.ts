import { unhandled } from '../../../domain/decision';
import { decideCardRefAlert, decideCardRefDeadline } from './card-reference';
import { decideMethodDeadline } from './decide-payer-flows';
import { decideSerialTimer } from './decide-serial';
import type { Decision, DecisionContext } from './decision';
import { decideOperation } from './decide-gateway';
import { accepted, addMs, firstSend, ignored } from './drafts';
import type { Timer } from './inputs';
import type { PaymentState } from './state';

const HOLD_RECHECK_MS = 5 * 60 * 1000;

export function decideTimer(timer: Timer, state: PaymentState, ctx: DecisionContext): Decision {
  switch (timer.kind) {
    case 'status-poll':
    case 'unknown-alert':
      return decideOperation({ kind: 'timer-fired', timer }, state, ctx);
    case 'result-deadline':
      // The card-reference request's, or the payment operation's in flight.
      return (
        decideCardRefDeadline(timer, state, ctx) ??
        decideOperation({ kind: 'timer-fired', timer }, state, ctx)
      );
    case 'hold-expiry': {
      if (state.status !== 'authorized' || state.holdExpired) return ignored('TIMER_OBSOLETE');
      const payment = state;
      if (payment.inFlight || payment.serialPending) {
        // A capture, void or return is under way (or the sale's serial is still asked for, which
        // holds follow-ups): look again once it has settled.
        return ignored('NO_NEWS', [
          { type: 'schedule-timer', timer, at: addMs(ctx.now, HOLD_RECHECK_MS) },
        ]);
      }
      const commandId = ctx.ids.next();
      const amount = { minor: payment.authorized, currency: payment.currency };
      const expired = { type: 'hold-expired' as const, commandId, action: timer.action, amount };
      const gatewayOrderId = payment.gatewayOrderId;
      if (timer.action === 'report' || gatewayOrderId === undefined) {
        return accepted(payment, payment.paymentId, ctx, [{ ...expired, action: 'report' }], []);
      }
      const requestId = ctx.ids.next();
      return accepted(
        payment,
        payment.paymentId,
        ctx,
        [
          expired,
          {
            type: 'operation-requested',
            commandId,
            operation: 'void',
            requestId,
            amount,
            clientOrderId: payment.clientOrderId,
          },
        ],
        [
          {
            type: 'send-gateway-request',
            request: {
              operation: 'void',
              ...firstSend(payment, requestId, ctx),
              gatewayOrderId,
              comment: 'authorization hold expired',
            },
          },
        ],
      );
    }
    case 'threeds-method-deadline':
      return decideMethodDeadline(timer, state, ctx);
    case 'card-ref-alert':
      return decideCardRefAlert(timer, state, ctx);
    case 'serial-query':
      return decideSerialTimer(timer, state, ctx);
    default:
      return unhandled(timer, 'timer');
  }
}
