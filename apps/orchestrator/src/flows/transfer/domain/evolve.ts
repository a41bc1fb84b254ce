import type { TransferEvent } from '@payments/contracts';
import { unhandled } from '../../../domain/decision';
import {
  opened,
  requestedState,
  settledAt,
  withLifecycleEvent,
} from '../../../domain/gateway-operation/single-operation';
import { decidedOf, reopenedOf } from '../../../domain/gateway-operation/decided-operation';
import { utcDay } from '../../payout-budget/domain';
import type { TransferState } from './model';

const ENDED = {
  'transfer-declined': 'declined',
  'transfer-failed': 'failed',
  'transfer-refused': 'refused',
} as const;

/** The transfer's state after one of its events (pure, total over the event union). */
export function evolveTransfer(state: TransferState, event: TransferEvent): TransferState {
  const version = event.version;
  switch (event.type) {
    case 'transfer-requested':
      return {
        ...requestedState('transferring', event),
        transferId: event.transferId,
        amount: event.amount,
        // Reserved in the transaction that requested it; a refusal follows in it as `transfer-refused`.
        reserved: true,
        budgetDay: utcDay(event.occurredAt),
      };
    case 'transfer-accepted-by-gateway':
    case 'transfer-outcome-unknown':
    case 'transfer-operation-resent':
      return withLifecycleEvent(opened(state, 'transfer'), event);
    case 'transferred':
      return settledAt(opened(state, 'transfer'), 'transferred', version);
    case 'transfer-declined':
    case 'transfer-failed':
    case 'transfer-refused': {
      // Nothing moved: the reservation is released (declined, failed) or was never granted.
      const { reserved: _r, ...rest } = opened(state, 'transfer');
      return settledAt(rest, ENDED[event.type], version);
    }
    case 'transfer-settled-by-decision': {
      // A decision of two people (a case): "done" as transferred, "not done" as failed (its
      // reservation released by the decision's effects).
      const open = opened(state, 'transfer');
      if (open.inFlight === undefined) throw new Error(`${event.type} with nothing in flight`);
      const decided = decidedOf(open.inFlight, event);
      if (event.decision === 'done') return { ...settledAt(open, 'transferred', version), decided };
      const { reserved: _r, ...rest } = open;
      return { ...settledAt(rest, 'failed', version), decided };
    }
    case 'transfer-case-reopened':
      return reopenedOf({ ...opened(state, 'transfer'), version });
    case 'transfer-command-rejected':
      return { ...state, version: Math.max(state.version, version) };
    default:
      return unhandled(event, 'event');
  }
}
