import type { PanEligibilityEvent } from '@payments/contracts';
import { inFlight as operation, withOperation } from '../../../domain/gateway-operation';
import type { CheckState, OpenCheck } from './model';

function open(state: CheckState): OpenCheck {
  if (state.status === 'initial') throw new Error('event for a check that was never requested');
  return state;
}

/** The check's state after one of its events (pure, total over the event union). */
export function evolveCheck(state: CheckState, event: PanEligibilityEvent): CheckState {
  const version = event.version;
  switch (event.type) {
    case 'pan-eligibility-requested':
      return {
        status: 'checking',
        version,
        checkId: event.checkId,
        merchant: event.merchant,
        clientOrderId: event.clientOrderId,
        inFlight: operation.requested(event),
      };
    case 'pan-eligibility-accepted-by-gateway': {
      const s = withOperation(open(state), version, (op) =>
        operation.accepted(op, event.serialNumber),
      );
      return event.gatewayOrderId === undefined
        ? s
        : { ...s, gatewayOrderId: event.gatewayOrderId };
    }
    case 'pan-eligibility-outcome-unknown':
      return withOperation(open(state), version, (op) =>
        operation.unknown(op, event.since, event.alert, event.concern),
      );
    case 'pan-eligibility-operation-resent':
      return withOperation(open(state), version, (op) => operation.resent(op, event.occurredAt));
    case 'pan-eligibility-answered':
    case 'pan-eligibility-failed': {
      const { inFlight: _done, ...rest } = open(state);
      const status =
        event.type === 'pan-eligibility-failed'
          ? 'failed'
          : event.eligible
            ? 'eligible'
            : 'not-eligible';
      return { ...rest, status, version };
    }
    case 'pan-eligibility-command-rejected':
      return { ...state, version: Math.max(state.version, version) };
    default: {
      const never: never = event;
      throw new Error(`unhandled event ${JSON.stringify(never)}`);
    }
  }
}
