/** What reconciliation expects of a card-payment saga's latest operation, from its state. */
import {
  type CheckTime,
  check,
  skip,
  inFlightCheck,
  type ExpectationOrSkip,
} from '../../../domain/reconciliation/reconciliation';
import type { PaymentState } from './state';

/** A card payment (sale, preauth, rebill, account verification, and their follow-ups). */
export function cardPaymentExpectation(state: PaymentState, at: CheckTime): ExpectationOrSkip {
  if (state.status === 'initial') return skip('never-sent');
  const base = { clientOrderId: state.clientOrderId, gatewayOrderId: state.gatewayOrderId };
  const inFlight = state.inFlight;
  if (inFlight !== undefined) {
    return inFlightCheck(inFlight, { ...base, status: state.status, amount: inFlight.amount }, at);
  }
  const created = { minor: state.authorized, currency: state.currency };
  switch (state.status) {
    case 'approved':
      return check({
        ...base,
        status: state.status,
        operation: state.kind,
        outcome: 'approved',
        amount: created,
      });
    case 'authorized':
      return check({
        ...base,
        status: state.status,
        operation: 'preauth',
        outcome: 'approved',
        amount: created,
      });
    case 'verified':
      return check({
        ...base,
        status: state.status,
        operation: 'account-verification',
        outcome: 'approved',
      });
    case 'captured':
      return check({ ...base, status: state.status, operation: 'capture', outcome: 'approved' });
    case 'voided':
      return check({ ...base, status: state.status, operation: 'void', outcome: 'approved' });
    case 'returned':
    case 'partially-returned':
      return check({ ...base, status: state.status, operation: 'return', outcome: 'approved' });
    case 'declined':
    case 'failed':
      return check({
        ...base,
        status: state.status,
        operation: state.kind,
        outcome: 'not-approved',
      });
    default:
      return skip('in-flight');
  }
}
