/** What reconciliation expects of a payout saga's latest operation, from its state. */
import {
  type CheckTime,
  check,
  skip,
  inFlightCheck,
  type ExpectationOrSkip,
} from '../../../domain/reconciliation';
import type { PayoutState } from './model';

/** A payout (one-step, two-step, form, v4). */
export function payoutExpectation(state: PayoutState, at: CheckTime): ExpectationOrSkip {
  if (state.status === 'initial') return skip('never-sent');
  const base = {
    status: state.status,
    clientOrderId: state.clientOrderId,
    gatewayOrderId: state.gatewayOrderId,
  };
  const paying = state.mode === 'two-step' ? 'payout-pay' : 'payout';
  const inFlight = state.inFlight;
  if (inFlight !== undefined) {
    return inFlightCheck(inFlight, { ...base, amount: state.amount }, at);
  }
  switch (state.status) {
    case 'paid':
      return check({ ...base, operation: paying, outcome: 'approved', amount: state.amount });
    case 'declined':
    case 'failed':
    case 'rejected':
    case 'expired':
      // Nothing paid; a two-step payout's check may well stand approved at the gateway.
      return check({
        ...base,
        operation: paying,
        outcome: 'not-approved',
        ...(state.mode === 'two-step' ? { benign: ['payout-check'] } : {}),
      });
    case 'checking':
    case 'registered':
    case 'reserving':
    case 'paying':
      // Not settled yet (a registered payout awaits its approval).
      return skip('in-flight');
    case 'refused':
      // The daily limit refused it before its request was sent.
      return skip('never-sent');
  }
}
