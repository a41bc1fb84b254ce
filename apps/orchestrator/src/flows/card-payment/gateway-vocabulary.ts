import type { GatewayCallback, GatewayResult, PaymentOperation } from '@payments/contracts';
import { transactionTypes } from '../../runtime/flow-binding';
import type { PaymentInput } from './domain/inputs';

/**
 * The gateway's transaction types (a callback's `type`), normalised at the edge into the
 * operations of ours they can be about, so the domain never matches gateway vocabulary.
 * `reversal` and `cancel` undo an authorization or a charge: they can be a void or a return.
 * An unknown type names none of ours (an empty list: the callback is about something else).
 */
export const CARD_PAYMENT_OPERATIONS = transactionTypes<PaymentOperation>({
  // The gateway reports a rebill (make-rebill) as a sale on its own order.
  sale: ['sale', 'rebill'],
  rebill: ['rebill'],
  preauth: ['preauth'],
  auth: ['preauth'],
  capture: ['capture'],
  void: ['void'],
  reversal: ['void', 'return'],
  cancel: ['void', 'return'],
  return: ['return'],
  refund: ['return'],
  'account-verification': ['account-verification'],
});

export const operationsNamedBy = CARD_PAYMENT_OPERATIONS.named;

/** A verified callback as the card-payment decider's input. */
export const callbackInput: (callback: GatewayCallback) => PaymentInput =
  CARD_PAYMENT_OPERATIONS.callbackInput;

/** A gateway result as the decider's input; a status reply says which operations it names. */
export const gatewayResultInput: (result: GatewayResult) => PaymentInput =
  CARD_PAYMENT_OPERATIONS.resultInput;
