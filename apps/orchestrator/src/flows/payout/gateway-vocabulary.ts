import type { GatewayCallback, GatewayResult, PayoutOperation } from '@payments/contracts';
import type { PayoutInput } from './domain';

/**
 * The gateway's transaction types normalised into our payout operations at the edge: the
 * sandbox and the gateway report payout-check as `payout-check` and the executed payout
 * (payout-pay) as `payout`. Any other type names none of ours (empty list).
 */
const OPERATIONS_BY_TRANSACTION_TYPE: Readonly<Record<string, readonly PayoutOperation[]>> = {
  'payout-check': ['payout-check'],
  payout: ['payout-pay'],
  'payout-pay': ['payout-pay'],
};

export function payoutOperationsNamedBy(
  transactionType: string | undefined,
): readonly PayoutOperation[] | undefined {
  if (transactionType === undefined) return undefined;
  return OPERATIONS_BY_TRANSACTION_TYPE[transactionType.toLowerCase()] ?? [];
}

export function payoutCallbackInput(callback: GatewayCallback): PayoutInput {
  const about = payoutOperationsNamedBy(callback.report.transactionType);
  return about === undefined
    ? { kind: 'callback', callback }
    : { kind: 'callback', callback, about };
}

export function payoutResultInput(result: GatewayResult): PayoutInput {
  if (result.operation !== 'status' || result.result.kind !== 'accepted')
    return { kind: 'gateway-result', result };
  const about = payoutOperationsNamedBy(result.result.report?.transactionType);
  return about === undefined
    ? { kind: 'gateway-result', result }
    : { kind: 'gateway-result', result, about };
}
