import type { TransferEvent } from '@payments/contracts';
import { inFlight as operation, withOperation } from '../../../domain/gateway-operation';
import type { OpenTransfer, TransferState } from './model';

function open(state: TransferState): OpenTransfer {
  if (state.status === 'initial') throw new Error('event for a transfer that was never requested');
  return state;
}

/** The transfer's state after one of its events (pure, total over the event union). */
export function evolveTransfer(state: TransferState, event: TransferEvent): TransferState {
  const version = event.version;
  switch (event.type) {
    case 'transfer-requested':
      return {
        status: 'transferring',
        version,
        transferId: event.transferId,
        merchant: event.merchant,
        amount: event.amount,
        clientOrderId: event.clientOrderId,
        inFlight: operation.requested(event),
      };
    case 'transfer-accepted-by-gateway': {
      const s = withOperation(open(state), version, (op) =>
        operation.accepted(op, event.serialNumber),
      );
      return event.gatewayOrderId === undefined
        ? s
        : { ...s, gatewayOrderId: event.gatewayOrderId };
    }
    case 'transfer-outcome-unknown':
      return withOperation(open(state), version, (op) =>
        operation.unknown(op, event.since, event.alert, event.concern),
      );
    case 'transfer-operation-resent':
      return withOperation(open(state), version, (op) => operation.resent(op, event.occurredAt));
    case 'transferred':
    case 'transfer-declined':
    case 'transfer-failed': {
      const { inFlight: _done, ...rest } = open(state);
      const status =
        event.type === 'transferred'
          ? 'transferred'
          : event.type === 'transfer-declined'
            ? 'declined'
            : 'failed';
      return { ...rest, status, version };
    }
    case 'transfer-command-rejected':
      return { ...state, version: Math.max(state.version, version) };
    default: {
      const never: never = event;
      throw new Error(`unhandled event ${JSON.stringify(never)}`);
    }
  }
}
