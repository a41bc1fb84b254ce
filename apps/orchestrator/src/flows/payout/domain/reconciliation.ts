/** What reconciliation expects of a payout saga's latest operation, from its state. */
import {
  moneyOperationExpectation,
  type SettledAs,
} from '../../../domain/reconciliation/flow-reconciliation';
import type { CheckTime, ExpectationOrSkip } from '../../../domain/reconciliation/reconciliation';
import type { OpenPayout, PayoutState } from './model';

/** A payout (one-step, two-step, form, v4). */
export function payoutExpectation(state: PayoutState, at: CheckTime): ExpectationOrSkip {
  return moneyOperationExpectation(state, at, settledAs);
}

function settledAs(state: OpenPayout): SettledAs {
  const operation = state.mode === 'two-step' ? 'payout-pay' : 'payout';
  switch (state.status) {
    case 'paid':
      return { as: 'approved', operation };
    case 'declined':
    case 'failed':
    case 'rejected':
    case 'expired':
      // Nothing paid; a two-step payout's check may well stand approved at the gateway.
      return {
        as: 'not-approved',
        operation,
        ...(state.mode === 'two-step' ? { benign: ['payout-check'] } : {}),
      };
    case 'checking':
    case 'registered':
    case 'reserving':
    case 'paying':
      // Not settled yet (a registered payout awaits its approval).
      return { as: 'in-flight' };
    case 'refused':
      // The daily limit refused it before its request was sent.
      return { as: 'never-sent' };
  }
}
