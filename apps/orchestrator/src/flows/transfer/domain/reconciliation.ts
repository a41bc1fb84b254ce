/** What reconciliation expects of a transfer saga's latest operation, from its state. */
import {
  moneyOperationExpectation,
  type SettledAs,
} from '../../../domain/reconciliation/flow-reconciliation';
import type { CheckTime, ExpectationOrSkip } from '../../../domain/reconciliation/reconciliation';
import type { OpenTransfer, TransferState } from './model';

/** A transfer (transfer, transfer-by-ref): one operation, reported as `transfer` by the gateway. */
export function transferExpectation(state: TransferState, at: CheckTime): ExpectationOrSkip {
  return moneyOperationExpectation(state, at, settledAs);
}

function settledAs(state: OpenTransfer): SettledAs {
  switch (state.status) {
    case 'transferred':
      return { as: 'approved', operation: 'transfer' };
    case 'declined':
    case 'failed':
      return { as: 'not-approved', operation: 'transfer' };
    case 'transferring':
      return { as: 'in-flight' };
    case 'refused':
      // The daily limit refused it before its request was sent.
      return { as: 'never-sent' };
  }
}
