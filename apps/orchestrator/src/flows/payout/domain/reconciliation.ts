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

/**
 * The operation that moved the money, named as the saga named it (its `payout-requested`: the
 * two-step payout-pay, a one-step `payout`, `payout-v4` or `payout-form`) — as every check's
 * expectation names it (the request checks from the history, an in-flight check from the request)
 * and as the day's journal line does, so the close report's line finds its order check
 * (day-tie-out.service.ts `checkOf`). The gateway's name for it (`payout` for all three one-step
 * kinds) is read through the flow's vocabulary (`named`, gateway-vocabulary.ts) by the verdict.
 */
function settledAs(state: OpenPayout): SettledAs {
  const operation =
    state.mode === 'two-step'
      ? 'payout-pay'
      : state.opening === undefined || state.opening === 'payout-check'
        ? 'payout'
        : state.opening;
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
