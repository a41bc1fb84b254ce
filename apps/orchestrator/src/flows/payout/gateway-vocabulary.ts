import type { PayoutOperation } from '@payments/contracts';
import { transactionTypes } from '../../runtime/flow-binding';

/**
 * The gateway's transaction types normalised into our payout operations at the edge: the
 * sandbox and the gateway report payout-check as `payout-check` and an executed payout (the
 * two-step payout-pay, or a one-step v2 / v4 payout) as `payout`. Any other type names none of
 * ours (empty list).
 */
export const PAYOUT_OPERATIONS = transactionTypes<PayoutOperation>({
  'payout-check': ['payout-check'],
  payout: ['payout-pay', 'payout', 'payout-v4', 'payout-form'],
  'payout-pay': ['payout-pay'],
});
