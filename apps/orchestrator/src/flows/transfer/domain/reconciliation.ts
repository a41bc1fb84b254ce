/** What reconciliation expects of a transfer saga's latest operation, from its state. */
import {
  type CheckTime,
  check,
  skip,
  inFlightCheck,
  type ExpectationOrSkip,
} from '../../../domain/reconciliation';
import type { TransferState } from './model';

/** A transfer (transfer, transfer-by-ref): one operation, reported as `transfer` by the gateway. */
export function transferExpectation(state: TransferState, at: CheckTime): ExpectationOrSkip {
  if (state.status === 'initial') return skip('never-sent');
  const base = {
    status: state.status,
    clientOrderId: state.clientOrderId,
    gatewayOrderId: state.gatewayOrderId,
  };
  if (state.inFlight !== undefined) {
    return inFlightCheck(state.inFlight, { ...base, amount: state.amount }, at);
  }
  switch (state.status) {
    case 'transferred':
      return check({ ...base, operation: 'transfer', outcome: 'approved', amount: state.amount });
    case 'declined':
    case 'failed':
      return check({ ...base, operation: 'transfer', outcome: 'not-approved' });
    case 'transferring':
      return skip('in-flight');
    case 'refused':
      // The daily limit refused it before its request was sent.
      return skip('never-sent');
  }
}
