import { nextPollDelay } from '../../../domain/polling';
import type { Decision, DecisionContext } from './decision';
import { inFlightOf, statusRequest } from './decide-gateway';
import { accepted, addMs, ignored, msBetween, policyOf } from './drafts';
import type { Timer } from './inputs';
import type { PaymentState } from './state';

const HOLD_RECHECK_MS = 5 * 60 * 1000;

export function decideTimer(timer: Timer, state: PaymentState, ctx: DecisionContext): Decision {
  switch (timer.kind) {
    case 'status-poll': {
      const open = inFlightOf(state);
      if (!open || open[1].requestId !== timer.requestId) return ignored('TIMER_OBSOLETE');
      const [payment, op] = open;
      const elapsed = msBetween(op.requestedAt, ctx.now);
      return ignored('NO_NEWS', [
        { type: 'send-gateway-request', request: statusRequest(payment, op, ctx) },
        {
          type: 'schedule-timer',
          timer: { kind: 'status-poll', requestId: op.requestId, attempt: timer.attempt + 1 },
          at: addMs(ctx.now, nextPollDelay(timer.attempt, elapsed)),
        },
      ]);
    }
    case 'unknown-alert': {
      const open = inFlightOf(state);
      if (
        !open ||
        open[1].requestId !== timer.requestId ||
        open[1].stage !== 'outcome-unknown' ||
        open[1].alerted
      ) {
        return ignored('TIMER_OBSOLETE');
      }
      const [payment, op] = open;
      const since = op.unknownSince ?? op.requestedAt;
      const remaining = policyOf(ctx).unknownAlertAfterMs - msBetween(since, ctx.now);
      if (remaining > 0) {
        return ignored('NO_NEWS', [
          { type: 'schedule-timer', timer, at: addMs(ctx.now, remaining) },
        ]);
      }
      // Raise the alert, stay unknown: an hour of silence is not a decline.
      return accepted(
        payment,
        payment.paymentId,
        ctx,
        [
          {
            type: 'outcome-unknown',
            commandId: op.commandId,
            operation: op.operation,
            requestId: op.requestId,
            since,
            alert: true,
          },
        ],
        [],
      );
    }
    case 'hold-expiry': {
      if (state.status !== 'authorized' || state.holdExpired) return ignored('TIMER_OBSOLETE');
      const payment = state;
      if (payment.inFlight) {
        // A capture, void or return is under way; look again once it has settled.
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
              requestId,
              paymentId: payment.paymentId,
              merchant: payment.merchant,
              clientOrderId: payment.clientOrderId,
              attempt: 1,
              requestedAt: ctx.now,
              gatewayOrderId,
              comment: 'authorization hold expired',
            },
          },
        ],
      );
    }
    default: {
      const never: never = timer;
      throw new Error(`unhandled timer ${JSON.stringify(never)}`);
    }
  }
}
