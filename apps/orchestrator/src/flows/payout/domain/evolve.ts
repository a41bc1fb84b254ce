import type { PayoutEvent } from '@payments/contracts';
import { unhandled } from '../../../domain/decision';
import { DomainError } from '../../../domain/domain-error';
import { opened, withLifecycleEvent } from '../../../domain/gateway-operation/single-operation';
import {
  inFlight as operation,
  withSettledSerial,
} from '../../../domain/gateway-operation/gateway-operation';
import { decidedOf, reopenedOf } from '../../../domain/gateway-operation/decided-operation';
import { type OpenPayout, opensPayoutOrder, type PayoutInFlight, type PayoutState } from './model';
import { utcDay } from '../../payout-budget/domain';

/** Without the operation in flight (its outcome is known); its serial joins the order's. */
function settled(state: OpenPayout): OpenPayout {
  const { inFlight: done, ...rest } = state;
  return { ...rest, ...withSettledSerial(state, done) };
}

/** The payout's state after one of its events (pure, total over the event union). */
export function evolvePayout(state: PayoutState, event: PayoutEvent): PayoutState {
  const version = event.version;
  switch (event.type) {
    case 'payout-requested': {
      const inFlight: PayoutInFlight = operation.requested(event);
      if (opensPayoutOrder(event.operation)) {
        if (event.merchant === undefined) {
          throw new DomainError(
            'INCOMPLETE_EVENT',
            `${event.operation} requested without merchant`,
          );
        }
        const twoStep = event.operation === 'payout-check';
        const opened = {
          version,
          payoutId: event.payoutId,
          merchant: event.merchant,
          amount: event.amount,
          clientOrderId: event.clientOrderId,
          opening: event.operation,
          inFlight,
        };
        // A one-step payout reserved its amount in the transaction that requested it (decide.ts):
        // a refusal follows in that same transaction as `payout-refused`.
        return twoStep
          ? { ...opened, status: 'checking', mode: 'two-step' }
          : {
              ...opened,
              status: 'paying',
              mode: 'one-step',
              reserved: true,
              budgetDay: utcDay(event.occurredAt),
            };
      }
      return { ...opened(state, 'payout'), status: 'paying', version, reserved: true, inFlight };
    }
    case 'payout-accepted-by-gateway':
    case 'payout-action-required':
    case 'payout-outcome-unknown':
    case 'payout-operation-resent':
      return withLifecycleEvent(opened(state, 'payout'), event);
    case 'payout-registered':
      return {
        ...settled(opened(state, 'payout')),
        status: 'registered',
        version,
        approvalDeadline: event.approvalDeadline,
        ...(event.gatewayOrderId === undefined ? {} : { gatewayOrderId: event.gatewayOrderId }),
      };
    case 'payout-approval-recorded':
      return {
        ...opened(state, 'payout'),
        version,
        recordedApproval: {
          commandId: event.commandId,
          by: event.approvedBy,
          ...(event.approverRole === undefined ? {} : { role: event.approverRole }),
        },
      };
    case 'payout-approved':
      return {
        ...opened(state, 'payout'),
        status: 'reserving',
        version,
        approval: {
          commandId: event.commandId,
          by: event.approvedBy,
          day: utcDay(event.occurredAt),
        },
        budgetDay: utcDay(event.occurredAt),
      };
    case 'payout-approval-refused': {
      // Back to awaiting approval (another approval may come, e.g. the next day).
      const { approval: _a, budgetDay: _d, ...rest } = opened(state, 'payout');
      return { ...rest, status: 'registered', version };
    }
    case 'payout-refused': {
      const { reserved: _r, ...rest } = settled(opened(state, 'payout'));
      return { ...rest, status: 'refused', version };
    }
    case 'payout-rejected':
      return { ...opened(state, 'payout'), status: 'rejected', version };
    case 'payout-expired':
      return { ...opened(state, 'payout'), status: 'expired', version };
    case 'paid-out':
      return { ...settled(opened(state, 'payout')), status: 'paid', version };
    case 'payout-declined':
    case 'payout-failed': {
      const { reserved: _r, ...rest } = settled(opened(state, 'payout'));
      return { ...rest, status: event.type === 'payout-declined' ? 'declined' : 'failed', version };
    }
    case 'payout-settled-by-decision': {
      // A decision of two people (a case): "done" as the gateway's success would be, "not done"
      // as a failure (nothing paid: the reservation was released by the decision's effects).
      const open = opened(state, 'payout');
      const op = open.inFlight;
      if (op === undefined) throw new DomainError('NO_OPERATION_IN_FLIGHT', event.type);
      const decided = decidedOf(op, event);
      if (event.decision === 'not-done') {
        const { reserved: _r, ...rest } = settled(open);
        return { ...rest, status: 'failed', version, decided };
      }
      return {
        ...settled(open),
        status: op.operation === 'payout-check' ? 'registered' : 'paid',
        version,
        decided,
      };
    }
    case 'payout-case-reopened':
      return reopenedOf({ ...opened(state, 'payout'), version });
    case 'payout-command-rejected':
      return { ...state, version: Math.max(state.version, version) };
    default:
      return unhandled(event, 'event');
  }
}

export function foldPayout(state: PayoutState, events: readonly PayoutEvent[]): PayoutState {
  return events.reduce(evolvePayout, state);
}
