import { nextPollDelay } from '../shared/polling';
import type { Decision, DecisionContext } from './decision';
import { statusRequest } from './decide-gateway';
import { accepted, addMs, ignored, msBetween, policyOf } from './drafts';
import type { Timer } from './inputs';
import type { PaymentState } from './state';

const HOLD_RECHECK_MS = 5 * 60 * 1000;

export function decideTimer(timer: Timer, state: PaymentState, ctx: DecisionContext): Decision {
  switch (timer.kind) {
    case 'status-poll': {
      const op = state.inFlight;
      if (!op || op.requestId !== timer.requestId) return ignored('TIMER_OBSOLETE');
      const elapsed = msBetween(op.requestedAt, ctx.now);
      return ignored('NO_NEWS', [
        { type: 'send-gateway-request', request: statusRequest(state, op, ctx) },
        {
          type: 'schedule-timer',
          timer: { kind: 'status-poll', requestId: op.requestId, attempt: timer.attempt + 1 },
          at: addMs(ctx.now, nextPollDelay(timer.attempt, elapsed)),
        },
      ]);
    }
    case 'unknown-alert': {
      const op = state.inFlight;
      if (!op || op.requestId !== timer.requestId || op.stage !== 'outcome-unknown' || op.alerted) {
        return ignored('TIMER_OBSOLETE');
      }
      const since = op.unknownSince ?? op.requestedAt;
      const remaining = policyOf(ctx).unknownAlertAfterMs - msBetween(since, ctx.now);
      if (remaining > 0) {
        return ignored('NO_NEWS', [
          { type: 'schedule-timer', timer, at: addMs(ctx.now, remaining) },
        ]);
      }
      // Raise the alert, stay unknown: an hour of silence is not a decline.
      return accepted(
        state,
        state.paymentId ?? '',
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
      if (state.inFlight) {
        // A capture, void or return is under way; look again once it has settled.
        return ignored('NO_NEWS', [
          { type: 'schedule-timer', timer, at: addMs(ctx.now, HOLD_RECHECK_MS) },
        ]);
      }
      const commandId = ctx.ids.next();
      const amount = { minor: state.authorized, currency: state.currency ?? 'XXX' };
      const expired = { type: 'hold-expired' as const, commandId, action: timer.action, amount };
      if (
        timer.action === 'report' ||
        state.gatewayOrderId === undefined ||
        state.merchant === undefined ||
        state.clientOrderId === undefined
      ) {
        return accepted(state, state.paymentId ?? '', ctx, [{ ...expired, action: 'report' }], []);
      }
      const requestId = ctx.ids.next();
      return accepted(
        state,
        state.paymentId ?? '',
        ctx,
        [
          expired,
          {
            type: 'operation-requested',
            commandId,
            operation: 'void',
            requestId,
            amount,
            clientOrderId: state.clientOrderId,
          },
        ],
        [
          {
            type: 'send-gateway-request',
            request: {
              operation: 'void',
              requestId,
              paymentId: state.paymentId ?? '',
              merchant: state.merchant,
              clientOrderId: state.clientOrderId,
              attempt: 1,
              requestedAt: ctx.now,
              gatewayOrderId: state.gatewayOrderId,
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
