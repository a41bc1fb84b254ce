import type { GatewayCallback, GatewayResult, PaymentOperation } from '@payments/contracts';
import type { PaymentInput } from './domain/inputs';

/**
 * The gateway's transaction types (a callback's `type`), normalised at the edge into the
 * operations of ours they can be about, so the domain never matches gateway vocabulary.
 * `reversal` and `cancel` undo an authorization or a charge: they can be a void or a return.
 * An unknown type names none of ours (an empty list: the callback is about something else).
 */
const OPERATIONS_BY_TRANSACTION_TYPE: Readonly<Record<string, readonly PaymentOperation[]>> = {
  sale: ['sale'],
  preauth: ['preauth'],
  auth: ['preauth'],
  capture: ['capture'],
  void: ['void'],
  reversal: ['void', 'return'],
  cancel: ['void', 'return'],
  return: ['return'],
  refund: ['return'],
};

export function operationsNamedBy(
  transactionType: string | undefined,
): readonly PaymentOperation[] | undefined {
  if (transactionType === undefined) return undefined;
  return OPERATIONS_BY_TRANSACTION_TYPE[transactionType.toLowerCase()] ?? [];
}

/** A verified callback as the card-payment decider's input. */
export function callbackInput(callback: GatewayCallback): PaymentInput {
  const about = operationsNamedBy(callback.report.transactionType);
  return about === undefined
    ? { kind: 'callback', callback }
    : { kind: 'callback', callback, about };
}

/** A gateway result as the decider's input; a status reply says which operations it names. */
export function gatewayResultInput(result: GatewayResult): PaymentInput {
  if (result.operation !== 'status' || result.result.kind !== 'accepted')
    return { kind: 'gateway-result', result };
  const about = operationsNamedBy(result.result.report?.transactionType);
  return about === undefined
    ? { kind: 'gateway-result', result }
    : { kind: 'gateway-result', result, about };
}
